package chat

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/testcache"
	"github.com/packs-run/packs/runtime"
)

// notesPack is the test pack: docs with markers, a binary asset, WASI tools
// (echo, note, spin, fail) and a terminal_exec request for sh.
var notesPack = filepath.Join("testdata", "notes")

// harness is a state directory with real components: packs installed
// through dist.Home, packs.db, the audit log and the wasm runtime.
type harness struct {
	t    testing.TB
	home *dist.Home
	db   *store.DB
	log  *audit.Log
	rt   *runtime.Runtime
	deps Deps
}

// install maps a pack folder to the capabilities granted to it.
type install map[string][]capability.Name

func newHarness(t testing.TB, in install) *harness {
	t.Helper()
	return newHarnessIn(t, t.TempDir(), in)
}

// newHarnessIn is newHarness with the state directory at dir.
func newHarnessIn(t testing.TB, dir string, in install) *harness {
	t.Helper()
	return newHarnessStore(t, dir, "", in)
}

// newHarnessStore is newHarnessIn with the store at target (a PostgreSQL
// URL) instead of packs.db in dir, when target is set; the audit key stays
// in dir.
func newHarnessStore(t testing.TB, dir, target string, in install) *harness {
	t.Helper()
	ctx := context.Background()
	home, err := dist.OpenHome(ctx, dir, dist.HomeOptions{ModuleCache: testcache.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if target == "" {
		target = home.DBPath()
	}
	db, err := store.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log, err := audit.Open(ctx, db, audit.Options{KeyDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: home.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	h := &harness{t: t, home: home, db: db, log: log, rt: rt}
	for src, grant := range in {
		h.install(src, grant...)
	}
	h.deps = Deps{Store: db, Catalog: HomeCatalog{Home: home, DB: db}, Pipeline: h.pipeline(nil), Workspaces: home.WorkspacesDir()}
	return h
}

// install installs the pack folder src and grants it caps, persistently.
func (h *harness) install(src string, caps ...capability.Name) {
	h.t.Helper()
	ctx := context.Background()
	st, err := h.home.Stage(ctx, src, dist.StageOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	e, err := st.Commit(ctx, caps)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, n := range caps {
		if err := h.db.PutGrant(ctx, e.Name, "", capability.UserGrant{Capability: n, Scope: capability.ScopePersistent}); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) open(opt Options) *Session {
	h.t.Helper()
	s, err := Open(context.Background(), h.deps, opt)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// invocations reads the audit log's invocation rows.
func (h *harness) invocations() []audit.Entry {
	h.t.Helper()
	var out []audit.Entry
	for e, err := range audit.Entries(context.Background(), h.db, audit.Filter{Kind: audit.KindInvocation}) {
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// person is the approver a person would be: it answers each pending call
// with decide and remembers what it was shown.
type person struct {
	mu     sync.Mutex
	decide func(capability.Pending) capability.Verdict
	seen   []capability.Pending
}

func (p *person) Name() string { return "test-person" }

func (p *person) Approve(ctx context.Context, pend capability.Pending) (capability.Verdict, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, pend)
	if p.decide == nil {
		return capability.RunOnce, nil
	}
	return p.decide(pend), nil
}

func (p *person) asked() []capability.Pending {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]capability.Pending(nil), p.seen...)
}

// call is a tool call in a scripted turn.
func call(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

func calls(cs ...llm.ToolCall) llmtest.Turn { return llmtest.Turn{ToolCalls: cs} }

// provider returns a provider of the given protocol that talks to srv.
func provider(t testing.TB, srv *llmtest.Server, protocol string, timeout time.Duration) llm.Provider {
	t.Helper()
	c := llm.Config{Provider: protocol, BaseURL: srv.OpenAIURL(), Model: "fake", APIKey: "sk-test-4f1e0c", MaxTokens: 1000, Timeout: timeout}
	if protocol == llm.ProviderAnthropic {
		c.BaseURL = srv.AnthropicURL()
	}
	p, err := llm.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// toolResult finds the tool result message answering the call with id.
func toolResult(t testing.TB, msgs []llm.Message, id string) llm.Message {
	t.Helper()
	for _, m := range msgs {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return m
		}
	}
	t.Fatalf("no tool result for call %s in %+v", id, msgs)
	return llm.Message{}
}

// decodeError reads {"error": {...}} from a tool result.
func decodeError(t testing.TB, content string) map[string]any {
	t.Helper()
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(content), &body); err != nil || body.Error == nil {
		t.Fatalf("tool result %s is not an error: %v", content, err)
	}
	return body.Error
}

// pipeline returns the pipeline the harness's sessions run calls through,
// under policy pol (nil for none).
func (h *harness) pipeline(pol *capability.Policy) *runtime.Pipeline {
	h.t.Helper()
	pl, err := (&app.App{DB: h.db, Home: h.home, Policy: pol}).NewPipeline(h.rt, h.log, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return pl
}
