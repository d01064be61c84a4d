package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

const (
	wasiEcho   = "testdata/wasi_echo.wasm"
	wasiFiles  = "testdata/wasi_files.wasm"
	pluginWasm = "testdata/plugin.wasm"
)

func TestInvokeRefusesWithoutApproval(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "files", "", wasiFiles, map[string]string{"files": ""})
	g := h.grant(p, nil)
	other := h.invocation(p, "files", `{}`, g) // approved, but for another id

	for name, mutate := range map[string]func(*Invocation){
		"no approval":              func(inv *Invocation) { inv.Approval = capability.Approval{} },
		"approval of another call": func(inv *Invocation) { inv.Approval = other.Approval },
	} {
		t.Run(name, func(t *testing.T) {
			inv := h.invocation(p, "files", `{}`, g)
			mutate(&inv)
			_, err := h.rt.invoke(context.Background(), inv)
			if !errors.Is(err, ErrNotApproved) || !errors.Is(err, capability.ErrDenied) {
				t.Fatalf("got %v, want ErrNotApproved wrapping capability.ErrDenied", err)
			}
			if _, err := os.Stat(filepath.Join(h.ws, "out.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the guest ran without approval: out.txt: %v", err)
			}
		})
	}
}

func TestInvokeEcho(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct {
		name, src, fn string
	}{
		{"wasi", wasiEcho, ""},
		{"extism-wat", pluginWasm, "echo"},
	}
	if goPluginWasm != "" {
		cases = append(cases, struct{ name, src, fn string }{"extism-go", goPluginWasm, "echo"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modulePack(t, "echo-"+c.name, "", c.src, map[string]string{"echo": c.fn})
			for _, in := range []string{`{}`, `{"text":"héllo","n":[1,2,3]}`, `{"long":"` + strings.Repeat("x", 100_000) + `"}`} {
				res, err := h.invoke(p, "echo", in)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := string(res.Output), in; got != want {
					t.Fatalf("got %.80q, want %.80q", got, want)
				}
				if res.ExitCode != 0 || res.Duration <= 0 {
					t.Fatalf("exit %d, duration %s", res.ExitCode, res.Duration)
				}
			}
		})
	}
	if goPluginWasm == "" {
		t.Logf("extism-go not run: %v", goPluginErr)
	}
}

func TestInvokeWASIStderr(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "logs", "", wasiEcho, map[string]string{"echo": ""})
	res, err := h.invoke(p, "echo", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Stderr), "echo: ok\n"; got != want {
		t.Fatalf("stderr: got %q, want %q", got, want)
	}
}

func TestInvalidInput(t *testing.T) {
	h := newHarness(t, Config{})
	tools := `[{"name": "echo", "description": "Echo.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, "run": {"wasm": "bin/x.wasm", "abi": "wasi"}}]`
	p := testPack{name: "strict", tools: tools, files: map[string]string{"bin/x.wasm": wasiEcho}}.load(t)
	pl := h.pipeline(p)
	for _, in := range []string{`{"text": 5}`, `{}`, `not json`, `[1]`} {
		o := h.call(pl, p, "echo", in)
		if !errors.Is(o.Err, packs.ErrInvalidInput) || o.Status != capability.StatusInvalidInput {
			t.Errorf("input %s: got %v (%s), want packs.ErrInvalidInput", in, o.Err, o.Status)
		}
		if o.Approval.Verdict() != capability.Deny {
			t.Errorf("input %s: invalid arguments were put to the gate", in)
		}
	}
	if o := h.call(pl, p, "echo", `{"text": "ok"}`); o.Err != nil {
		t.Fatalf("valid input: %v", o.Err)
	}
	calls := h.rec.Calls()
	if len(calls) != 5 || calls[4].Status != capability.StatusOK || calls[0].Status != capability.StatusInvalidInput {
		t.Fatalf("audit records: %+v", calls)
	}
}

