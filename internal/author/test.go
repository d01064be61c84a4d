package author

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// ErrTestsFailed is returned by Test when a case failed or a test file did
// not parse.
var ErrTestsFailed = errors.New("author: pack tests failed")

// ErrNoTests is returned by Test for a pack without tests/*.yaml.
var ErrNoTests = errors.New("author: the pack has no tests")

// CaseResult is how one case went.
type CaseResult struct {
	Case     TestCase
	Failures []string // empty: passed
	Outcome  runtime.Outcome
	Recorded []capability.Exercise
}

// Passed reports whether the case passed.
func (r CaseResult) Passed() bool { return len(r.Failures) == 0 }

// TestOptions configure Test.
type TestOptions struct {
	// CacheDir is the compilation cache; empty keeps it in memory.
	CacheDir string
	// Report, when set, receives one line per case as it ends, and the
	// reasons of each failure.
	Report io.Writer
}

// Test loads the pack in dir, runs each case of its tests/*.yaml through
// the runtime pipeline (schema, gate, grant, integrity, sandbox, audit) and
// checks it. Each case gets a fresh workspace with its fake files, its
// stubbed commands on a test-only exec path, its fake HTTP answers behind
// the real network decisions (hostfns.WithFakes), and an in-memory audit
// log whose exercises it checks. The person's grant is what the case names
// (all the manifest asks by default); the approver says yes to each call.
func Test(ctx context.Context, dir string, opt TestOptions) ([]CaseResult, []packs.Finding, error) {
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	cases, fs := LoadTests(dir)
	if len(fs) > 0 {
		return nil, fs, fmt.Errorf("%w: the test files have errors", ErrTestsFailed)
	}
	if len(cases) == 0 {
		return nil, nil, ErrNoTests
	}
	rec := &capability.MemoryRecorder{}
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: opt.CacheDir, PoolSize: -1, Recorder: rec})
	if err != nil {
		return nil, nil, err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	var results []CaseResult
	failed := 0
	for _, c := range cases {
		r, err := runCase(ctx, rt, p, c)
		if err != nil {
			return results, nil, err
		}
		results = append(results, r)
		if !r.Passed() {
			failed++
		}
		if opt.Report != nil {
			report(opt.Report, r)
		}
	}
	if failed > 0 {
		return results, nil, fmt.Errorf("%w: %d of %d cases failed", ErrTestsFailed, failed, len(results))
	}
	return results, nil, nil
}

// report writes one case's result.
func report(w io.Writer, r CaseResult) {
	where := r.Case.File
	if r.Case.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, r.Case.Line)
	}
	if r.Passed() {
		fmt.Fprintf(w, "ok    %s (%s)\n", r.Case.Name, where)
		return
	}
	fmt.Fprintf(w, "FAIL  %s (%s)\n", r.Case.Name, where)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(f, "\n", "\n        "))
	}
}

// grants is the person's grant of a case: each named capability in full.
type grants []capability.UserGrant

func (g grants) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}

func (g grants) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	return g, nil
}

// approver is the test's person: it approves each call once.
type approver struct{}

func (approver) Name() string { return "packs test" }

func (approver) Approve(ctx context.Context, _ capability.Pending) (capability.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return capability.Deny, err
	}
	return capability.RunOnce, nil
}

// runCase runs one case in its own workspace, under its own fakes.
func runCase(ctx context.Context, rt *runtime.Runtime, p *packs.Pack, c TestCase) (CaseResult, error) {
	res := CaseResult{Case: c}
	tmp, err := os.MkdirTemp("", "packs-test-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	ws, stubs := filepath.Join(tmp, "workspace"), filepath.Join(tmp, "bin")
	for _, d := range []string{ws, stubs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return res, err
		}
	}
	for rel, content := range c.Fakes.Files {
		target := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
			return res, err
		}
	}
	for _, m := range c.Fakes.Commands {
		if err := writeStub(stubs, m); err != nil {
			return res, err
		}
	}

	names := c.Grant
	if names == nil {
		names = p.Request().Names()
	}
	var user grants
	for _, n := range names {
		user = append(user, capability.UserGrant{Capability: n, Scope: capability.ScopeOnce})
	}
	audit := &capability.MemoryRecorder{}
	pl, err := runtime.NewPipeline(rt, runtime.PipelineConfig{
		Grants: user, Audit: audit, Home: tmp,
	})
	if err != nil {
		return res, err
	}
	fh := &fakeHTTP{answers: c.Fakes.HTTP}
	cctx := hostfns.WithFakes(ctx, hostfns.Fakes{HTTP: fh, Lookup: fh.lookup, ExecPath: stubs})
	o, err := pl.Call(cctx, runtime.Request{
		Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: c.Tool, Arguments: c.Input,
		Workspace: ws, Approvers: []capability.Approver{approver{}},
	})
	if err != nil {
		return res, err
	}
	res.Outcome, res.Recorded = o, audit.Exercises()
	res.Failures = check(c, o, res.Recorded, ws)
	for _, u := range fh.unanswered {
		res.Failures = append(res.Failures, "the tool requested "+u+", which no fake http entry answers: add one under fakes.http")
	}
	return res, nil
}

