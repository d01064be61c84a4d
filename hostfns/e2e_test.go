package hostfns_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// The attacks again, end to end: the probe installed as a pack, run by
// runtime.Invoke with a grant resolved by capability.Resolve and the gate's
// approval, exactly as `packs run` does.

type recorder struct{ capability.MemoryRecorder }

func (r *recorder) denied(n capability.Name, resource string) bool {
	return slices.ContainsFunc(r.Exercises(), func(e capability.Exercise) bool {
		return !e.Allowed && e.Capability == n && e.Resource == resource
	})
}

type yes struct{}

func (yes) Name() string { return "e2e" }
func (yes) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

type e2e struct {
	rt   *runtime.Runtime
	pack *packs.Pack
	ws   string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	wasm, err := hostfns.ProbeWasm("full")
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "probe")
	files := map[string]string{
		"SKILL.md": "---\nname: probe\ndescription: Tries every door of the host and reports what happened.\n---\n# probe\n",
		"skill.toml": `[skill]
id = "probe"
version = "1.0.0"

[capabilities]
network = ["localhost:*", "127.0.0.1:*"]
env_read = ["PROBE_TOKEN"]
terminal_exec = { allowed = true, commands = ["echo"] }

[limits]
timeout = "3s"
memory_mb = 128
# Far below what "output past the limit" writes (1 MiB), so the cap is
# reached long before the time limit can be, however loaded the machine.
output_bytes = 65536
`,
		"tools.json": `[{"name": "probe", "description": "Runs one probe command.",
  "input_schema": {"type": "object"}, "run": {"wasm": "probe.wasm", "function": "probe"}}]`,
		"probe.wasm": string(wasm),
	}
	for name, body := range files {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: hostfns.E2ECacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	t.Setenv("PROBE_TOKEN", "t0k3n")
	t.Setenv("SECRET", "hunter2")
	return &e2e{rt: rt, pack: p, ws: t.TempDir()}
}

