package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestChatWorkspace: packs chat --workspace DIR works in DIR: the note tool
// writes its note there (issue 12, defect 5: the incident-triage demo
// needs the person's logs in the chat's workspace). A resumed chat keeps
// its own workspace, so --workspace with --chat is a usage error.
func TestChatWorkspace(t *testing.T) {
	home := installedNotes(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "enable_tools", Arguments: `{"pack_id":"notes"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__note", Arguments: `{}`}}},
		llmtest.Turn{Text: "Written."},
	)
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	ws := filepath.Join(t.TempDir(), "logs")
	withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--attach", "notes", "--workspace", ws, "--message", "write", "--yes").mustCode(t, exitOK)
	if b, err := os.ReadFile(filepath.Join(ws, "note.md")); err != nil || string(b) != "# Note\n" {
		t.Errorf("note.md in --workspace: got %q, %v", b, err)
	}
	withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--chat", "chat_00", "--workspace", ws, "--message", "x").mustCode(t, exitUsage)
}