// writeStub writes an executable named m.Command into dir that prints the
// fake's stdout and stderr and exits with its code. The outputs are files
// beside it, so nothing in them is ever read by a shell, and a confined
// command reads them as it runs the stub (dir stands in for /usr/bin).
func writeStub(dir string, m FakeCommand) error {
	out := filepath.Join(dir, "stub-"+m.Command+".stdout")
	errf := filepath.Join(dir, "stub-"+m.Command+".stderr")
	if err := os.WriteFile(out, []byte(m.Stdout), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(errf, []byte(m.Stderr), 0o644); err != nil {
		return err
	}
	script := fmt.Sprintf("#!/bin/sh\n/bin/cat %s\n/bin/cat %s >&2\nexit %d\n", shellQuote(out), shellQuote(errf), m.ExitCode)
	return os.WriteFile(filepath.Join(dir, m.Command), []byte(script), 0o755)
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fakeHTTP answers from a case's fakes.http entries.
type fakeHTTP struct {
	answers    []FakeHTTP
	unanswered []string
}

// lookup resolves a name to the address of the first entry for it.
func (f *fakeHTTP) lookup(_ context.Context, name string) ([]netip.Addr, error) {
	for _, a := range f.answers {
		if u, err := url.Parse(a.URL); err == nil && strings.EqualFold(u.Hostname(), name) {
			return []netip.Addr{a.Address}, nil
		}
	}
	return []netip.Addr{DefaultFakeAddress()}, nil
}

func (f *fakeHTTP) RoundTrip(r *http.Request) (*http.Response, error) {
	for _, a := range f.answers {
		if a.Method != "" && a.Method != r.Method {
			continue
		}
		u, err := url.Parse(a.URL)
		if err != nil || !strings.EqualFold(u.Host, r.URL.Host) || u.Scheme != r.URL.Scheme || u.EscapedPath() != r.URL.EscapedPath() {
			continue
		}
		if u.RawQuery != "" && u.RawQuery != r.URL.RawQuery {
			continue
		}
		h := http.Header{}
		for k, v := range a.Headers {
			h.Set(k, v)
		}
		return &http.Response{
			StatusCode: a.Status, Status: fmt.Sprintf("%d %s", a.Status, http.StatusText(a.Status)),
			Header: h, Body: io.NopCloser(strings.NewReader(a.Body)), ContentLength: int64(len(a.Body)),
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r,
		}, nil
	}
	f.unanswered = append(f.unanswered, r.Method+" "+r.URL.Redacted())
	return nil, errors.New("no fake answers this request")
}

// check compares an outcome with a case's expectations.
func check(c TestCase, o runtime.Outcome, recorded []capability.Exercise, ws string) []string {
	var fails []string
	x := c.Expect
	switch {
	case x.Error != "" && o.Status != x.Error:
		fails = append(fails, fmt.Sprintf("ended %s, want %s%s", o.Status, x.Error, errSuffix(o.Err)))
	case x.Error == "" && o.Err != nil:
		fails = append(fails, fmt.Sprintf("ended %s, want ok%s", o.Status, errSuffix(o.Err)))
	}
	if x.ErrorContains != "" && (o.Err == nil || !strings.Contains(o.Err.Error(), x.ErrorContains)) {
		fails = append(fails, fmt.Sprintf("the error does not contain %q%s", x.ErrorContains, errSuffix(o.Err)))
	}
	if x.Output != nil && o.Err == nil && !sameJSON(x.Output, o.Output) {
		fails = append(fails, fmt.Sprintf("output %s, want %s", o.Output, x.Output))
	}
	for _, s := range x.OutputContains {
		if !bytes.Contains(o.Output, []byte(s)) {
			fails = append(fails, fmt.Sprintf("output %s does not contain %q", o.Output, s))
		}
	}
	matched := make([]bool, len(recorded))
	for _, want := range x.Exercises {
		found := false
		for i, e := range recorded {
			if want.Matches(e) {
				found, matched[i] = true, true
			}
		}
		if !found {
			fails = append(fails, "no exercise matches "+want.String()+"; recorded:"+listExercises(recorded))
		}
	}
	if x.Exhaustive {
		for i, e := range recorded {
			if !matched[i] {
				fails = append(fails, "unexpected exercise "+exerciseLine(e)+" (the case is exhaustive: list it under expect.exercises)")
			}
		}
	}
	for rel, want := range x.Files {
		got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel)))
		switch {
		case err != nil:
			fails = append(fails, fmt.Sprintf("workspace file %s: %v", rel, err))
		case string(got) != want:
			fails = append(fails, fmt.Sprintf("workspace file %s holds %q, want %q", rel, got, want))
		}
	}
	return fails
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func listExercises(es []capability.Exercise) string {
	if len(es) == 0 {
		return " none"
	}
	var b strings.Builder
	for _, e := range es {
		b.WriteString("\n  " + exerciseLine(e))
	}
	return b.String()
}

func exerciseLine(e capability.Exercise) string {
	verdict := "allowed"
	if !e.Allowed {
		verdict = "denied: " + e.Reason
	}
	return fmt.Sprintf("%s %s (%s)", e.Capability, e.Resource, verdict)
}
