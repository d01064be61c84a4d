package examples_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// The packs, by folder. Each tool's module is bin/<file>.wasm in the pack.
var allPacks = []string{"json-tools", "csv-stats", "text-kit", "web-reader", "incident-triage"}

// rt is one runtime for every test, as a process has one: compiled modules
// are shared through its cache.
var rt *runtime.Runtime

func TestMain(m *testing.M) {
	ctx := context.Background()
	cache, err := os.MkdirTemp("", "packs-examples-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rt, err = runtime.New(ctx, runtime.Config{CacheDir: cache})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := rt.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.RemoveAll(cache)
	os.Exit(code)
}

// requireBuilt skips the test when a pack's modules have not been built.
func requireBuilt(t *testing.T, dir string) {
	t.Helper()
	var tools []struct {
		Run struct{ Wasm string } `json:"run"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if _, err := os.Stat(filepath.Join(dir, tool.Run.Wasm)); err != nil {
			t.Skipf("%s/%s is not built: run make examples", dir, tool.Run.Wasm)
		}
	}
}

func load(t *testing.T, dir string) *packs.Pack {
	t.Helper()
	requireBuilt(t, dir)
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		t.Fatalf("packs.Load(%s): %v", dir, err)
	}
	return p
}

// recorder keeps every capability exercise of a call.
type recorder struct{ capability.MemoryRecorder }

// find returns the exercises of capability n whose resource contains res.
func (r *recorder) find(n capability.Name, res string, allowed bool) []capability.Exercise {
	var out []capability.Exercise
	for _, e := range r.Exercises() {
		if e.Capability == n && e.Allowed == allowed && strings.Contains(e.Resource, res) {
			out = append(out, e)
		}
	}
	return out
}

// approver is the person at the gate.
type approver struct{ verdict capability.Verdict }

func (a approver) Name() string { return "examples test" }

func (a approver) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return a.verdict, nil
}

var invocations atomic.Int64

// call is one tool call as the orchestrator makes it: resolve the grant from
// what the person granted, ask the gate, and invoke.
type call struct {
	pack      *packs.Pack
	tool      string
	input     string
	grants    []capability.Name // capabilities the person granted, all requested resources
	workspace string            // default: a fresh temp dir
}

func (c call) run(t *testing.T) (runtime.Result, *recorder, error) {
	t.Helper()
	ctx := context.Background()
	if c.workspace == "" {
		c.workspace = t.TempDir()
	}
	var ug []capability.UserGrant
	for _, n := range c.grants {
		ug = append(ug, capability.UserGrant{Capability: n, Scope: capability.ScopeOnce})
	}
	if _, ok := c.pack.Tool(c.tool); !ok {
		t.Fatalf("pack %s has no tool %s", c.pack.Name, c.tool)
	}
	rec := &recorder{}
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: grantList(ug), Audit: rec, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	o, err := pl.Call(ctx, runtime.Request{
		Invocation: fmt.Sprintf("inv-%d", invocations.Add(1)),
		Pack:       c.pack, Ref: capability.PackRef{Name: c.pack.Name}, Tool: c.tool, Arguments: json.RawMessage(c.input),
		Workspace: c.workspace, Approvers: []capability.Approver{approver{capability.RunOnce}},
	})
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	res := o.Result
	res.Output = o.Output
	return res, rec, o.Err
}

// grantList is the person's grants: the same for every call.
type grantList []capability.UserGrant

func (g grantList) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}
func (g grantList) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}

// ok runs the call, fails the test on an error, and decodes the result.
func (c call) ok(t *testing.T) map[string]any {
	t.Helper()
	res, _, err := c.run(t)
	if err != nil {
		t.Fatalf("%s__%s %s: %v (stderr %s)", c.pack.Name, c.tool, c.input, err, res.Stderr)
	}
	var out map[string]any
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("%s__%s: result is not a JSON object: %s", c.pack.Name, c.tool, res.Output)
	}
	return out
}

// toolError runs the call and returns the tool's own failure message.
func (c call) toolError(t *testing.T) string {
	t.Helper()
	_, _, err := c.run(t)
	var te *runtime.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("%s__%s %s: error %v, want a *runtime.ToolError", c.pack.Name, c.tool, c.input, err)
	}
	return te.Message
}

func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPacksValidateClean(t *testing.T) {
	for _, dir := range allPacks {
		t.Run(dir, func(t *testing.T) {
			requireBuilt(t, dir)
			if findings := packs.Validate(dir, packs.LoadOptions{}); len(findings) > 0 {
				for _, f := range findings {
					t.Error(f)
				}
			}
		})
	}
}

// TestNoExampleNamedLikeABuiltin: a pack installed under a built-in's name
// replaces the built-in, which then stays out (docs/builtins.md), so an
// example named like one would take the built-in's place in `make run` and
// in `packs add wasm-examples/NAME`. An example's name is its folder's, which
// its SKILL.md name must equal (Validate's name-mismatch); this needs no
// built modules, so it runs in a fresh clone too.
func TestNoExampleNamedLikeABuiltin(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("*", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < len(allPacks) {
		t.Fatalf("found %d example packs (%v), want at least %d", len(entries), entries, len(allPacks))
	}
	for _, entry := range entries {
		dir := filepath.Dir(entry)
		for _, f := range packs.Validate(dir, packs.LoadOptions{}) {
			if f.Rule == "name-mismatch" || f.Rule == "name-missing" {
				t.Error(f)
			}
		}
		if slices.Contains(builtin.Names(), dir) {
			t.Errorf("example %s has the name of a built-in pack (%s): installing it would replace the built-in; rename the example", dir, builtin.Source(dir))
		}
	}
}

func TestPrecompile(t *testing.T) {
	for _, dir := range allPacks {
		t.Run(dir, func(t *testing.T) {
			p := load(t, dir)
			if err := rt.Precompile(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestJSONTools(t *testing.T) {
	p := load(t, "json-tools")
	doc := `{"orders": [{"id": 1, "total": 30, "customer": {"name": "Ada"}}, {"id": 2, "total": 5, "customer": {"name": "Bo"}}]}`
	tests := []struct{ tool, input, want string }{
		{"query", `{"data": ` + doc + `, "path": ".orders[?(@.total > 10)].customer.name", "locations": true}`,
			`{"count":1,"locations":["$.orders[0].customer.name"],"results":["Ada"]}`},
		{"query", `{"text": "[1, 2, 3]", "path": "[-1]"}`, `{"count":1,"results":[3]}`},
		{"transform", `{"data": ` + doc + `, "at": ".orders", "steps": [{"select": {"who": ".customer.name", "total": ".total"}}, {"sort_by": ".total"}]}`,
			`{"result":[{"total":5,"who":"Bo"},{"total":30,"who":"Ada"}]}`},
		{"validate_json", `{"text": "{\"a\": 1,}"}`,
			`{"syntax_error":{"column":9,"hint":"trailing comma: remove the comma before the closing bracket","line":1,"message":"unexpected '}', expected a double-quoted key"},"valid":false}`},
		{"validate_json", `{"data": {"n": "x"}, "schema": {"properties": {"n": {"type": "integer"}}}}`,
			`{"errors":[{"keyword":"type","message":"got string, want integer","pointer":"/n"}],"valid":false}`},
	}
	for _, tt := range tests {
		got := call{pack: p, tool: tt.tool, input: tt.input}.ok(t)
		if s := compact(t, got); s != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.tool, tt.input, s, tt.want)
		}
	}
	// The guest's own error reaches the caller as a tool error.
	if msg := (call{pack: p, tool: "query", input: `{"data": {}, "path": ".a["}`}).toolError(t); !strings.Contains(msg, `path ".a[": not terminated`) {
		t.Errorf("tool error %q", msg)
	}
	// Input that breaks the tool's schema is refused before anything runs.
	_, _, err := call{pack: p, tool: "query", input: `{"data": {}}`}.run(t)
	if !errors.Is(err, packs.ErrInvalidInput) {
		t.Errorf("missing path: %v, want packs.ErrInvalidInput", err)
	}
}

func TestTextKit(t *testing.T) {
	p := load(t, "text-kit")
	tests := []struct{ tool, input, want string }{
		{"stats", `{"text": "One two. Three!", "top": 1}`,
			`{"avg_word_length":3.667,"blank_lines":0,"bytes":15,"chars":15,"lines":1,"longest_word":"Three","paragraphs":1,"reading_time_seconds":1,"sentences":2,"top_words":[{"count":1,"word":"three"}],"unique_words":3,"words":3}`},
		{"slugify", `{"text": "Héllo, Wörld & Friends", "max_length": 20}`, `{"slug":"hello-world-and"}`},
		{"convert_case", `{"text": ["userID", "HTTPServer"], "to": "snake"}`, `{"result":["user_id","http_server"]}`},
		{"diff_stats", `{"before": "a\nb\n", "after": "a\nc\n", "context": 0}`,
			`{"added":1,"diff":"@@ -2,1 +2,1 @@\n-b\n+c\n","hunks":1,"identical":false,"lines_after":2,"lines_before":2,"removed":1,"similarity":0.5,"unchanged":1}`},
	}
	for _, tt := range tests {
		got := call{pack: p, tool: tt.tool, input: tt.input}.ok(t)
		if s := compact(t, got); s != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.tool, s, tt.want)
		}
	}
	if msg := (call{pack: p, tool: "slugify", input: `{"text": "日本語"}`}).toolError(t); !strings.HasPrefix(msg, "text-kit: ") || !strings.Contains(msg, "no Latin letters") {
		t.Errorf("tool error %q", msg)
	}
}

func TestGateDecidesEveryCall(t *testing.T) {
	p := load(t, "text-kit")
	ws := t.TempDir()
	rec := &recorder{}
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: grantList(nil), Audit: rec})
	if err != nil {
		t.Fatal(err)
	}
	o, err := pl.Call(context.Background(), runtime.Request{
		Invocation: "denied-1", Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "stats",
		Arguments: json.RawMessage(`{"text": "x"}`), Workspace: ws, Approvers: []capability.Approver{approver{capability.Deny}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(o.Err, capability.ErrRejected) || o.Status != capability.StatusDenied || o.Output != nil {
		t.Fatalf("a call the person denied: %v (%s), output %s", o.Err, o.Status, o.Output)
	}
	if calls := rec.Calls(); len(calls) != 1 || calls[0].Status != capability.StatusDenied || calls[0].Invocation != "denied-1" {
		t.Fatalf("audit records %+v, want the one denied call", calls)
	}
}

func TestCSVStats(t *testing.T) {
	p := load(t, "csv-stats")
	got := call{pack: p, tool: "describe", input: `{"csv": "city,temp\nOslo,3.5\nRome,18\nOslo,\n"}`}.ok(t)
	cols := got["columns"].([]any)
	temp := cols[1].(map[string]any)
	if got["rows"] != 3.0 || temp["type"] != "number" || temp["nulls"] != 1.0 || temp["numeric"].(map[string]any)["mean"] != 10.75 {
		t.Errorf("report %s", compact(t, got))
	}

	// A file in the workspace, read with the filesystem_read grant.
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "data", "sales.csv"), []byte("region;amount\nnorth;10\nsouth;30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, rec, err := call{pack: p, tool: "describe", input: `{"path": "data/sales.csv"}`, grants: []capability.Name{capability.FilesystemRead}, workspace: ws}.run(t)
	if err != nil {
		t.Fatalf("describe data/sales.csv: %v (stderr %s)", err, res.Stderr)
	}
	if !strings.Contains(string(res.Output), `"sum":40.0`) || !strings.Contains(string(res.Output), `"delimiter":";"`) {
		t.Errorf("report %s", res.Output)
	}
	if len(rec.find(capability.FilesystemRead, "sales.csv", true)) == 0 {
		t.Errorf("the read of sales.csv was not recorded: %+v", rec.Exercises())
	}

	// A file outside the workspace that nobody granted: denied, and recorded.
	outside := filepath.Join(t.TempDir(), "secret.csv")
	if err := os.WriteFile(outside, []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, rec, err = call{pack: p, tool: "describe", input: fmt.Sprintf(`{"path": %q}`, outside), grants: []capability.Name{capability.FilesystemRead}}.run(t)
	var te *runtime.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "secret.csv") {
		t.Fatalf("reading outside the workspace: %v, want the tool to fail", err)
	}
	if len(rec.find(capability.FilesystemRead, outside, false)) == 0 {
		t.Errorf("the denied read of %s was not recorded: %+v", outside, rec.Exercises())
	}
}

// localCopy copies a pack into a temp folder with a different skill.toml:
// what a person does to point a pack at their own hosts or paths.
func localCopy(t *testing.T, dir, manifest string) *packs.Pack {
	t.Helper()
	requireBuilt(t, dir)
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !slices.Contains([]string{"SKILL.md", "tools.json"}, rel) && !strings.HasPrefix(rel, "bin"+string(filepath.Separator)) {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "skill.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := packs.Load(dst, packs.LoadOptions{})
	if err != nil {
		t.Fatalf("packs.Load(local copy of %s): %v", dir, err)
	}
	return p
}

func TestWebReader(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/docs":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<html><head><title>Guide</title><script>evil()</script></head><body>
				<nav><a href="/">Home</a></nav><main><h1>Setup</h1><p>Install with <code>make</code>.</p>
				<ul><li>one</li><li>two</li></ul></main></body></html>`)
		case "/elsewhere":
			// A redirect to a host that is not granted: the host refuses to follow it.
			http.Redirect(w, r, "http://localhost"+strings.TrimPrefix(srv.URL, "http://127.0.0.1")+"/docs", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// The stock pack asks for documentation sites; this copy asks for the
	// loopback test server, which is what the person grants.
	p := localCopy(t, "web-reader", "[skill]\nid = \"examples.web-reader\"\nversion = \"0.1.0\"\n\n[capabilities]\nnetwork = [\"127.0.0.1:*\"]\n")
	net := []capability.Name{capability.Network}

	res, rec, err := call{pack: p, tool: "fetch", input: fmt.Sprintf(`{"url": %q}`, srv.URL+"/docs"), grants: net}.run(t)
	if err != nil {
		t.Fatalf("fetch: %v (stderr %s)", err, res.Stderr)
	}
	var page struct {
		Title, Content string
		Status         int
	}
	if err := json.Unmarshal(res.Output, &page); err != nil {
		t.Fatal(err)
	}
	if page.Title != "Guide" || page.Status != 200 || page.Content != "# Setup\n\nInstall with `make`.\n\n- one\n- two" {
		t.Errorf("page %+v", page)
	}
	if len(rec.find(capability.Network, srv.URL+"/docs", true)) != 1 {
		t.Errorf("the request was not recorded as allowed: %+v", rec.Exercises())
	}

	// HTTP errors come back as the tool's own failure.
	if msg := (call{pack: p, tool: "fetch", input: fmt.Sprintf(`{"url": %q}`, srv.URL+"/nope"), grants: net}).toolError(t); !strings.Contains(msg, "HTTP 404") {
		t.Errorf("404: %q", msg)
	}

	// A host that is not granted: "localhost" is a name, the grant is the IP.
	other := "http://localhost" + strings.TrimPrefix(srv.URL, "http://127.0.0.1") + "/docs"
	_, rec, err = call{pack: p, tool: "fetch", input: fmt.Sprintf(`{"url": %q}`, other), grants: net}.run(t)
	if !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("fetch from a host not granted: %v, want capability.ErrDenied", err)
	}
	if len(rec.find(capability.Network, "localhost", false)) == 0 {
		t.Errorf("the denied request was not recorded: %+v", rec.Exercises())
	}

	// A redirect from a granted host to one that is not: denied at the hop.
	_, rec, err = call{pack: p, tool: "fetch", input: fmt.Sprintf(`{"url": %q}`, srv.URL+"/elsewhere"), grants: net}.run(t)
	if !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("redirect off the granted host: %v, want capability.ErrDenied", err)
	}
	if len(rec.find(capability.Network, "localhost", false)) == 0 {
		t.Errorf("the denied redirect was not recorded: %+v", rec.Exercises())
	}

	// No network grant at all: the module that imports http_request cannot run.
	_, _, err = call{pack: p, tool: "fetch", input: fmt.Sprintf(`{"url": %q}`, srv.URL+"/docs")}.run(t)
	if !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("fetch without the network grant: %v, want capability.ErrDenied", err)
	}

	// The offline converter is its own module, without the network import: no grant needed.
	got := call{pack: p, tool: "html_to_markdown", input: `{"html": "<h2>Hi</h2><p><a href=\"/x\">x</a></p>", "base_url": "https://example.com/"}`}.ok(t)
	if got["markdown"] != "## Hi\n\n[x](https://example.com/x)" {
		t.Errorf("html_to_markdown %s", compact(t, got))
	}
}

