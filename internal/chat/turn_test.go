package chat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

func TestExplicitInvocation(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	srv := llmtest.NewServer(llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"}, llmtest.Turn{Text: "c"})
	defer srv.Close()
	s := h.open(Options{})
	p := provider(t, srv, llm.ProviderOpenAI, time.Minute)
	ctx := context.Background()
	for _, msg := range []string{"/notes   jot this down\nplease", "/notes", "/nonexistent hello"} {
		if _, err := s.Send(ctx, p, msg, TurnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if got := reqs[0].Last().Content; got != "jot this down\nplease" {
		t.Errorf("got message %q, want the prefix stripped", got)
	}
	if !strings.Contains(reqs[0].System, `The person invoked the pack notes for this message: call open_docs("notes")`) || !strings.Contains(reqs[0].System, "- pack_id: notes") {
		t.Errorf("request 1: system prompt:\n%s", reqs[0].System)
	}
	if len(s.Packs()) != 1 {
		t.Errorf("the invoked pack was not attached: %+v", s.Packs())
	}
	if got := reqs[1].Last().Content; got != "Use the notes pack." {
		t.Errorf("got %q for a bare invocation", got)
	}
	if got := reqs[2].Last().Content; got != "/nonexistent hello" || strings.Contains(reqs[2].System, "invoked") {
		t.Errorf("an unknown name: got %q and system:\n%s", got, reqs[2].System)
	}
}

// TestNoToolsFallback: a model that cannot call tools (Ollama's 400 "does
// not support tools") gets no tools from then on, and an explicit
// invocation puts the pack's docs into that one request's system prompt.
func TestNoToolsFallback(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			h := newHarness(t, install{notesPack: nil})
			srv := llmtest.NewServer(
				llmtest.Turn{Status: 400, Error: "registry.ollama.ai/library/gemma:2b does not support tools"},
				llmtest.Turn{Text: "Following the notes pack."},
				llmtest.Turn{Text: "plain"},
			)
			defer srv.Close()
			s := h.open(Options{})
			obs := &notes{}
			p := provider(t, srv, protocol, time.Minute)
			reply, err := s.Send(context.Background(), p, "/notes write one", TurnOptions{Observer: obs})
			if err != nil || reply.Text != "Following the notes pack." {
				t.Fatalf("got %q, %v", reply.Text, err)
			}
			reqs := srv.Requests()
			if len(reqs[0].Tools) != 4 || len(reqs[1].Tools) != 0 {
				t.Errorf("got tools %v then %v, want the base tools then none", reqs[0].ToolNames(), reqs[1].ToolNames())
			}
			if !strings.Contains(reqs[1].System, "NOTES-BODY-3c9e") || !strings.Contains(reqs[1].System, "This model cannot call tools") {
				t.Errorf("request 2 lacks the injected docs:\n%s", reqs[1].System)
			}
			if len(obs.notices) == 0 || !strings.Contains(obs.notices[0], "cannot call tools") {
				t.Errorf("got notices %q", obs.notices)
			}
			if _, err := s.Send(context.Background(), p, "and?", TurnOptions{}); err != nil {
				t.Fatal(err)
			}
			if r := srv.Requests()[2]; len(r.Tools) != 0 || strings.Contains(r.System, "NOTES-BODY-3c9e") {
				t.Errorf("request 3: tools %v, or the docs stayed in the system prompt", r.ToolNames())
			}
		})
	}
}

type notes struct {
	nopObserver
	notices []string
	text    strings.Builder
}

func (n *notes) Notice(msg string) { n.notices = append(n.notices, msg) }
func (n *notes) Text(s string)     { n.text.WriteString(s) }