// invoke runs one probe command through the pipeline, approved, with
// everything the probe asks for granted once.
func (e *e2e) invoke(t *testing.T, cmd map[string]any) (map[string]any, *recorder, error) {
	t.Helper()
	var user onceGrants
	for _, n := range e.pack.Request().Names() {
		user = append(user, capability.UserGrant{Capability: n, Scope: capability.ScopeOnce})
	}
	rec := &recorder{}
	pl, err := runtime.NewPipeline(e.rt, runtime.PipelineConfig{Grants: user, Audit: rec, Home: t.TempDir(), Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(cmd)
	o, err := pl.Call(context.Background(), runtime.Request{
		Pack: e.pack, Ref: capability.PackRef{Name: e.pack.Name}, Tool: "probe", Arguments: in,
		Workspace: e.ws, Approvers: []capability.Approver{yes{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if o.Err == nil {
		if jerr := json.Unmarshal(o.Output, &out); jerr != nil {
			t.Fatalf("output %q: %v", o.Output, jerr)
		}
	}
	return out, rec, o.Err
}

// onceGrants is the person's grants: the same for every call.
type onceGrants []capability.UserGrant

func (g onceGrants) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}
func (g onceGrants) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}

func TestE2EAttacks(t *testing.T) {
	e := newE2E(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "loot"), []byte("loot"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, name string }{{"/etc/passwd", "passwd"}, {outside, "out"}} {
		if err := os.Symlink(l.target, filepath.Join(e.ws, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	fsCases := []struct {
		name     string
		cmd      map[string]any
		cap      capability.Name
		resource string
	}{
		{"read /etc/passwd", map[string]any{"op": "read", "path": "/etc/passwd"}, capability.FilesystemRead, "/etc/passwd"},
		{"read through ..", map[string]any{"op": "read", "path": "../../../../etc/passwd"}, capability.FilesystemRead, "/etc/passwd"},
		{"read through a symlink to /etc/passwd", map[string]any{"op": "read", "path": "passwd"}, capability.FilesystemRead, filepath.Join(e.ws, "passwd")},
		{"read through a symlink to a directory outside", map[string]any{"op": "read", "path": "out/loot"}, capability.FilesystemRead, filepath.Join(e.ws, "out", "loot")},
		{"write to the pack root", map[string]any{"op": "write", "path": "/pack/SKILL.md", "data": "x"}, capability.FilesystemWrite, filepath.Join(e.pack.Dir, "SKILL.md")},
	}
	for _, tc := range fsCases {
		t.Run(tc.name, func(t *testing.T) {
			out, rec, err := e.invoke(t, tc.cmd)
			if err != nil || out["ok"] == true {
				t.Fatalf("= %v, %v; want a refusal reported by the guest", out, err)
			}
			if !rec.denied(tc.cap, tc.resource) {
				t.Fatalf("no denial of %s %s recorded: %+v", tc.cap, tc.resource, rec.Exercises())
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(e.pack.Dir, "SKILL.md")); !strings.HasPrefix(string(b), "---\nname: probe") {
		t.Fatal("the pack root changed")
	}

	t.Run("read an env var that was not granted", func(t *testing.T) {
		out, rec, err := e.invoke(t, map[string]any{"op": "config", "name": "SECRET"})
		if err != nil || out["found"] == true {
			t.Fatalf("= %v, %v; want not found", out, err)
		}
		if !rec.denied(capability.EnvRead, "SECRET") {
			t.Fatalf("no denial recorded: %+v", rec.Exercises())
		}
		if out, _, err := e.invoke(t, map[string]any{"op": "getenv", "name": "SECRET"}); err != nil || out["found"] == true {
			t.Fatalf("getenv SECRET = %v, %v", out, err)
		}
		if out, _, err := e.invoke(t, map[string]any{"op": "getenv", "name": "PROBE_TOKEN"}); err != nil || out["data"] != "t0k3n" {
			t.Fatalf("getenv PROBE_TOKEN = %v, %v; want the granted value", out, err)
		}
	})

	var hits sync.Map
	count := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			n, _ := hits.LoadOrStore(name, new(int))
			*n.(*int)++
			io.WriteString(w, "hello")
		}
	}
	target := httptest.NewServer(count("target"))
	defer target.Close()
	tu, _ := url.Parse(target.URL)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://[::1]:"+tu.Port()+"/stolen", http.StatusFound)
	}))
	defer redirector.Close()
	ru, _ := url.Parse(redirector.URL)
	netCases := []struct{ name, url, resource string }{
		{"contact a loopback IP that is not granted", "http://[::1]:" + tu.Port() + "/", "http://[::1]:" + tu.Port() + "/"},
		{"contact a host not granted", "http://example.invalid:" + tu.Port() + "/", "http://example.invalid:" + tu.Port() + "/"},
		{"redirect to a host not granted", "http://localhost:" + ru.Port() + "/go", "http://[::1]:" + tu.Port() + "/stolen"},
	}
	for _, tc := range netCases {
		t.Run(tc.name, func(t *testing.T) {
			_, rec, err := e.invoke(t, map[string]any{"op": "http", "url": tc.url})
			if !errors.Is(err, capability.ErrDenied) {
				t.Fatalf("err = %v, want a denial", err)
			}
			if !rec.denied(capability.Network, tc.resource) {
				t.Fatalf("no denial of %s recorded: %+v", tc.resource, rec.Exercises())
			}
			if _, ok := hits.Load("target"); ok {
				t.Fatal("the host that was not granted was contacted")
			}
		})
	}
	t.Run("contact the granted host", func(t *testing.T) {
		out, _, err := e.invoke(t, map[string]any{"op": "http", "url": "http://localhost:" + tu.Port() + "/"})
		if err != nil || out["data"] != "hello" {
			t.Fatalf("= %v, %v", out, err)
		}
	})

	t.Run("run an unlisted command", func(t *testing.T) {
		_, rec, err := e.invoke(t, map[string]any{"op": "exec", "argv": []string{"cat", "/etc/passwd"}})
		if !errors.Is(err, capability.ErrDenied) || !rec.denied(capability.TerminalExec, "cat") {
			t.Fatalf("err = %v, recorded %+v; want a recorded denial", err, rec.Exercises())
		}
	})
	t.Run("shell metacharacters reach a listed command verbatim", func(t *testing.T) {
		out, _, err := e.invoke(t, map[string]any{"op": "exec", "argv": []string{"echo", "; rm -rf ~", "$(id)", "`id`"}})
		if err != nil {
			t.Fatal(err)
		}
		var res hostfns.ExecResponse
		raw, _ := json.Marshal(out["exec"])
		if err := json.Unmarshal(raw, &res); err != nil || res.Stdout != "; rm -rf ~ $(id) `id`\n" {
			t.Fatalf("exec = %s, %v", raw, err)
		}
	})

	limits := []struct {
		name  string
		cmd   map[string]any
		want  error
		bound time.Duration
	}{
		{"an endless loop", map[string]any{"op": "loop"}, runtime.ErrTimeout, 10 * time.Second},
		{"memory growth past the limit", map[string]any{"op": "alloc", "mb": 512}, runtime.ErrMemoryLimit, 10 * time.Second},
		{"output past the limit", map[string]any{"op": "spew", "mb": 1}, runtime.ErrOutputLimit, 10 * time.Second},
	}
	for _, tc := range limits {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := e.invoke(t, tc.cmd)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if took := time.Since(start); took > tc.bound {
				t.Fatalf("took %s, want under %s", took, tc.bound)
			}
		})
	}
	// The host is intact: the next call works.
	if out, _, err := e.invoke(t, map[string]any{"op": "cwd"}); err != nil || out["data"] != hostfns.GuestWorkspace {
		t.Fatalf("after the attacks: %v, %v", out, err)
	}
}
