package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/testcache"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// notesPack is the test pack: WASI tools echo, note (writes note.md to the
// workspace), spin and fail, and a terminal_exec request for sh.
var notesPack, _ = filepath.Abs(filepath.Join("testdata", "notes"))

// env is a real server on loopback over a fresh state directory, with the
// real runtime, audit log and chat orchestrator, and a fake model speaking
// the OpenAI wire format.
type env struct {
	t     testing.TB
	url   string
	token string // the server's token; do sends it as a bearer token
	app   *app.App
	model *llmtest.Server
	srv   *Server
}

type envOptions struct {
	noModel      bool
	modelURL     string // the model's base URL (default: the fake model)
	token        string
	addr         string
	allowedHosts []string
	builtins     bool // install the built-in packs as the app opens
	policy       string
	// userHome, when set, is the HOME whose skills folders the app lists
	// and serves packs used in place from (no test reads the machine's).
	userHome string
	// resolveModel is Config.ResolveModel: what packs serve's flags and
	// environment lay over the Settings page's model.
	resolveModel func(saved llm.Config) (llm.Config, []llm.Override, error)
	// oidc lets people sign in at its issuer (Config.OIDC).
	oidc *identity.Provider
	// metrics is served at /metrics (Config.Metrics).
	metrics http.Handler
}

func newEnv(t testing.TB, opt envOptions) *env {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: t.TempDir(), Builtins: opt.builtins, Policy: opt.policy, ModuleCache: testcache.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	if opt.builtins {
		testcache.Builtins(t, rt, a.Home)
	}
	// What a test installs is compiled as it is installed, as packs add
	// does, so no browser step's deadline includes a compile. A module
	// that does not compile is the call's failure to report, not this
	// hook's.
	a.Installed = append(a.Installed, func(ctx context.Context, entry dist.LockEntry) error {
		if dir, err := a.Home.PackDir(entry.Name); err == nil {
			if p, err := packs.Load(dir, packs.LoadOptions{}); err == nil {
				_ = rt.Precompile(ctx, p)
			}
		}
		return nil
	})
	log, err := audit.Open(ctx, a.DB, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e := &env{t: t, app: a, model: llmtest.NewServer()}
	t.Cleanup(e.model.Close)
	var model Model
	if !opt.noModel {
		base := opt.modelURL
		if base == "" {
			base = e.model.OpenAIURL()
		}
		p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: base, Model: "fake", APIKey: "sk-test-web", MaxTokens: 1000, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		model = Model{Provider: p, Describe: "openai fake"}
	}
	pl, err := a.NewPipeline(rt, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	deps := chat.Deps{Store: a.DB, Catalog: chat.HomeCatalog{Home: a.Home, DB: a.DB}, Pipeline: pl, Workspaces: a.Home.WorkspacesDir()}
	var inPlace *app.InPlaceCatalog
	if opt.userHome != "" {
		// Discovery reads HOME through the app: the machine's own home
		// is never scanned; the rest of the environment is the process's.
		a.Getenv = func(k string) string {
			if k == "HOME" {
				return opt.userHome
			}
			return os.Getenv(k)
		}
		inPlace = &app.InPlaceCatalog{App: a}
		deps.Catalog = chat.Catalogs{deps.Catalog, *inPlace}
	}
	addr := opt.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	e.token = opt.token
	if e.token == "" {
		e.token = testToken
	}
	e.srv, err = New(Config{App: a, Chat: deps, Model: model, Addr: addr, AllowedHosts: opt.allowedHosts, Token: e.token, Version: "test", HowToConfigure: "pass --provider and --model",
		InPlace: inPlace, ResolveModel: opt.resolveModel, OIDC: opt.oidc, Metrics: opt.metrics})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := e.srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	e.url = "http://" + ln.Addr().String()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(sctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return e
}

// deadURL is the base URL of a port on loopback where nothing listens: a
// request to it is refused at once.
func deadURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// testToken is the token of a test server unless envOptions names one.
const testToken = "test-token-5a0f3c9e1b7d4e26a8c1f09b3d7e2a64"

// do sends a request with the server's token as a bearer token and decodes
// the JSON answer into out (when not nil). It returns the status. An
// "Authorization" pair in hdr replaces the token ("" sends none).
func (e *env) do(method, path string, body any, out any, hdr ...string) int {
	e.t.Helper()
	return e.doAuth("Bearer "+e.token, method, path, body, out, hdr...)
}

// doAuth is do with authz as the Authorization header ("" for none).
func (e *env) doAuth(authz, method, path string, body any, out any, hdr ...string) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("%s %s: %d %s: %v", method, path, res.StatusCode, data, err)
		}
	}
	return res.StatusCode
}

// must is do that fails the test unless the status is want.
func (e *env) must(want int, method, path string, body any, out any) {
	e.t.Helper()
	var raw json.RawMessage
	if got := e.do(method, path, body, &raw); got != want {
		e.t.Fatalf("%s %s: got status %d, want %d: %s", method, path, got, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatal(err)
		}
	}
}

type errorBody struct {
	Error apiError `json:"error"`
}

// install installs the notes pack through the API with grant.
func (e *env) install(grant ...string) packJSON {
	e.t.Helper()
	var p packJSON
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": notesPack, "grant": grant}, &p)
	return p
}

// sse is an open event stream of one chat.
type sse struct {
	t      testing.TB
	events chan sseEvent
	cancel context.CancelFunc
}

type sseEvent struct {
	ID   string
	Kind string
	Data map[string]any
}

func (e *env) stream(chatID string) *sse {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/chats/"+chatID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		cancel()
		e.t.Fatalf("events: got %d %q", res.StatusCode, ct)
	}
	s := &sse{t: e.t, events: make(chan sseEvent, 256), cancel: cancel}
	e.t.Cleanup(cancel)
	go func() {
		defer res.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Kind != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
					ev.Data = map[string]any{"undecodable": line}
				}
			}
		}
	}()
	return s
}

// next returns the next event of kind, failing on turn_error (unless that
// is the kind asked for) and after a timeout. Events of other kinds are
// passed over.
func (s *sse) next(kind string) sseEvent {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the event stream ended while waiting for %s", kind)
			}
			if ev.Kind == kind {
				return ev
			}
			if ev.Kind == "turn_error" {
				s.t.Fatalf("waiting for %s: turn_error %v", kind, ev.Data)
			}
		case <-deadline:
			s.t.Fatalf("no %s event within 20s", kind)
		}
	}
}

func call(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

// waitsForAPerson are the model's turns of a call of the attached notes
// pack that waits for the person: enable_tools runs at once (the attach
// approved it), its echo tool asks.
func waitsForAPerson() []llmtest.Turn {
	return []llmtest.Turn{calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)), calls(call("notes__echo", `{"text":"hi"}`))}
}

func calls(cs ...llm.ToolCall) llmtest.Turn { return llmtest.Turn{ToolCalls: cs} }
