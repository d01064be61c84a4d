package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/telemetry"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// BenchmarkCallTelemetry is a warm call of a built-in tool (test-math's
// add) through the pipeline with telemetry on: spans exported over OTLP/HTTP
// to a receiver on loopback, and the Prometheus metrics counting it. Its
// peer is the same call on the same runtime with telemetry off. The audit
// record is kept in memory, to leave out the disk's fsync, which would
// hide what telemetry adds. The goal: at most 5% more p50.
func BenchmarkCallTelemetry(b *testing.B) {
	ctx := context.Background()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer recv.Close()
	a, err := Open(ctx, Options{Home: filepath.Join(b.TempDir(), "home"), Builtins: true})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: cacheDir, PoolSize: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	tracing, err := telemetry.NewTracing(telemetry.TracingConfig{Endpoint: recv.URL + "/v1/traces"})
	if err != nil {
		b.Fatal(err)
	}
	defer tracing.Shutdown(ctx)
	metrics := telemetry.NewMetrics()

	off := a.pipelineConfig(&capability.MemoryRecorder{}, nil)
	on := a.pipelineConfig(metrics.Auditor(&capability.MemoryRecorder{}), nil)
	on.Tracer, on.Observer = tracing.Tracer(), metrics

	e, err := a.Home.Entry("test-math")
	if err != nil {
		b.Fatal(err)
	}
	dir, err := a.Home.PackDir("test-math")
	if err != nil {
		b.Fatal(err)
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	req := runtime.Request{Pack: p, Ref: e.Ref(), Tool: "add", Arguments: json.RawMessage(`{"a": 1, "b": 2}`),
		Workspace: b.TempDir(), Approvers: []capability.Approver{verdict(capability.RunOnce)}}
	offPL, err := runtime.NewPipeline(rt, off)
	if err != nil {
		b.Fatal(err)
	}
	onPL, err := runtime.NewPipeline(rt, on)
	if err != nil {
		b.Fatal(err)
	}
	// call times one call, once the pool holds an instance again: a
	// call never waits for an instance built on the spot.
	call := func(pl *runtime.Pipeline) time.Duration {
		for deadline := time.Now().Add(20 * time.Millisecond); rt.Pools().Ready == 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Microsecond)
		}
		begin := time.Now()
		o, err := pl.Call(ctx, req)
		if err != nil || o.Err != nil {
			b.Fatal(err, o.Err)
		}
		return time.Since(begin)
	}
	call(onPL)
	call(offPL)
	// The subject times pairs, a call without telemetry and one with, and
	// reports the median of their differences too (added-p50-ns): the
	// pairing keeps the figure steady while the machine's load drifts.
	b.Run("packs", func(b *testing.B) {
		var ons, offs, added []time.Duration
		for i := 0; b.Loop(); i++ {
			var o, d time.Duration
			if i%2 == 0 { // each goes first in half the pairs
				o, d = call(offPL), call(onPL)
			} else {
				d, o = call(onPL), call(offPL)
			}
			ons, offs, added = append(ons, d), append(offs, o), append(added, d-o)
		}
		p50 := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Nanoseconds()) }
		on, peer, add := p50(ons), p50(offs), p50(added)
		b.ReportMetric(on, "p50-ns")
		b.ReportMetric(add, "added-p50-ns")
		b.ReportMetric(100*add/peer, "added-%")
	})
	b.Run("peer=off", func(b *testing.B) {
		var durs []time.Duration
		for b.Loop() {
			durs = append(durs, call(offPL))
		}
		slices.Sort(durs)
		b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	})
}