// incidentLogs writes a small incident into dir/logs.
func incidentLogs(t *testing.T, dir string) {
	t.Helper()
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "2024-03-05T14:%02d:00Z INFO ok\n", i)
	}
	for i := range 7 { // a background error every five minutes
		fmt.Fprintf(&b, "2024-03-05T14:%02d:30Z ERROR cache miss for key %d\n", i*5, i)
	}
	for i := range 12 { // the burst
		fmt.Fprintf(&b, "2024-03-05T14:20:%02dZ ERROR upstream 10.0.0.%d timed out after %dms\n", i*5, i%3, 100+i)
	}
	b.WriteString("2024-03-05T14:25:00Z FATAL worker crashed\n\tat main.run(main.go:12)\n")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs", "app.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIncidentTriage(t *testing.T) {
	p := load(t, "incident-triage")
	ws := t.TempDir()
	incidentLogs(t, ws)
	read := []capability.Name{capability.FilesystemRead}

	report := call{pack: p, tool: "triage", input: `{"bucket": "5m"}`, grants: read, workspace: ws}.ok(t)
	if report["matched"] != 20.0 {
		t.Errorf("matched %v", report["matched"])
	}
	top := report["signatures"].([]any)[0].(map[string]any)
	if top["signature"] != "upstream <ip> timed out after <n>ms" || top["count"] != 12.0 || top["first"] != "2024-03-05T14:20:00Z" || top["last"] != "2024-03-05T14:20:55Z" {
		t.Errorf("top signature %s", compact(t, top))
	}
	spikes := report["spikes"].([]any)
	if len(spikes) != 1 || spikes[0].(map[string]any)["start"] != "2024-03-05T14:20:00Z" || spikes[0].(map[string]any)["count"] != 13.0 {
		t.Errorf("spikes %s", compact(t, spikes))
	}

	found := call{pack: p, tool: "search_logs", input: `{"levels": ["fatal"]}`, grants: read, workspace: ws}.ok(t)
	m := found["matches"].([]any)
	if len(m) != 1 || m[0].(map[string]any)["text"] != "2024-03-05T14:25:00Z FATAL worker crashed\n\tat main.run(main.go:12)" || m[0].(map[string]any)["file"] != "logs/app.log" {
		t.Errorf("search %s", compact(t, found))
	}

	// Logs outside the workspace, in a folder the pack asks for: granted,
	// they are read; not granted, the read is denied and recorded.
	logDir := t.TempDir()
	incidentLogs(t, logDir)
	local := localCopy(t, "incident-triage", fmt.Sprintf("[skill]\nid = \"examples.incident-triage\"\nversion = \"0.1.0\"\n\n[capabilities]\nfilesystem_read = [%q]\n", logDir))
	input := fmt.Sprintf(`{"paths": [%q]}`, logDir+"/logs/*.log")

	report = call{pack: local, tool: "triage", input: input, grants: read}.ok(t)
	if report["matched"] != 20.0 {
		t.Errorf("granted folder: matched %v", report["matched"])
	}
	_, rec, err := call{pack: local, tool: "triage", input: input}.run(t)
	var te *runtime.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "permission denied") {
		t.Fatalf("folder not granted: %v, want the tool to report permission denied", err)
	}
	if len(rec.find(capability.FilesystemRead, logDir, false)) == 0 {
		t.Errorf("the denied read was not recorded: %+v", rec.Exercises())
	}
}