func TestLimits(t *testing.T) {
	h := newHarness(t, Config{})
	const fast = "[limits]\ntimeout_ms = 300\nmemory_pages = 64\n"
	cases := []struct {
		name, src, fn, toml, input string
		want                       error
		within                     time.Duration // the call must end this soon
	}{
		{"wasi endless loop", "testdata/wasi_loop.wasm", "", fast, `{}`, ErrTimeout, 5 * time.Second},
		{"extism endless loop", pluginWasm, "loop", fast, `{}`, ErrTimeout, 5 * time.Second},
		{"wasi memory growth", "testdata/wasi_grow.wasm", "", fast, `{}`, ErrMemoryLimit, 5 * time.Second},
		{"extism memory growth", pluginWasm, "grow", fast, `{}`, ErrMemoryLimit, 5 * time.Second},
		{"wasi memory declared up front", "testdata/wasi_bigmem.wasm", "", "", `{}`, ErrMemoryLimit, 5 * time.Second},
		{"wasi 100 MB to stdout", "testdata/wasi_spew.wasm", "", "", `{}`, ErrOutputLimit, 5 * time.Second},
		{"extism 2 MiB output", pluginWasm, "big", "", `{}`, ErrOutputLimit, 5 * time.Second},
		{"wasi trap", "testdata/wasi_trap.wasm", "", "", `{}`, ErrTrap, 5 * time.Second},
		{"extism trap", pluginWasm, "trap", "", `{}`, ErrTrap, 5 * time.Second},
		{"extism initializer trap", "testdata/plugin_badinit.wasm", "run", "", `{}`, ErrTrap, 5 * time.Second},
		{"input too large", wasiEcho, "", "[limits]\ninput_bytes = 64\n", `{"text":"` + strings.Repeat("x", 100) + `"}`, ErrInputLimit, 5 * time.Second},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modulePack(t, fmt.Sprintf("limits-%d", i), c.toml, c.src, map[string]string{"tool": c.fn})
			begin := time.Now()
			_, err := h.invoke(p, "tool", c.input)
			took := time.Since(begin)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("the error is not one line: %q", err)
			}
			if took > c.within {
				t.Fatalf("the call took %s, want under %s", took, c.within)
			}
		})
	}
}

func TestToolErrors(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct {
		name, src, fn string
		wantCode      int
		wantMsg       string // a fragment of the tool's own words
	}{
		{"wasi exit status", "testdata/wasi_fail.wasm", "", 3, "Atlantis"},
		{"extism error", pluginWasm, "fail", 1, "plugin says no"},
		{"extism non-zero return", pluginWasm, "rc", 7, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modulePack(t, fmt.Sprintf("fails-%d", i), "", c.src, map[string]string{"tool": c.fn})
			res, err := h.invoke(p, "tool", `{}`)
			var te *ToolError
			if !errors.As(err, &te) || !errors.Is(err, ErrToolFailed) {
				t.Fatalf("got %v, want a *ToolError", err)
			}
			if te.ExitCode != c.wantCode || res.ExitCode != c.wantCode {
				t.Fatalf("exit status: error %d, result %d, want %d", te.ExitCode, res.ExitCode, c.wantCode)
			}
			if !strings.Contains(te.Message, c.wantMsg) {
				t.Fatalf("message %q does not carry the tool's %q", te.Message, c.wantMsg)
			}
		})
	}
}

func TestCancelIsNotTimeout(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "cancel", "", "testdata/wasi_loop.wasm", map[string]string{"loop": ""})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := h.rt.invoke(ctx, h.invocation(p, "loop", `{}`, h.grant(p, nil)))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want context.Canceled and not ErrTimeout", err)
	}
}

func TestFilesystem(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "files", "", wasiFiles, map[string]string{"files": ""})
	inv := h.invocation(p, "files", `{}`, h.grant(p, nil))
	res, err := h.rt.invoke(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Workspace, Pack int }
	if err := json.Unmarshal(res.Output, &got); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	if got.Workspace != 0 || got.Pack == 0 {
		t.Fatalf("errnos: workspace %d (want 0), pack %d (want a refusal)", got.Workspace, got.Pack)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "out.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("workspace/out.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "evil.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the guest wrote into the pack: %v", err)
	}
	var denied, allowed bool
	for _, e := range h.rec.find(inv.ID, capability.FilesystemWrite) {
		denied = denied || !e.Allowed && strings.HasPrefix(e.Resource, p.Dir)
		allowed = allowed || e.Allowed && strings.HasPrefix(e.Resource, h.ws)
		if e.Tool != "files" || e.Pack != p.Name {
			t.Errorf("exercise %+v is not attributed to files in %s", e, p.Name)
		}
	}
	if !denied || !allowed {
		t.Fatalf("recorded: denied write to the pack %v, allowed write to the workspace %v; all: %+v", denied, allowed, h.rec.Exercises())
	}
}

