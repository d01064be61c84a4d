package chat

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/packs"
)

func policy(t *testing.T, doc string) *capability.Policy {
	t.Helper()
	p, err := capability.ParsePolicy("policy.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writePack writes a pack folder called name under dir from files
// (path → content) and returns it.
func writePack(t testing.TB, dir, name string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(dir, name)
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func skillMD(name, description string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n\n# " + name + "\n"
}

func TestResume(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		h := newHarness(t, install{notesPack: nil})
		srv := llmtest.NewServer(
			calls(call(ToolOpenDocs, `{"pack_id":"notes"}`), call(ToolEnableTools, `{"pack_id":"notes"}`)),
			llmtest.Turn{Text: "ready"},
			llmtest.Turn{Text: "resumed"},
		)
		defer srv.Close()
		s := h.open(Options{Attach: []string{"notes"}})
		p := provider(t, srv, llm.ProviderOpenAI, time.Minute)
		if _, err := s.Send(context.Background(), p, "get ready", TurnOptions{Approver: &person{}}); err != nil {
			t.Fatal(err)
		}
		again := h.open(Options{ID: s.ID()})
		if got, want := again.Packs(), []PackState{{Name: "notes", Description: "Keep short notes in the chat workspace. Use it when the person asks to jot something down or to echo data back.", HasTools: true, Opened: true, Enabled: true}}; !reflect.DeepEqual(got, want) {
			t.Errorf("got packs %+v, want %+v", got, want)
		}
		if again.Workspace() != s.Workspace() {
			t.Errorf("got workspace %s, want %s", again.Workspace(), s.Workspace())
		}
		if !reflect.DeepEqual(again.Messages(), s.Messages()) {
			t.Errorf("got messages %+v, want %+v", again.Messages(), s.Messages())
		}
		if _, err := again.Send(context.Background(), p, "still there?", TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[2]
		if !r.HasTool("notes__echo") || len(r.Messages) != 6 || !strings.Contains(r.System, "Docs already opened in this conversation: notes") {
			t.Errorf("the resumed chat's request: tools %v, %d messages, system:\n%s", r.ToolNames(), len(r.Messages), r.System)
		}
		if _, err := Open(context.Background(), h.deps, Options{ID: "chat_nope"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("got %v, want ErrNotFound", err)
		}
	})
}

func TestAttachDetach(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		dir := t.TempDir()
		plain := writePack(t, dir, "plain", map[string]string{"SKILL.md": skillMD("plain", "A pack with docs only.")})
		banned := writePack(t, dir, "banned", map[string]string{"SKILL.md": skillMD("banned", "Blocked by the policy.")})
		h := newHarness(t, install{notesPack: nil, plain: nil, banned: nil})
		h.deps.Pipeline = h.pipeline(policy(t, "[packs]\nmandated = [\"plain\", \"absent\"]\nblocked = [\"banned\"]\n"))
		changed := 0
		s := h.open(Options{OnToolsChanged: func() { changed++ }})
		if got := s.Packs(); len(got) != 1 || got[0].Name != "plain" || !got[0].Mandated {
			t.Fatalf("got %+v, want the mandated pack attached", got)
		}
		if n := s.Notices(); len(n) != 1 || !strings.Contains(n[0], "absent") {
			t.Errorf("got notices %q, want one about the missing mandated pack", n)
		}
		if err := s.Attach(context.Background(), "banned"); !errors.Is(err, capability.ErrDenied) || !errors.Is(err, capability.ErrBlocked) {
			t.Errorf("attach banned: got %v, want a policy denial", err)
		}
		if err := s.Attach(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("attach nope: got %v, want ErrNotFound", err)
		}
		if err := s.Attach(context.Background(), "notes"); err != nil {
			t.Fatal(err)
		}
		if changed != 2 {
			t.Errorf("tools changed %d times, want twice: the base tools came with plain, exec_best_effort with notes", changed)
		}
		if err := s.Detach(context.Background(), "plain"); !errors.Is(err, ErrMandated) {
			t.Errorf("detach plain: got %v, want ErrMandated", err)
		}
		if err := s.Detach(context.Background(), "notes"); err != nil {
			t.Fatal(err)
		}
		if got := s.Packs(); len(got) != 1 || got[0].Name != "plain" {
			t.Errorf("got %+v after detach", got)
		}
		if again := h.open(Options{ID: s.ID()}); len(again.Packs()) != 1 {
			t.Errorf("the detach was not stored: %+v", again.Packs())
		}
		if got := h.open(Options{}).Tools(); len(got) != 3 {
			t.Errorf("got %d tools for a pack without terminal_exec, want the three read-only base tools", len(got))
		}
	})
}

func TestNoPacksNoTools(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	srv := llmtest.NewServer(llmtest.Turn{Text: "plain chat"})
	defer srv.Close()
	s := h.open(Options{})
	if _, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "hi", TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if len(r.Tools) != 0 || !strings.Contains(r.System, "(none attached)") {
		t.Errorf("got tools %v and system:\n%s", r.ToolNames(), r.System)
	}
}

// TestApprovalSources: the policy approves its classes without asking,
// "allow for this chat" is remembered (also after resuming) and only in its
// chat, and with nobody to ask the answer is deny.
func TestApprovalSources(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		h := newHarness(t, install{notesPack: nil})
		h.deps.Pipeline = h.pipeline(policy(t, "[approval]\nauto_approve = [\"open_docs\"]\n"))
		s := h.open(Options{Attach: []string{"notes"}})
		ctx := context.Background()
		who := &person{decide: func(capability.Pending) capability.Verdict { return capability.AllowChat }}
		r, err := s.Call(ctx, ToolOpenDocs, json.RawMessage(`{"pack_id":"notes"}`), who)
		if err != nil || r.IsError || !strings.HasPrefix(r.Decision.Approver, "policy") {
			t.Fatalf("open_docs: %+v %v, want approved by the policy", r, err)
		}
		if len(who.asked()) != 0 {
			t.Errorf("the person was asked about a call the policy approves")
		}
		// enable_tools of a pack the person attached asks nobody
		// (TestAttachIsConsent); the pack's own tool asks.
		if r, err = s.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), nil); err != nil || r.IsError {
			t.Fatalf("enable_tools: %+v %v", r, err)
		}
		echo, args := PackToolName("notes", "echo"), json.RawMessage(`{"text":"hi"}`)
		if r, _ = s.Call(ctx, echo, args, who); r.IsError || r.Decision.Remembered {
			t.Fatalf("first echo: %+v", r)
		}
		if r, _ = s.Call(ctx, echo, args, who); r.IsError || !r.Decision.Remembered || r.Decision.Verdict != capability.AllowChat {
			t.Errorf("second echo: %+v, want approved by the chat's memory", r.Decision)
		}
		if n := len(who.asked()); n != 1 {
			t.Errorf("the person was asked %d times, want once", n)
		}
		resumed := h.open(Options{ID: s.ID()})
		if r, _ = resumed.Call(ctx, echo, args, nil); r.IsError || !r.Decision.Remembered {
			t.Errorf("echo in the resumed chat: %+v", r)
		}
		other := h.open(Options{Attach: []string{"notes"}})
		if r, err = other.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), nil); err != nil || r.IsError {
			t.Fatalf("enable_tools in another chat: %+v %v", r, err)
		}
		r, err = other.Call(ctx, echo, args, nil)
		if err != nil || !r.IsError || r.ErrorKind != ErrKindDenied || r.Decision.Approved {
			t.Errorf("echo in another chat without a person: %+v %v, want denied", r, err)
		}
	})
}

