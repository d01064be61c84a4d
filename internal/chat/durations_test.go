package chat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/store"
)

// TestCallWaitedAndRan: a call that waits in the approval queue until a
// person decides it elsewhere says how long it waited for them and how
// long it ran, on its result and in its audit row.
func TestCallWaitedAndRan(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	ctx := context.Background()
	s := h.open(Options{Attach: []string{"notes"}})
	if r, err := s.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), nil); err != nil || r.IsError {
		t.Fatalf("enable_tools: %+v %v", r, err)
	}
	const delay = 300 * time.Millisecond
	waiter := approve.New(h.db, approve.Options{Client: "test", Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}).Waiter()
	decided := make(chan error, 1)
	waiter.OnQueued(func(q store.QueuedCall) {
		go func() {
			time.Sleep(delay)
			decided <- h.db.DecideQueued(ctx, q.ID, store.VerdictRunOnce, "test-person", time.Now())
		}()
	})
	r, err := s.Call(ctx, PackToolName("notes", "echo"), json.RawMessage(`{"text":"hi"}`), waiter)
	if err != nil || r.IsError {
		t.Fatalf("echo: %+v %v", r, err)
	}
	if err := <-decided; err != nil {
		t.Fatal(err)
	}
	if r.Waited < delay || r.RunTime <= 0 || r.RunTime >= r.Waited || r.Duration < r.Waited+r.RunTime {
		t.Errorf("waited %v, ran %v, in all %v: want waited ≥ %v, 0 < ran < waited, all ≥ both", r.Waited, r.RunTime, r.Duration, delay)
	}
	rows := h.invocations()
	row := rows[len(rows)-1]
	if row.WaitedUS != r.Waited.Microseconds() || row.RanUS != r.RunTime.Microseconds() {
		t.Errorf("audit row: waited %d µs, ran %d µs; want %d, %d", row.WaitedUS, row.RanUS, r.Waited.Microseconds(), r.RunTime.Microseconds())
	}
	if !strings.Contains(string(row.Body), `"waited_ms":`) || !strings.Contains(string(row.Body), `"ran_ms":`) {
		t.Errorf("audit body lacks the wait and the run: %s", row.Body)
	}
}
