package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestFirstChatWithBuiltins is the README's first chat: a fresh home,
// nothing installed by hand, current-time and session-file-system
// attached (so enabling their tools is approved by the attach), every
// other call approved by --yes.
func TestFirstChatWithBuiltins(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{
			{Name: "enable_tools", Arguments: `{"pack_id":"current-time"}`},
			{Name: "enable_tools", Arguments: `{"pack_id":"session-file-system"}`},
		}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "current-time__get_current_time", Arguments: `{"timezone":"Europe/Paris","format":"human"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "session-file-system__write_file", Arguments: `{"path":"/notes/today.md","content":"Met Ada at the café."}`}}},
		llmtest.Turn{Text: "Noted in /notes/today.md."},
	)
	defer srv.Close()
	r := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "fake",
		"--attach", "current-time", "--attach", "session-file-system",
		"--message", "Note that I met Ada today, with the time.", "--yes").mustCode(t, exitOK)
	want := `tool enable_tools {"pack_id":"current-time"}: approved by attach: ok
tool enable_tools {"pack_id":"session-file-system"}: approved by attach: ok
tool current-time__get_current_time {"timezone":"Europe/Paris","format":"human"}: approved by --yes: ok
tool session-file-system__write_file {"path":"/notes/today.md","content":"Met Ada at the café."}: approved by --yes: ok
artifact notes/today.md text/markdown 21 bytes
Noted in /notes/today.md.
`
	if r.stdout != want {
		t.Errorf("got:\n%s\nwant:\n%s", r.stdout, want)
	}
	var found []string
	filepath.WalkDir(filepath.Join(home, "workspaces"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "today.md" {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("today.md in the workspaces: %v", found)
	}
	if b, _ := os.ReadFile(found[0]); string(b) != "Met Ada at the café." {
		t.Errorf("today.md = %q", b)
	}
	// The time came from the guest, in Paris.
	msgs := srv.Requests()[2].Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, `"timezone":"Europe/Paris"`) {
		t.Errorf("get_current_time result %s", got)
	}
	if sys := srv.Requests()[0].System; !strings.Contains(sys, `<pack_instructions pack_id="session-file-system">`) {
		t.Errorf("system prompt lacks session-file-system's instructions:\n%s", sys)
	}
	// packs list shows them, built in.
	l := withHome(t, home, "list").mustCode(t, exitOK)
	if !strings.Contains(l.stdout, "builtin:current-time") || !strings.Contains(l.stdout, "builtin:session-file-system") {
		t.Errorf("list:\n%s", l.stdout)
	}
}

// packs update leaves the built-ins to the binary: no fetch of
// "builtin:NAME", no failure.
func TestUpdateBuiltins(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "run", "test-math", "add", "--yes", "--input", `{"a":1,"b":2}`).mustCode(t, exitOK)
	r := withHome(t, home, "update", "--yes").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "test-math is built in") {
		t.Errorf("update:\n%s\n%s", r.stdout, r.stderr)
	}
	withHome(t, home, "update", "web-fetch").mustCode(t, exitOK)
}

// packs mcp serves every installed pack it can: the built-ins that work,
// not the coming_soon ones (research, sandbox), which cannot be attached.
func TestServedPacksLeaveComingSoonOut(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: filepath.Join(t.TempDir(), "home"), Builtins: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got, err := servedPacks(ctx, a, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"current-time", "noop", "session-file-system", "stateless-todo-list", "test-math", "test-weather", "web-fetch"}
	if !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
}