func TestToolsChangedOnEnable(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	var mu sync.Mutex
	changed := 0
	s := h.open(Options{Attach: []string{"notes"}, OnToolsChanged: func() { mu.Lock(); changed++; mu.Unlock() }})
	if changed != 1 {
		t.Errorf("got %d changes for the first attach, want 1", changed)
	}
	r, err := s.Call(context.Background(), ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{})
	if err != nil || r.IsError {
		t.Fatal(r, err)
	}
	if changed != 2 || len(s.Tools()) != 8 {
		t.Errorf("after enable_tools: %d changes, %d tools", changed, len(s.Tools()))
	}
}

// TestConcurrentCalls hammers one session the way an MCP client may.
func TestConcurrentCalls(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	if r, err := s.Call(context.Background(), ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{}); err != nil || r.IsError {
		t.Fatal(r, err)
	}
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan string, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := strings.Repeat("x", w) + "-" + strings.Repeat("y", i)
				r, err := s.Call(context.Background(), "notes__echo", json.RawMessage(`{"text":"`+text+`"}`), &person{})
				if err != nil || r.Content != `{"result":{"echo":{"text":"`+text+`"}}}` {
					errs <- r.Content
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("got %s", e)
	}
	if n := len(h.invocations()); n != workers*each+1 {
		t.Errorf("got %d audited calls, want %d", n, workers*each+1)
	}
}

