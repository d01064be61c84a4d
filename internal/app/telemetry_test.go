package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/secrets"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// otlpReceiver is an OTLP/HTTP collector on loopback: it decodes each
// ExportTraceServiceRequest with the official protobuf type and keeps the
// spans, and the raw bodies.
type otlpReceiver struct {
	mu     sync.Mutex
	spans  []*tracepb.Span
	bodies [][]byte
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var msg coltracepb.ExportTraceServiceRequest
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &msg) != nil {
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, b)
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(nil)
}

// TestCallSpansOverOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, a call
// through the pipeline OpenPipeline opens reaches a real OTLP/HTTP receiver
// as one trace: the call's span, then validate, gate, grant, integrity,
// invoke and audit under it, in order, with pack, tool, decision and status.
// No span holds an argument's value or a secret's, though the refused
// call's error quotes its arguments.
func TestCallSpansOverOTLP(t *testing.T) {
	const argMarker, secretValue = "zzargmarker5d1e", "sk-live-4f9b2c7e1d3a8f6b0c5e9d2a"
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ctx := context.Background()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_SERVICE_NAME": "packs-test"}
	a, err := Open(ctx, Options{Home: filepath.Join(t.TempDir(), "home"), Builtins: true, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := secrets.Open(a.Home.Dir()).Set("api-key", []byte(secretValue)); err != nil {
		t.Fatal(err)
	}
	pl, release, err := a.OpenPipeline(ctx, PipelineOptions{OneShot: true, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := a.Home.Entry("test-math")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := a.Home.PackDir("test-math")
	if err != nil {
		t.Fatal(err)
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(args string, v capability.Verdict) runtime.Outcome {
		o, err := pl.Call(ctx, runtime.Request{Pack: p, Ref: e.Ref(), Tool: "add", Arguments: json.RawMessage(args),
			Workspace: t.TempDir(), Approvers: []capability.Approver{verdict(v)}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ok := call(`{"a": 424242.125, "b": 1}`, capability.RunOnce)
	if ok.Err != nil {
		t.Fatalf("add: %v", ok.Err)
	}
	bad := call(`{"a": 1, "b": 2, "`+argMarker+`": "`+secretValue+`"}`, capability.RunOnce)
	denied := call(`{"a": 1, "b": 2}`, capability.Deny)
	if denied.Status != capability.StatusDenied {
		t.Fatalf("a call the approver denied ended %s", denied.Status)
	}
	if bad.Err == nil || !strings.Contains(bad.Err.Error(), argMarker) {
		t.Fatalf("the refused call's error %v does not quote its arguments: the test would prove nothing", bad.Err)
	}
	release() // flushes the spans

	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, b := range recv.bodies {
		for _, leak := range []string{argMarker, secretValue, "424242"} {
			if strings.Contains(string(b), leak) {
				t.Errorf("an exported span holds %q", leak)
			}
		}
	}
	got := map[string][]string{} // invocation → span names, children by start
	roots := map[string]*tracepb.Span{}
	for _, sp := range recv.spans {
		if sp.Name == runtime.SpanCall {
			roots[string(sp.SpanId)] = sp
		}
	}
	if len(roots) != 3 {
		t.Fatalf("got %d call spans, want 3 (one per call): %v", len(roots), recv.spans)
	}
	children := slices.Clone(recv.spans)
	slices.SortStableFunc(children, func(x, y *tracepb.Span) int { return int(int64(x.StartTimeUnixNano) - int64(y.StartTimeUnixNano)) })
	for _, sp := range children {
		root, ok := roots[string(sp.ParentSpanId)]
		if !ok {
			continue
		}
		if string(sp.TraceId) != string(root.TraceId) {
			t.Errorf("span %s is not in its call's trace", sp.Name)
		}
		id := attr(root, string(runtime.AttrInvocation))
		got[id] = append(got[id], sp.Name)
	}
	want := map[string][]string{
		ok.Invocation:     {runtime.SpanValidate, runtime.SpanGate, runtime.SpanGrant, runtime.SpanIntegrity, runtime.SpanInvoke, runtime.SpanAudit},
		bad.Invocation:    {runtime.SpanValidate, runtime.SpanAudit},
		denied.Invocation: {runtime.SpanValidate, runtime.SpanGate, runtime.SpanAudit},
	}
	for id, names := range want {
		if !slices.Equal(got[id], names) {
			t.Errorf("the spans of call %s, in order: %v, want %v", id, got[id], names)
		}
	}
	for _, root := range roots {
		inv := attr(root, string(runtime.AttrInvocation))
		wantStatus, wantDecision, wantBy := "ok", capability.RunOnce.String(), ""
		switch inv {
		case bad.Invocation:
			wantStatus, wantDecision = "invalid_input", capability.Deny.String()
		case denied.Invocation:
			wantStatus, wantDecision, wantBy = "denied", capability.Deny.String(), string(capability.LayerGate)
		}
		if got := attr(root, string(runtime.AttrDeniedBy)); got != wantBy {
			t.Errorf("call span %s: denied_by %q, want %q", inv, got, wantBy)
		}
		if attr(root, string(runtime.AttrPack)) != "test-math" || attr(root, string(runtime.AttrTool)) != "add" ||
			attr(root, string(runtime.AttrStatus)) != wantStatus || attr(root, string(runtime.AttrDecision)) != wantDecision {
			t.Errorf("call span %s has attributes %v, want pack test-math, tool add, status %s, decision %s", inv, root.Attributes, wantStatus, wantDecision)
		}
	}
}

func attr(sp *tracepb.Span, key string) string {
	for _, kv := range sp.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}
