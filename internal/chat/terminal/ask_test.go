package terminal

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/store"
)

// TestChatAsk: in packs chat, a tool granted ask_person asks the person
// at the terminal and gets the answer typed there.
func TestChatAsk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	home, err := dist.OpenHome(ctx, dir, dist.HomeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	askPack, _ := filepath.Abs(filepath.Join("..", "..", "mcpserver", "testdata", "ask-pack"))
	st, err := home.Stage(ctx, askPack, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit(ctx, []capability.Name{capability.AskPerson}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, home.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutGrant(ctx, "ask-pack", "", capability.UserGrant{Capability: capability.AskPerson, Scope: capability.ScopePersistent}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e, err := openEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("enable_tools", `{"pack_id":"ask-pack"}`)}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("ask-pack__ask", `{"message": "Deploy to which region?", "schema": {"type": "object", "properties": {"region": {"type": "string", "enum": ["eu", "us"]}}, "required": ["region"]}}`)}},
		llmtest.Turn{Text: "Deployed."},
	)
	defer srv.Close()
	s, err := chat.Open(ctx, e.deps, chat.Options{Attach: []string{"ask-pack"}})
	if err != nil {
		t.Fatal(err)
	}
	// enable_tools is approved by the attach; the tool's card asks.
	in := strings.Join([]string{"deploy", "r", "y", "eu", "/exit"}, "\n") + "\n"
	var out bytes.Buffer
	if err := Run(ctx, s, Options{In: strings.NewReader(in), Out: &out, Provider: openAI(t, srv)}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "── question from ask-pack__ask") || !strings.Contains(got, "region (one of eu, us, required): ") {
		t.Fatalf("the transcript lacks the question:\n%s", got)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	if got := last[len(last)-1].Content; !strings.Contains(got, `"action":"accept"`) || !strings.Contains(got, `"region":"eu"`) {
		t.Fatalf("the model saw %q, want the answer typed at the terminal\n%s", got, out.String())
	}
}