// TestStopOneCall: stopping a running tool (Ctrl-C in the terminal) ends
// that call only; the model is told and the turn goes on.
func TestStopOneCall(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	srv := llmtest.NewServer(calls(call(ToolEnableTools, `{"pack_id":"notes"}`)), calls(call("notes__spin", `{}`)), llmtest.Turn{Text: "stopped, fine"})
	defer srv.Close()
	s := h.open(Options{Attach: []string{"notes"}})
	obs := &stopper{after: 50 * time.Millisecond, tool: "notes__spin"}
	start := time.Now()
	reply, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "spin", TurnOptions{Approver: &person{}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("took %v: the stop did not end the call before its 1s limit", d)
	}
	if last := reply.Calls[1]; last.ErrorKind != ErrKindStopped || reply.Text != "stopped, fine" {
		t.Errorf("got %+v, reply %q", last, reply.Text)
	}
}

// stopper stops one tool shortly after it starts, as Ctrl-C would.
type stopper struct {
	nopObserver
	after time.Duration
	tool  string
}

func (o *stopper) ToolStart(c llm.ToolCall, stop context.CancelFunc) {
	if c.Name == o.tool {
		time.AfterFunc(o.after, stop)
	}
}

// TestRepairDanglingCall: a conversation that ends in a tool call without
// its result (a crash mid-call) is answered before the next request.
func TestRepairDanglingCall(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	ctx := context.Background()
	if err := s.appendMessages(ctx, llm.Message{Role: llm.RoleUser, Content: "go"},
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: ToolOpenDocs, Arguments: `{"pack_id":"notes"}`}}}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(llmtest.Turn{Text: "ok"})
	defer srv.Close()
	resumed := h.open(Options{ID: s.ID()})
	if _, err := resumed.Send(ctx, provider(t, srv, llm.ProviderOpenAI, time.Minute), "again", TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	if len(msgs) != 4 || msgs[2].Role != llm.RoleTool || msgs[2].ToolCallID != "c1" || !strings.Contains(msgs[2].Content, ErrKindStopped) {
		t.Errorf("got %+v", msgs)
	}
}

// TestModifiedPackIsRefused: a pack changed after install cannot have its
// tools enabled.
func TestModifiedPackIsRefused(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	dir, _ := h.home.PackDir("notes")
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := s.Call(context.Background(), ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{})
	if err != nil || !r.IsError || r.ErrorKind != ErrKindDenied || !strings.Contains(r.Content, "no longer match") {
		t.Errorf("got %+v %v", r, err)
	}
	if len(s.Tools()) != 4 {
		t.Errorf("got %d tools, want the base tools only", len(s.Tools()))
	}
	if _, err := Open(context.Background(), h.deps, Options{Attach: []string{"notes"}}); !errors.Is(err, packs.ErrModified) {
		t.Errorf("attach of a modified pack: got %v, want ErrModified", err)
	}
}

// TestClientRecorded: the client that drives a chat (an MCP client) is in
// every later audit record.
func TestClientRecorded(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	ctx := context.Background()
	args := json.RawMessage(`{"pack_id":"notes"}`)
	s.Call(ctx, ToolOpenDocs, args, &person{})
	s.SetClient("mcp:test-client")
	s.Call(ctx, ToolOpenDocs, args, &person{})
	rows := h.invocations()
	if len(rows) != 2 || strings.Contains(string(rows[0].Body), "client") || !strings.Contains(string(rows[1].Body), `"client":"mcp:test-client"`) {
		t.Errorf("got %s and %s", rows[0].Body, rows[1].Body)
	}
}
