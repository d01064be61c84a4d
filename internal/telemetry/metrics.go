package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/runtime"
)

// Metrics counts packs' calls for Prometheus: served by Handler on
// packs serve and packs mcp --http, behind the token or on an address of
// their own (--metrics-addr). Its labels name packs, tools, statuses and
// who denied, never a call's arguments.
type Metrics struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	denials   *prometheus.CounterVec
	durations *prometheus.HistogramVec
}

// NewMetrics returns the metrics, with the Go runtime's and the process's
// own beside packs'.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "packs_calls_total", Help: "Tool calls that went through the pipeline, by pack, tool and how they ended (the audit log's status).",
		}, []string{"pack", "tool", "status"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "packs_denials_total", Help: "Denials, by what was denied (a whole call, or one capability exercise inside a call), who denied it (policy, user, request, gate, integrity) and the capability (empty for a whole call).",
		}, []string{"kind", "by", "capability"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "packs_call_duration_seconds", Help: "Time from a call's arrival to its audit record, approval wait included, by pack and tool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"pack", "tool"}),
	}
	m.reg.MustRegister(m.calls, m.denials, m.durations, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchQueue adds the gauge of the approval queue: waiting says how many
// calls wait in it for a person (packs approve, the web app).
func (m *Metrics) WatchQueue(waiting func(ctx context.Context) (int, error)) error {
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "packs_approval_queue_depth", Help: "Calls waiting in the approval queue for a person (packs approve, the web app); -1 when it could not be read.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := waiting(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}))
}

// WatchRuntime adds the gauges of rt's instance pools. Call it once per
// runtime.
func (m *Metrics) WatchRuntime(rt *runtime.Runtime) error {
	gauges := []struct {
		name, help string
		value      func(runtime.PoolStats) float64
	}{
		{"packs_pools", "Instance pools kept warm (one per module, grant and workspace).", func(s runtime.PoolStats) float64 { return float64(s.Pools) }},
		{"packs_pool_ready_instances", "Instances built ahead, ready for a call.", func(s runtime.PoolStats) float64 { return float64(s.Ready) }},
		{"packs_pool_bytes", "Memory of their own the ready instances hold.", func(s runtime.PoolStats) float64 { return float64(s.Bytes) }},
	}
	var errs []error
	for _, g := range gauges {
		errs = append(errs, m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help}, func() float64 { return g.value(rt.Pools()) })))
	}
	return errors.Join(errs...)
}

// CallEnded implements runtime.CallObserver.
func (m *Metrics) CallEnded(pack, tool string, o runtime.Outcome) {
	m.calls.WithLabelValues(pack, tool, string(o.Status)).Inc()
	m.durations.WithLabelValues(pack, tool).Observe(o.Finished.Sub(o.Started).Seconds())
	if by := runtime.DeniedBy(o.Err); by != "" {
		var de *capability.DeniedError
		c := ""
		if errors.As(o.Err, &de) {
			c = string(de.Capability)
		}
		m.denials.WithLabelValues("call", by, c).Inc()
	}
}

// Auditor wraps a so each capability exercise denied inside a call is
// counted; everything else passes through.
func (m *Metrics) Auditor(a capability.Auditor) capability.Auditor {
	return auditor{Auditor: a, m: m}
}

type auditor struct {
	capability.Auditor
	m *Metrics
}

func (a auditor) RecordExercise(e capability.Exercise) error {
	if !e.Allowed {
		a.m.denials.WithLabelValues("exercise", string(e.Layer), string(e.Capability)).Inc()
	}
	return a.Auditor.RecordExercise(e)
}

// Handler serves the metrics in Prometheus' text format (or OpenMetrics,
// when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// ServeMetrics serves h at GET /metrics, and nothing else, on ln until ctx
// is done: the address of its own (--metrics-addr) a scraper that cannot
// send the token reads. It holds the call counts, never a chat, a file or
// an audit row.
func ServeMetrics(ctx context.Context, ln net.Listener, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("telemetry: metrics: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