func TestReactorInitializerRunsOnceBeforeTheCall(t *testing.T) {
	h := newHarness(t, Config{PoolSize: 1})
	p := modulePack(t, "init", "", "testdata/plugin_init.wasm", map[string]string{"count": "count", "bump": "bump"})
	for i := 0; i < 5; i++ {
		for _, tool := range []string{"count", "bump"} {
			res, err := h.invoke(p, tool, `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Output); got != "1" {
				t.Fatalf("call %d of %s: got %s, want 1 (one initialization, a fresh instance)", i, tool, got)
			}
		}
	}
}

func TestNetworkGrantedAndDenied(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"pong":true}`)
	}))
	defer srv.Close()
	h := newHarness(t, Config{})
	req := fmt.Sprintf(`{"url": %q, "method": "GET"}`, srv.URL+"/ping")

	asks := modulePack(t, "net", "[capabilities]\nnetwork = [\"127.0.0.1:*\"]\n", "testdata/plugin_http.wasm", map[string]string{"get": "get"})
	silent := modulePack(t, "net-silent", "", "testdata/plugin_http.wasm", map[string]string{"get": "get"})
	cases := []struct {
		name    string
		p       *packs.Pack
		granted []capability.Name
		denied  bool
	}{
		{"granted", asks, nil, false},
		{"requested, not granted", asks, []capability.Name{}, true},
		{"never requested", silent, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := h.invocation(c.p, "get", req, h.grant(c.p, c.granted))
			res, err := h.rt.invoke(context.Background(), inv)
			recs := h.rec.find(inv.ID, capability.Network)
			if c.denied {
				if !errors.Is(err, capability.ErrDenied) {
					t.Fatalf("got %v, want a denial", err)
				}
				if len(recs) == 0 || recs[0].Allowed {
					t.Fatalf("the denial was not recorded: %+v", recs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(res.Output), `{"pong":true}`; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			if len(recs) == 0 || !recs[0].Allowed {
				t.Fatalf("the request was not recorded as allowed: %+v", recs)
			}
		})
	}
}

func TestEnvGrantedAndDenied(t *testing.T) {
	wasm := needGoPlugin(t)
	t.Setenv("PROBE_TEST_VISIBLE", "seen")
	t.Setenv("PROBE_TEST_HIDDEN", "secret")
	h := newHarness(t, Config{})
	p := modulePack(t, "env", "[capabilities]\nenv_read = [\"PROBE_TEST_VISIBLE\"]\n", wasm, map[string]string{"getenv": "getenv"})
	cases := []struct {
		name, variable string
		granted        []capability.Name
		want           string
	}{
		{"granted", "PROBE_TEST_VISIBLE", nil, `{"set":true,"value":"seen"}`},
		{"not in the grant", "PROBE_TEST_HIDDEN", nil, `{"set":false,"value":""}`},
		{"requested, not granted", "PROBE_TEST_VISIBLE", []capability.Name{}, `{"set":false,"value":""}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := h.invocation(p, "getenv", `{"name":"`+c.variable+`"}`, h.grant(p, c.granted))
			res, err := h.rt.invoke(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Output); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			recs := h.rec.find(inv.ID, capability.EnvRead)
			exposed := len(recs) == 1 && recs[0].Allowed && recs[0].Resource == "PROBE_TEST_VISIBLE"
			if exposed != (c.granted == nil) {
				t.Fatalf("recorded exposures %+v (granted: %v)", recs, c.granted == nil)
			}
		})
	}
}

func TestGoPluginReadsPackAndNotHost(t *testing.T) {
	wasm := needGoPlugin(t)
	h := newHarness(t, Config{})
	p := modulePack(t, "reader", "", wasm, map[string]string{"read": "readfile"})
	if err := os.WriteFile(filepath.Join(h.ws, "note.txt"), []byte("name: reader, from the workspace"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path    string
		content bool
	}{
		{"/pack/SKILL.md", true},
		{"note.txt", true}, // relative to the working directory, /workspace
		{"/etc/passwd", false},
		{"/pack/../../../etc/passwd", false},
	}
	for _, c := range cases {
		res, err := h.invoke(p, "read", `{"path":"`+c.path+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Content, Error string }
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
		if got := out.Error == ""; got != c.content {
			t.Errorf("%s: read %v (%s), want %v", c.path, got, res.Output, c.content)
		}
		if c.content && !strings.Contains(out.Content, "name: reader") {
			t.Errorf("%s: got %q", c.path, out.Content)
		}
	}
}

func TestExecTool(t *testing.T) {
	h := newHarness(t, Config{})
	tools := `[{"name": "say", "description": "Prints its arguments.",
	  "input_schema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "n": {"type": "integer"}}, "required": ["a"]},
	  "run": {"exec": ["printf", "%s|%s|%s", "{{a}}", "--b={{b}}", "{{n}}"]}}]`
	p := testPack{name: "say", toml: "[capabilities]\nterminal_exec = { commands = [\"printf\"] }\n", tools: tools}.load(t)
	hostile := `; rm -rf / $(touch pwned) ` + "`id`" + ` "quoted" 'single'`

	inv := h.invocation(p, "say", `{"a":`+jsonString(hostile)+`,"b":"two words","n":42}`, h.grant(p, nil))
	res, err := h.rt.invoke(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := json.Unmarshal(res.Output, &got); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	if want := hostile + "|--b=two words|42"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "pwned")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a shell ran the arguments")
	}
	if recs := h.rec.find(inv.ID, capability.TerminalExec); len(recs) != 1 || !recs[0].Allowed {
		t.Fatalf("exec not recorded as allowed: %+v", recs)
	}

	t.Run("missing value", func(t *testing.T) {
		_, err := h.invoke(p, "say", `{"a":"x"}`)
		if !errors.Is(err, packs.ErrInvalidInput) {
			t.Fatalf("got %v, want packs.ErrInvalidInput", err)
		}
	})
	t.Run("not granted", func(t *testing.T) {
		inv := h.invocation(p, "say", `{"a":"x","b":"y","n":1}`, h.grant(p, []capability.Name{}))
		_, err := h.rt.invoke(context.Background(), inv)
		if !errors.Is(err, capability.ErrDenied) {
			t.Fatalf("got %v, want a denial", err)
		}
		if recs := h.rec.find(inv.ID, capability.TerminalExec); len(recs) != 1 || recs[0].Allowed {
			t.Fatalf("denial not recorded: %+v", recs)
		}
	})
}

func TestExecToolLimits(t *testing.T) {
	h := newHarness(t, Config{})
	tools := `[
	  {"name": "sleep", "description": "Sleeps.", "input_schema": {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}, "run": {"exec": ["sleep", "{{s}}"]}},
	  {"name": "fail", "description": "Fails.", "input_schema": {"type": "object"}, "run": {"exec": ["false"]}}]`
	p := testPack{name: "slow", toml: "[capabilities]\nterminal_exec = { commands = [\"sleep\", \"false\"] }\n[limits]\ntimeout_ms = 200\n", tools: tools}.load(t)
	begin := time.Now()
	if _, err := h.invoke(p, "sleep", `{"s":"30"}`); !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Fatalf("the timeout took %s", took)
	}
	res, err := h.invoke(p, "fail", `{}`)
	if !errors.Is(err, ErrToolFailed) || res.ExitCode != 1 {
		t.Fatalf("got %v (exit %d), want ErrToolFailed with exit 1", err, res.ExitCode)
	}
}

func TestInvocationChecks(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "checks", "", wasiEcho, map[string]string{"echo": ""})
	q := modulePack(t, "other", "", wasiEcho, map[string]string{"echo": ""})
	cases := []struct {
		name   string
		mutate func(*Invocation)
		denied bool
	}{
		{"grant of another pack", func(inv *Invocation) { inv.Grant = h.grant(q, nil) }, true},
		{"zero grant", func(inv *Invocation) { inv.Grant = capability.Grant{} }, true},
		{"no recorder", func(inv *Invocation) { inv.Recorder = nil }, false},
		{"relative workspace", func(inv *Invocation) { inv.Workspace = "ws" }, false},
		{"tool of another pack", func(inv *Invocation) { inv.Tool = q.Tools[0] }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := h.invocation(p, "echo", `{}`, h.grant(p, nil))
			c.mutate(&inv)
			res, err := h.rt.invoke(context.Background(), inv)
			if err == nil || res.Output != nil {
				t.Fatalf("got %s, %v; want a refusal", res.Output, err)
			}
			if errors.Is(err, capability.ErrDenied) != c.denied {
				t.Fatalf("got %v; denial: %v", err, c.denied)
			}
		})
	}
}