// benchCall measures one tool call end to end through the pipeline: input
// schema check, gate decision, grant, a fresh instance from the pool, the
// call, the result, the (in-memory) audit record. It reports
// the median as p50-ns, since a pool refill can make single calls slow.
func benchCall(b *testing.B, dir, tool, input string, grants []capability.Name, files map[string]string) {
	requireBuiltB(b, dir)
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := rt.Precompile(ctx, p); err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var ug []capability.UserGrant
	for _, n := range grants {
		ug = append(ug, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
	}
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{Grants: grantList(ug), Audit: &recorder{}, Home: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	approvers := []capability.Approver{approver{capability.RunOnce}}
	once := func(i int) time.Duration {
		start := time.Now()
		o, err := pl.Call(ctx, runtime.Request{Invocation: fmt.Sprintf("bench-%d", i), Pack: p, Ref: capability.PackRef{Name: p.Name},
			Tool: tool, Arguments: json.RawMessage(input), Workspace: ws, Approvers: approvers})
		if err != nil || o.Err != nil {
			b.Fatal(err, o.Err)
		}
		return time.Since(start)
	}
	once(-1) // warm the pool
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		durations = append(durations, once(i))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds()), "p50-ns")
}

func requireBuiltB(b *testing.B, dir string) {
	b.Helper()
	if _, err := os.Stat(filepath.Join(dir, "bin")); err != nil {
		b.Skipf("%s/bin is not built: run make examples", dir)
	}
}

func BenchmarkTextKitStats(b *testing.B) {
	benchCall(b, "text-kit", "stats", `{"text": "The quick brown fox jumps over the lazy dog."}`, nil, nil)
}

func BenchmarkJSONToolsQuery(b *testing.B) {
	benchCall(b, "json-tools", "query", `{"data": {"a": [1, 2, 3]}, "path": ".a[?(@ > 1)]"}`, nil, nil)
}

func BenchmarkCSVStatsDescribe(b *testing.B) {
	benchCall(b, "csv-stats", "describe", `{"csv": "a,b\n1,x\n2,y\n3,z\n"}`, nil, nil)
}

func BenchmarkIncidentTriageSearch(b *testing.B) {
	benchCall(b, "incident-triage", "search_logs", `{"match": "timeout", "paths": ["*.log"]}`, []capability.Name{capability.FilesystemRead},
		map[string]string{"app.log": "2024-03-05T14:00:00Z ERROR db timeout\n2024-03-05T14:00:01Z INFO ok\n"})
}
