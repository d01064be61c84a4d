package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/packs-run/packs/capability"
)

// The probe guest, built once per test binary in four variants: "base"
// imports no group's host functions, "net" adds network, "exec" adds
// terminal_exec, "full" both.
var (
	probes      = map[string][]byte{}
	probeErr    error
	testDir     string // removed when the tests end
	wasmCache   wazero.CompilationCache
	compiledMu  sync.Mutex
	compiledFor = map[string]*extism.CompiledPlugin{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hostfns-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testDir = dir
	probeErr = buildProbes(dir)
	ctx := context.Background()
	wasmCache, err = wazero.NewCompilationCacheWithDir(filepath.Join(dir, "cache"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	for _, cp := range compiledFor {
		cp.Close(ctx)
	}
	wasmCache.Close(ctx)
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildProbes(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("no go toolchain on PATH to build the probe guest: %w", err)
	}
	for variant, tags := range map[string]string{"base": "", "net": "net", "exec": "exec", "full": "net,exec"} {
		out := filepath.Join(dir, "probe-"+variant+".wasm")
		cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-tags", tags, "-o", out, ".")
		cmd.Dir = filepath.Join("testdata", "probe")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=-mod=mod")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the probe guest (%s): %v\n%s", variant, err, b)
		}
		if probes[variant], err = os.ReadFile(out); err != nil {
			return err
		}
	}
	return nil
}

// memRecorder is a capability.Recorder that keeps exercises in memory. It
// fails every record while fail is set.
type memRecorder struct {
	capability.MemoryRecorder
	fail error
}

func (r *memRecorder) RecordExercise(e capability.Exercise) error {
	if r.fail != nil {
		return r.fail
	}
	return r.MemoryRecorder.RecordExercise(e)
}

func (r *memRecorder) all() []capability.Exercise { return r.Exercises() }

// has reports whether an exercise of n on resource with the given outcome
// was recorded.
func (r *memRecorder) has(n capability.Name, resource string, allowed bool) bool {
	return slices.ContainsFunc(r.all(), func(e capability.Exercise) bool {
		return e.Capability == n && e.Resource == resource && e.Allowed == allowed
	})
}

func (r *memRecorder) denials() []capability.Exercise {
	return slices.DeleteFunc(r.all(), func(e capability.Exercise) bool { return e.Allowed })
}

// requireRecorded fails t unless the exercise was recorded.
func requireRecorded(t *testing.T, r *memRecorder, n capability.Name, resource string, allowed bool) {
	t.Helper()
	if !r.has(n, resource, allowed) {
		t.Fatalf("no exercise {%s %q allowed=%v} recorded; got:\n%s", n, resource, allowed, dump(r.all()))
	}
}

func dump(ex []capability.Exercise) string {
	var b strings.Builder
	for _, e := range ex {
		fmt.Fprintf(&b, "  %s %q allowed=%v (%s)\n", e.Capability, e.Resource, e.Allowed, e.Reason)
	}
	return b.String()
}

// grantOf resolves req as if the person granted all of it.
func grantOf(t testing.TB, req capability.Request, workspace string) capability.Grant {
	t.Helper()
	var user []capability.UserGrant
	for _, n := range req.Names() {
		user = append(user, capability.UserGrant{Capability: n, Scope: capability.ScopeOnce})
	}
	g, err := capability.Resolve(capability.PackRef{Name: "probe"}, req, user, nil,
		capability.Env{Home: t.TempDir(), Workspace: workspace, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// newCall returns a Call for pack "probe" with a fresh pack root (holding
// SKILL.md) and workspace, granted req.
func newCall(t testing.TB, req capability.Request) (*Call, *memRecorder) {
	t.Helper()
	root := t.TempDir()
	pack := filepath.Join(root, "pack")
	ws := filepath.Join(root, "workspace")
	for _, d := range []string{pack, ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pack, "SKILL.md"), []byte("---\nname: probe\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	c := &Call{
		Pack: "probe", Tool: "probe", Invocation: "inv-1",
		Grant: grantOf(t, req, ws), Recorder: rec,
		PackRoot: pack, Workspace: ws,
		Logger: slog.New(slog.DiscardHandler),
	}
	approve(t, c)
	return c, rec
}

// approve has the gate approve c as it stands (its invocation, pack, tool
// and grant): host functions refuse every exercise of an unapproved call.
func approve(t testing.TB, c *Call) {
	t.Helper()
	a, err := capability.NewGate(approveAll{}).Decide(context.Background(), capability.Pending{Invocation: c.Invocation, Pack: c.Pack, Tool: c.Tool, Grant: c.Grant})
	if err != nil {
		t.Fatal(err)
	}
	c.Approval = a
}

// approveAll approves every call.
type approveAll struct{}

func (approveAll) Name() string { return "test" }
func (approveAll) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

// report is what the probe answers.
type report struct {
	OK      bool              `json:"ok"`
	Error   string            `json:"error"`
	Data    string            `json:"data"`
	Entries []string          `json:"entries"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Found   bool              `json:"found"`
	Exec    json.RawMessage   `json:"exec"`
}

// probeEnv is the host environment the e2e tests pass to Environ.
var probeEnv = []string{"SECRET=hunter2", "PROBE_TOKEN=t0k3n", "PROBE_OTHER=x", "HOME=/root"}

// compiled returns the probe variant compiled with the host functions of
// the groups it imports, as the runtime does, shared by the tests (the Call
// comes from the context).
func compiled(t testing.TB, variant string) *extism.CompiledPlugin {
	t.Helper()
	if probeErr != nil {
		t.Skip(probeErr)
	}
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if cp, ok := compiledFor[variant]; ok {
		return cp
	}
	wasm, err := RewriteImports(probes[variant])
	if err != nil {
		t.Fatal(err)
	}
	groups, err := ImportedGroups(wasm)
	if err != nil {
		t.Fatal(err)
	}
	cfg := extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(wasmCache).WithCloseOnContextDone(true),
	}
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}}
	cp, err := extism.NewCompiledPlugin(context.Background(), manifest, cfg, ExtismFunctions(groups))
	if err != nil {
		t.Fatal(err)
	}
	compiledFor[variant] = cp
	return cp
}

// runProbe runs one probe command as the runtime would: Require the
// module's groups, build the FS and environment from c, instantiate, call
// with c in the context. An error is the call's (a trap or a denial).
func runProbe(t testing.TB, c *Call, variant string, cmd any) (report, error) {
	t.Helper()
	return runProbeIn(context.Background(), t, c, variant, cmd)
}

// runProbeIn is runProbe with the guest's call made in ctx (which may carry
// a Notifier).
func runProbeIn(ctx context.Context, t testing.TB, c *Call, variant string, cmd any) (report, error) {
	t.Helper()
	cp := compiled(t, variant)
	wasm, err := RewriteImports(probes[variant])
	if err != nil {
		t.Fatal(err)
	}
	groups, err := ImportedGroups(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := Require(c, groups); err != nil {
		return report{}, err
	}
	fsc, err := FS(c)
	if err != nil {
		t.Fatal(err)
	}
	mc := wazero.NewModuleConfig().WithFSConfig(fsc)
	for k, v := range Environ(c, probeEnv) {
		mc = mc.WithEnv(k, v)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	inst, err := cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	in, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := inst.CallWithContext(WithCall(ctx, c), "probe", in)
	if err != nil {
		return report{}, err
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("probe output %q: %v", out, err)
	}
	return r, nil
}

// pluginInstance configures an instance with fsc as its filesystem.
func pluginInstance(fsc wazero.FSConfig) extism.PluginInstanceConfig {
	return extism.PluginInstanceConfig{ModuleConfig: wazero.NewModuleConfig().WithFSConfig(fsc)}
}

// mustProbe is runProbe for a call that must not fail.
func mustProbe(t testing.TB, c *Call, variant string, cmd any) report {
	t.Helper()
	r, err := runProbe(t, c, variant, cmd)
	if err != nil {
		t.Fatalf("probe %v: %v", cmd, err)
	}
	return r
}

// op builds a probe command.
type op map[string]any

// bufLogger returns a Logger writing text lines to a buffer at level.
func bufLogger(level slog.Level) (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level})), b
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