func TestModuleChangedOnDisk(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "swap", "", wasiEcho, map[string]string{"tool": ""})
	if _, err := h.invoke(p, "tool", `{}`); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/wasi_fail.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.Dir, "bin/x.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.invoke(p, "tool", `{}`); !errors.Is(err, ErrToolFailed) {
		t.Fatalf("got %v: the new module's failure, want ErrToolFailed", err)
	}
}

func TestPrecompile(t *testing.T) {
	cache := t.TempDir()
	h := newHarness(t, Config{CacheDir: cache})
	p := testPack{name: "both", tools: `[
	  {"name": "w", "description": "WASI.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/w.wasm", "abi": "wasi"}},
	  {"name": "e", "description": "Extism.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/e.wasm", "function": "echo"}}]`,
		files: map[string]string{"bin/w.wasm": wasiEcho, "bin/e.wasm": pluginWasm}}.load(t)
	if err := h.rt.Precompile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) == 0 {
		t.Fatalf("the cache directory is empty after Precompile: %v", err)
	}

	garbage := filepath.Join(t.TempDir(), "garbage.wasm")
	if err := os.WriteFile(garbage, []byte("\x00asm\x01\x00\x00\x00\x01\xffnot a section"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name, tools string
		files       map[string]string
	}{
		{"missing export", `[{"name": "x", "description": "X.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "function": "nope"}}]`, map[string]string{"bin/x.wasm": pluginWasm}},
		{"wasi without _start", `[{"name": "x", "description": "X.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "abi": "wasi"}}]`, map[string]string{"bin/x.wasm": pluginWasm}},
		{"not wasm inside", `[{"name": "x", "description": "X.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "abi": "wasi"}}]`, map[string]string{"bin/x.wasm": garbage}},
	}
	for i, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			p := testPack{name: fmt.Sprintf("bad-%d", i), tools: c.tools, files: c.files}.load(t)
			if err := h.rt.Precompile(context.Background(), p); !errors.Is(err, ErrModule) {
				t.Fatalf("got %v, want ErrModule", err)
			}
		})
	}
}

