package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// goPluginWasm is testdata/goplugin built by TestMain ("" when the Go
// toolchain cannot build it; the tests that need it skip, saying why).
var goPluginWasm string

// goPluginErr says why goPluginWasm is empty.
var goPluginErr error

// sharedCache is the compilation cache of every harness that names none,
// so the Go plugin compiles once per test run instead of once per test.
var sharedCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runtime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	goPluginWasm, goPluginErr = buildGoPlugin(dir)
	sharedCache = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildGoPlugin builds testdata/goplugin into dir with the standard Go
// toolchain (the build cache makes repeated runs fast).
func buildGoPlugin(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is not on PATH: %w", err)
	}
	out := filepath.Join(dir, "goplugin.wasm")
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", out, ".")
	cmd.Dir = filepath.Join("testdata", "goplugin")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building testdata/goplugin: %v\n%s", err, b)
	}
	return out, nil
}

// needGoPlugin skips tb when the Go plugin could not be built.
func needGoPlugin(tb testing.TB) string {
	tb.Helper()
	if goPluginWasm == "" {
		tb.Skipf("the Go plugin guest is unavailable: %v", goPluginErr)
	}
	return goPluginWasm
}

// testPack describes a pack to write and load.
type testPack struct {
	name  string
	toml  string            // skill.toml; "" for none
	tools string            // tools.json
	files map[string]string // pack-relative path → source file to copy
}

// load writes the pack into a temporary folder and loads it.
func (tp testPack) load(tb testing.TB) *packs.Pack {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), tp.name)
	write := func(rel string, data []byte) {
		tb.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("SKILL.md", []byte("---\nname: "+tp.name+"\ndescription: A pack the runtime tests run.\n---\n# "+tp.name+"\n"))
	if tp.toml != "" {
		write("skill.toml", []byte(tp.toml))
	}
	write("tools.json", []byte(tp.tools))
	for rel, src := range tp.files {
		b, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		write(rel, b)
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		tb.Fatalf("loading test pack %s: %v", tp.name, err)
	}
	return p
}

// wasmTools is a tools.json with one tool per entry, all on module
// bin/x.wasm: name → Extism function, or "" for a WASI command. Every tool
// takes any object.
func wasmTools(tools map[string]string) string {
	var parts []string
	for name, fn := range tools {
		run := `{"wasm": "bin/x.wasm", "abi": "wasi"}`
		if fn != "" {
			run = fmt.Sprintf(`{"wasm": "bin/x.wasm", "function": %q}`, fn)
		}
		parts = append(parts, fmt.Sprintf(`{"name": %q, "description": "A test tool.", "input_schema": {"type": "object"}, "run": %s}`, name, run))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// modulePack is a pack whose tools (see wasmTools) run testdata module src.
func modulePack(tb testing.TB, name, toml, src string, tools map[string]string) *packs.Pack {
	tb.Helper()
	return testPack{name: name, toml: toml, tools: wasmTools(tools), files: map[string]string{"bin/x.wasm": src}}.load(tb)
}

// recorder keeps every exercise.
type recorder struct{ capability.MemoryRecorder }

// find returns the exercises of capability n for invocation id.
func (r *recorder) find(id string, n capability.Name) []capability.Exercise {
	var out []capability.Exercise
	for _, e := range r.Exercises() {
		if e.Invocation == id && e.Capability == n {
			out = append(out, e)
		}
	}
	return out
}

// yes approves every call.
type yes struct{}

func (yes) Name() string { return "test" }
func (yes) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

// harness is a Runtime, a workspace and a recorder for one test.
type harness struct {
	tb  testing.TB
	rt  *Runtime
	ws  string
	rec *recorder
	ids atomic.Int64
}

func newHarness(tb testing.TB, cfg Config) *harness {
	tb.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = sharedCache
	}
	rt, err := New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close(context.Background()) })
	return &harness{tb: tb, rt: rt, ws: tb.TempDir(), rec: &recorder{}}
}

// grant resolves p's grant with every requested capability granted, or
// only those in names when names is not nil.
func (h *harness) grant(p *packs.Pack, names []capability.Name) capability.Grant {
	h.tb.Helper()
	req := p.Request()
	if names == nil {
		names = req.Names()
	}
	var user []capability.UserGrant
	for _, n := range names {
		user = append(user, capability.UserGrant{Capability: n, Scope: capability.ScopeOnce})
	}
	g, err := capability.Resolve(capability.PackRef{Name: p.Name}, req, user, nil, capability.Env{Workspace: h.ws, Getenv: os.Getenv})
	if err != nil {
		h.tb.Fatal(err)
	}
	return g
}

// invocation builds an approved invocation of tool with input under g.
func (h *harness) invocation(p *packs.Pack, tool, input string, g capability.Grant) Invocation {
	h.tb.Helper()
	t, ok := p.Tool(tool)
	if !ok {
		h.tb.Fatalf("pack %s has no tool %s", p.Name, tool)
	}
	id := fmt.Sprintf("inv-%d", h.ids.Add(1))
	a, err := capability.NewGate(yes{}).Decide(context.Background(), capability.Pending{Invocation: id, Pack: p.Name, Tool: tool, Arguments: json.RawMessage(input), Grant: g})
	if err != nil {
		h.tb.Fatal(err)
	}
	return Invocation{Pack: p, Tool: t, Input: json.RawMessage(input), Grant: g, Approval: a, ID: id, Workspace: h.ws, Recorder: h.rec}
}

// invoke runs tool with input, everything the pack asks for granted.
func (h *harness) invoke(p *packs.Pack, tool, input string) (Result, error) {
	h.tb.Helper()
	return h.rt.invoke(context.Background(), h.invocation(p, tool, input, h.grant(p, nil)))
}

// userGrants is a GrantSource that returns the same grants for every pack.
type userGrants []capability.UserGrant

func (u userGrants) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return u, nil
}
func (u userGrants) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return u, nil
}

// pipeline returns a Pipeline on the harness's runtime that grants p
// everything it asks for, persistently, and audits into h.rec.
func (h *harness) pipeline(p *packs.Pack) *Pipeline {
	h.tb.Helper()
	var user userGrants
	for _, n := range p.Request().Names() {
		user = append(user, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
	}
	pl, err := NewPipeline(h.rt, PipelineConfig{Grants: user, Audit: h.rec, Getenv: os.Getenv})
	if err != nil {
		h.tb.Fatal(err)
	}
	return pl
}

// call runs tool through the pipeline, approved.
func (h *harness) call(pl *Pipeline, p *packs.Pack, tool, input string) Outcome {
	h.tb.Helper()
	o, err := pl.Call(context.Background(), Request{
		Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: tool, Arguments: json.RawMessage(input),
		Workspace: h.ws, Approvers: []capability.Approver{yes{}},
	})
	if err != nil {
		h.tb.Fatal(err)
	}
	return o
}