// bigPack writes a pack with n tools.
func bigPack(t *testing.T, dir, name string, n int) string {
	t.Helper()
	var tools []string
	for i := range n {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"Tool %d.","input_schema":{"type":"object"},"run":{"wasm":"bin/echo.wasm","abi":"wasi"}}`, i, i))
	}
	wasm, err := os.ReadFile(filepath.Join(notesPack, "bin", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return writePack(t, dir, name, map[string]string{
		"SKILL.md":      skillMD(name, "Many tools."),
		"tools.json":    "[" + strings.Join(tools, ",") + "]",
		"bin/echo.wasm": string(wasm),
	})
}

// limited is a provider with a small tool limit.
type limited struct {
	llm.Provider
	lim llm.Limits
}

func (l limited) Limits() llm.Limits { return l.lim }

func TestToolBudget(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, install{bigPack(t, dir, "big", 100): nil, bigPack(t, dir, "huge", 40): nil})
	srv := llmtest.NewServer(
		calls(call(ToolEnableTools, `{"pack_id":"big"}`), call(ToolEnableTools, `{"pack_id":"huge"}`)),
		llmtest.Turn{Text: "enabled what fits"},
	)
	defer srv.Close()
	s := h.open(Options{Attach: []string{"big", "huge"}})
	p := provider(t, srv, llm.ProviderOpenAI, time.Minute)
	reply, err := s.Send(context.Background(), p, "enable both", TurnOptions{Approver: &person{}})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Calls[0].IsError || !reply.Calls[1].IsError || reply.Calls[1].ErrorKind != ErrKindBudget {
		t.Fatalf("got %+v", reply.Calls)
	}
	if msg := reply.Calls[1].Content; !strings.Contains(msg, "143 tools are more than openai accepts (128)") || !strings.Contains(msg, "big (100 tools), huge (40 tools)") {
		t.Errorf("the model was told %s", msg)
	}
	if got := len(srv.Requests()[1].Tools); got != 103 {
		t.Errorf("got %d tools, want the base tools and big's", got)
	}

	// A provider with a smaller limit: the turn fails before the request,
	// naming the packs to detach.
	small := limited{Provider: p, lim: llm.Limits{MaxTools: 50, MaxToolBytes: 1 << 20}}
	_, err = s.Send(context.Background(), small, "go on", TurnOptions{})
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrToolBudget) || be.Tools != 103 || be.Packs[0].Pack != "big" {
		t.Fatalf("got %v, want a BudgetError naming big", err)
	}
	if len(srv.Requests()) != 2 {
		t.Errorf("a request was sent over the budget")
	}

	// The provider refuses the list: same error, with the provider's.
	srv.Push(llmtest.Turn{Status: 400, Error: "Invalid 'tools': array too long. Expected an array with maximum length 64"})
	_, err = s.Send(context.Background(), p, "again", TurnOptions{})
	if !errors.As(err, &be) || !be.Refused || !errors.Is(err, llm.ErrTooManyTools) || !strings.Contains(err.Error(), "big (100 tools)") {
		t.Fatalf("got %v", err)
	}
	if err := s.Detach(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	srv.Push(llmtest.Turn{Text: "fits now"})
	if reply, err := s.Send(context.Background(), small, "and now", TurnOptions{}); err != nil || reply.Text != "fits now" {
		t.Errorf("after detaching: %q %v", reply.Text, err)
	}
}

// TestKeyNeverStored: the provider's key reaches the provider and is in no
// file of the state directory (packs.db, its WAL, the audit log).
func TestKeyNeverStored(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	srv := llmtest.NewServer(calls(call(ToolOpenDocs, `{"pack_id":"notes"}`)), llmtest.Turn{Text: "ok"})
	defer srv.Close()
	s := h.open(Options{Attach: []string{"notes"}})
	if _, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "hi", TurnOptions{Approver: &person{}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-test-4f1e0c" {
		t.Fatalf("the key did not reach the provider: %q", got)
	}
	h.log.Close()
	n := 0
	err := filepath.WalkDir(h.home.Dir(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if strings.Contains(string(b), "sk-test-4f1e0c") {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
	if err != nil || n < 2 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

func TestMaxSteps(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	srv := llmtest.NewServer()
	srv.Respond(func(llmtest.Request) llmtest.Turn {
		return calls(call(ToolReadFile, `{"pack_id":"notes","path":"SKILL.md"}`))
	})
	defer srv.Close()
	s := h.open(Options{Attach: []string{"notes"}})
	obs := &notes{}
	reply, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "loop", TurnOptions{Approver: &person{}, MaxSteps: 3, Observer: obs})
	if err != nil || reply.Steps != 3 || len(srv.Requests()) != 3 || len(reply.Calls) != 3 {
		t.Fatalf("got %+v %v", reply, err)
	}
	if len(obs.notices) != 1 || !strings.Contains(obs.notices[0], "stopped after 3") {
		t.Errorf("got notices %q", obs.notices)
	}
}