func TestClosed(t *testing.T) {
	h := newHarness(t, Config{})
	p := modulePack(t, "closed", "", wasiEcho, map[string]string{"echo": ""})
	if _, err := h.invoke(p, "echo", `{}`); err != nil {
		t.Fatal(err)
	}
	if err := h.rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.invoke(p, "echo", `{}`); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
	if err := h.rt.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestHammer runs 8 goroutines of calls through the pools at once: each
// call must see exactly its own input.
func TestHammer(t *testing.T) {
	h := newHarness(t, Config{PoolSize: 3})
	sources := map[string]string{"wasi": wasiEcho, "extism": pluginWasm}
	var ps []*packs.Pack
	for name, src := range sources {
		fn := ""
		if name == "extism" {
			fn = "echo"
		}
		ps = append(ps, modulePack(t, "hammer-"+name, "", src, map[string]string{"echo": fn}))
	}
	const workers, calls = 8, 60
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				p := ps[(w+i)%len(ps)]
				in := fmt.Sprintf(`{"worker":%d,"call":%d,"pad":"%s"}`, w, i, strings.Repeat("z", (w*31+i)%200))
				res, err := h.invoke(p, "echo", in)
				switch {
				case err != nil:
					errs <- err
				case string(res.Output) != in:
					errs <- fmt.Errorf("worker %d call %d saw %s", w, i, res.Output)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := goruntime.NumGoroutine()
	rt, err := New(context.Background(), Config{PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{tb: t, rt: rt, ws: t.TempDir(), rec: &recorder{}}
	for i, src := range []string{wasiEcho, pluginWasm} {
		p := modulePack(t, fmt.Sprintf("leak-%d", i), "", src, map[string]string{"echo": map[int]string{0: "", 1: "echo"}[i]})
		for j := 0; j < 5; j++ {
			if _, err := h.invoke(p, "echo", `{}`); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for goruntime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := goruntime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before New, %d after Close:\n%s", before, after, buf[:goruntime.Stack(buf, true)])
	}
}

func TestPoolBounds(t *testing.T) {
	// Room for three ready instances at most: each costs at least what it
	// holds on the heap.
	const budget = 3*instanceHeap + instanceHeap/2
	h := newHarness(t, Config{PoolSize: 1, PoolMemory: budget})
	p := modulePack(t, "many", "", wasiEcho, map[string]string{"echo": ""})
	g := h.grant(p, nil)
	for i := 0; i < 21; i++ {
		inv := h.invocation(p, "echo", `{}`, g)
		inv.Workspace = t.TempDir() // a new workspace is a new pool key
		if _, err := h.rt.invoke(context.Background(), inv); err != nil {
			t.Fatal(err)
		}
		waitPoolsFull(h.rt)
		h.rt.mu.Lock()
		pooled, holding, newest := h.rt.pooled, 0, 0
		var sum int64
		for k, p := range h.rt.pools {
			sum += p.bytes
			if len(p.ready) > 0 {
				holding++
				if k.workspace == inv.Workspace {
					newest++
				}
			}
		}
		h.rt.mu.Unlock()
		if newest != 1 {
			t.Fatalf("after %d keys: the key just used has no ready instance: older ones were kept instead", i+1)
		}
		if pooled > budget || sum != pooled {
			t.Fatalf("after %d keys: the pools hold %d bytes (counted %d), the budget is %d", i+1, sum, pooled, budget)
		}
		if holding > 3 {
			t.Fatalf("after %d keys: %d pools hold instances, room for 3", i+1, holding)
		}
	}
}

func TestPoolDisabled(t *testing.T) {
	h := newHarness(t, Config{PoolSize: -1})
	p := modulePack(t, "nopool", "", pluginWasm, map[string]string{"echo": "echo"})
	for i := 0; i < 3; i++ {
		if res, err := h.invoke(p, "echo", `{"i":1}`); err != nil || string(res.Output) != `{"i":1}` {
			t.Fatalf("got %s, %v", res.Output, err)
		}
	}
	if len(h.rt.pools) != 0 {
		t.Fatalf("%d pools with the pool disabled", len(h.rt.pools))
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFirstCallHitsTheDiskCache proves that a new Runtime (a new process,
// as far as compiled code goes) whose cache was filled by Precompile
// compiles nothing: wazero writes a cache file for every compile, and none
// appears.
func TestFirstCallHitsTheDiskCache(t *testing.T) {
	cache := t.TempDir()
	tools := `[
	  {"name": "w", "description": "WASI.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/w.wasm", "abi": "wasi"}},
	  {"name": "e", "description": "Extism.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/e.wasm", "function": "echo"}}]`
	p := testPack{name: "cached", tools: tools, files: map[string]string{"bin/w.wasm": wasiEcho, "bin/e.wasm": pluginWasm}}.load(t)
	first := newHarness(t, Config{CacheDir: cache})
	if err := first.rt.Precompile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	first.rt.Close(context.Background())
	files := func() []string {
		var out []string
		filepath.WalkDir(cache, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, path)
			}
			return nil
		})
		return out
	}
	before := files()
	if len(before) == 0 {
		t.Fatal("Precompile wrote nothing to the cache")
	}
	second := newHarness(t, Config{CacheDir: cache})
	for _, tool := range []string{"w", "e"} {
		if _, err := second.invoke(p, tool, `{"x":1}`); err != nil {
			t.Fatal(err)
		}
	}
	if after := files(); len(after) != len(before) {
		t.Fatalf("the first calls compiled: %d cache files before, %d after", len(before), len(after))
	}
}

// TestPoolRefills checks that the pool is filled in the background (one
// instance for a pack called once: see TestPoolGrowsWithDemand), that a
// call takes an instance built before it began, that the pool is topped
// up after the call, and that a grant which makes a variable visible is
// never served from the pool: an instance built ahead of its call is shown
// no variable, and the environment is fixed once it is built.
func TestPoolRefills(t *testing.T) {
	t.Setenv("PROBE_POOL_TEST", "1")
	h := newHarness(t, Config{PoolSize: 2})
	p := modulePack(t, "refill", "", pluginWasm, map[string]string{"echo": "echo"})
	g := h.grant(p, nil)
	if _, err := h.rt.invoke(context.Background(), h.invocation(p, "echo", `{}`, g)); err != nil {
		t.Fatal(err)
	}
	h.rt.mu.Lock()
	var pl *pool
	for _, v := range h.rt.pools {
		pl = v
	}
	h.rt.mu.Unlock()
	full := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(pl.ready) < 1 {
			if time.Now().After(deadline) {
				t.Fatalf("the pool holds %d instances, want 1", len(pl.ready))
			}
			time.Sleep(time.Millisecond)
		}
	}
	full()
	if _, err := h.rt.invoke(context.Background(), h.invocation(p, "echo", `{}`, g)); err != nil {
		t.Fatal(err)
	}
	full()

	env := modulePack(t, "refill-env", "[capabilities]\nenv_read = [\"PROBE_POOL_TEST\"]\n", pluginWasm, map[string]string{"echo": "echo"})
	inv := h.invocation(env, "echo", `{}`, h.grant(env, nil))
	begin := time.Now()
	if _, err := h.rt.invoke(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	recs := h.rec.find(inv.ID, capability.EnvRead)
	if len(recs) != 1 || !recs[0].Allowed || recs[0].Time.Before(begin) {
		t.Fatalf("want one exposure, allowed, recorded during the approved call (after %s): %+v", begin, recs)
	}
	h.rt.mu.Lock()
	pools := len(h.rt.pools)
	h.rt.mu.Unlock()
	if pools != 1 {
		t.Fatalf("%d pools, want 1: a grant with visible variables must not be pooled", pools)
	}
}

// TestCloseStopsCallsInFlight closes the Runtime while guests run: each
// call ends with ErrClosed, Close waits for the calls it counts in flight,
// and nothing crashes (their memories are unmapped only after they stopped).
//
// Whether Close waited is checked on the counter itself, with one call held
// open by the test: an Invoke returns to its caller only after it left the
// counter, so a channel send after Invoke can trail Close by a scheduling
// delay and cannot tell a Close that waited from one that did not.
func TestCloseStopsCallsInFlight(t *testing.T) {
	h := newHarness(t, Config{})
	loops := []*packs.Pack{
		modulePack(t, "spin-wasi", "", "testdata/wasi_loop.wasm", map[string]string{"loop": ""}),
		modulePack(t, "spin-extism", "", pluginWasm, map[string]string{"loop": "loop"}),
	}
	errs := make(chan error, 2*len(loops))
	for _, p := range loops {
		for range 2 {
			inv := h.invocation(p, "loop", `{}`, h.grant(p, nil))
			go func() {
				_, err := h.rt.invoke(context.Background(), inv)
				errs <- err
			}()
		}
	}
	time.Sleep(200 * time.Millisecond) // let them start spinning
	h.rt.calls.Add(1)                  // a call the test ends itself
	closed := make(chan error, 1)
	go func() { closed <- h.rt.Close(context.Background()) }()
	for range 2 * len(loops) {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("got %v, want ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call in flight did not end after Close")
		}
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was still counted in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	h.rt.calls.Done()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
