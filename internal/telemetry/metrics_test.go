package telemetry_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/telemetry"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

func scrape(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(w.Result().Body)
	return string(b)
}

// TestMetricsCountDenials: a call refused, by whom and for what, and an
// exercise refused inside a call, each counted under its own labels; an
// allowed exercise is not a denial.
func TestMetricsCountDenials(t *testing.T) {
	m := telemetry.NewMetrics()
	now := time.Now()
	for _, err := range []error{
		nil,
		&capability.DeniedError{Capability: capability.Network, Layer: capability.LayerPolicy, Reason: "blocked", Cause: capability.ErrDenied},
		&capability.DeniedError{Layer: capability.LayerGate, Reason: "no", Cause: capability.ErrDenied},
		fmt.Errorf("pack changed: %w", packs.ErrModified),
	} {
		m.CallEnded("web", "fetch", runtime.Outcome{Err: err, Status: runtime.StatusOf(err), Started: now, Finished: now.Add(3 * time.Millisecond)})
	}
	rec := &capability.MemoryRecorder{}
	a := m.Auditor(rec)
	for _, allowed := range []bool{true, false} {
		if err := a.RecordExercise(capability.Exercise{Pack: "web", Tool: "fetch", Capability: capability.EnvRead, Resource: "HOME", Allowed: allowed, Layer: capability.LayerUser}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rec.Exercises()); n != 2 {
		t.Errorf("the wrapped auditor recorded %d exercises, want 2: every one passes through", n)
	}
	body := scrape(t, m)
	for _, want := range []string{
		`packs_calls_total{pack="web",status="ok",tool="fetch"} 1`,
		`packs_calls_total{pack="web",status="denied",tool="fetch"} 3`,
		`packs_denials_total{by="policy",capability="network",kind="call"} 1`,
		`packs_denials_total{by="gate",capability="",kind="call"} 1`,
		`packs_denials_total{by="integrity",capability="",kind="call"} 1`,
		`packs_denials_total{by="user",capability="env_read",kind="exercise"} 1`,
		`packs_call_duration_seconds_count{pack="web",tool="fetch"} 4`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	if strings.Count(body, "packs_denials_total{") != 4 {
		t.Errorf("denials counted: want 4 series, got\n%s", body)
	}
}
