package chat

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	builtinpacks "github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// builtinHarness is a harness with every built-in pack installed, as
// internal/builtin writes them, with nothing granted.
func builtinHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, nil)
	dir := t.TempDir()
	for _, name := range builtinpacks.Names() {
		p, err := builtinpacks.Write(name, dir)
		if err != nil {
			t.Fatal(err)
		}
		h.install(p)
	}
	return h
}

const fsPromptMark = "You have a file system for this session"

// A first chat with the built-ins: the person attaches current-time and
// session-file-system; the model asks the time and writes and reads a file
// in the chat's workspace. Only the attached packs' system-prompt additions
// are in the metadata stage.
func TestBuiltinsInChat(t *testing.T) {
	h := builtinHarness(t)
	srv := llmtest.NewServer(
		calls(call(ToolEnableTools, `{"pack_id":"current-time"}`), call(ToolEnableTools, `{"pack_id":"session-file-system"}`)),
		calls(call("current-time__get_current_time", `{"timezone":"Europe/Paris","format":"iso8601"}`)),
		calls(call("session-file-system__write_file", `{"path":"/notes/today.md","content":"Met Ada."}`)),
		calls(call("session-file-system__read_file", `{"path":"/notes/today.md"}`)),
		llmtest.Turn{Text: "Saved /notes/today.md."},
	)
	defer srv.Close()
	s := h.open(Options{Attach: []string{"current-time", "session-file-system"}})
	who := &person{}
	reply, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "note that I met Ada today", TurnOptions{Approver: who})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("got %d model requests, want 5", len(reqs))
	}
	sys := reqs[0].System
	for _, want := range []string{"- pack_id: current-time\n", "- pack_id: session-file-system\n", `<pack_instructions pack_id="session-file-system">` + "\n" + fsPromptMark} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	for _, leak := range []string{"You have a task list tool", "You have access to math tools", `pack_instructions pack_id="current-time"`} {
		if strings.Contains(sys, leak) {
			t.Errorf("system prompt holds %q of a pack that is not attached or has no addition:\n%s", leak, sys)
		}
	}
	r := reqs[2]
	now := toolResult(t, r.Messages, r.Messages[len(r.Messages)-2].ToolCalls[0].ID)
	if now.IsError || !strings.Contains(now.Content, `"timezone":"Europe/Paris"`) {
		t.Errorf("get_current_time result %+v", now)
	}
	r = reqs[4]
	read := toolResult(t, r.Messages, r.Messages[len(r.Messages)-2].ToolCalls[0].ID)
	if read.IsError || !strings.Contains(read.Content, `"content":"Met Ada."`) {
		t.Errorf("read_file result %+v", read)
	}
	if b, err := os.ReadFile(filepath.Join(s.Workspace(), "notes", "today.md")); err != nil || string(b) != "Met Ada." {
		t.Errorf("the chat workspace holds %q, %v", b, err)
	}
	if reply.Text != "Saved /notes/today.md." || len(reply.Calls) != 5 {
		t.Errorf("reply %q with %d calls", reply.Text, len(reply.Calls))
	}
	if got := len(who.asked()); got != 3 {
		t.Errorf("the person was asked %d times, want 3: every call goes through the gate, and enable_tools of an attached pack is approved by the attach", got)
	}

	// Detached, its addition leaves the system prompt.
	if err := s.Detach(context.Background(), "session-file-system"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.SystemPrompt(), fsPromptMark) {
		t.Errorf("a detached pack's addition is still in the system prompt")
	}
}

// Denied in chat: the person says no; nothing is written, the model is told.
func TestBuiltinsInChatDenied(t *testing.T) {
	h := builtinHarness(t)
	srv := llmtest.NewServer(
		calls(call(ToolEnableTools, `{"pack_id":"session-file-system"}`)),
		calls(call("session-file-system__write_file", `{"path":"/x.txt","content":"no"}`)),
		llmtest.Turn{Text: "Not written."},
	)
	defer srv.Close()
	s := h.open(Options{Attach: []string{"session-file-system"}})
	who := &person{decide: func(p capability.Pending) capability.Verdict {
		if p.Tool == "write_file" {
			return capability.Deny
		}
		return capability.RunOnce
	}}
	if _, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "write x", TurnOptions{Approver: who}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[2]
	res := toolResult(t, r.Messages, r.Messages[len(r.Messages)-2].ToolCalls[0].ID)
	if e := decodeError(t, res.Content); e["kind"] != "denied" {
		t.Errorf("a denied write_file came back as %+v", res)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace(), "x.txt")); !os.IsNotExist(err) {
		t.Errorf("a denied write_file wrote: %v", err)
	}
}

// Only a built-in's exact content has a system-prompt addition: the same
// name with other content (another digest) has none.
func TestPromptOnlyForBuiltinContent(t *testing.T) {
	c := HomeCatalog{}
	d, _ := builtinpacks.Digest("test-math")
	tests := []struct {
		ref  capability.PackRef
		want bool
	}{
		{capability.PackRef{Name: "test-math", Digest: d}, true},
		{capability.PackRef{Name: "test-math", Digest: "sha256:" + strings.Repeat("0", 64)}, false},
		{capability.PackRef{Name: "test-math"}, false},
		{capability.PackRef{Name: "notes", Digest: d}, false},
		{capability.PackRef{Name: "current-time", Digest: mustDigest(t, "current-time")}, false}, // built-in without an addition
	}
	for _, tt := range tests {
		if got := c.Prompt(tt.ref) != ""; got != tt.want {
			t.Errorf("Prompt(%+v) present = %v, want %v", tt.ref, got, tt.want)
		}
	}
}

func mustDigest(t *testing.T, name string) string {
	t.Helper()
	d, ok := builtinpacks.Digest(name)
	if !ok {
		t.Fatalf("no built-in %s", name)
	}
	return d
}
