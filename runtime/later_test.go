package runtime

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/packs-run/packs/capability"
)

// recordWatcher is an Auditor that notes, as each call's record is
// written, whether a pool of rt had been asked to refill (or was still
// building).
type recordWatcher struct {
	*recorder
	rt   *Runtime
	busy []bool
}

func (w *recordWatcher) RecordCall(ctx context.Context, r capability.CallRecord) error {
	w.rt.mu.Lock()
	busy := false
	for _, p := range w.rt.pools {
		busy = busy || p.building.Load() || len(p.kick) > 0
	}
	w.rt.mu.Unlock()
	w.busy = append(w.busy, busy)
	return w.recorder.RecordCall(ctx, r)
}

// TestPipelineRefillsAfterTheRecord: a call of the pipeline leaves its
// pool's refill (and its instance's retirement) until its audit record is
// written, so that neither shares the CPU with the commit its answer waits
// for; once Call returns, the pool is refilled all the same, call after
// call.
func TestPipelineRefillsAfterTheRecord(t *testing.T) {
	h := newHarness(t, Config{PoolSize: 1})
	p := modulePack(t, "later", "", pluginWasm, map[string]string{"echo": "echo"})
	w := &recordWatcher{recorder: h.rec, rt: h.rt}
	pl, err := NewPipeline(h.rt, PipelineConfig{Grants: userGrants(nil), Audit: w})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		o, err := pl.Call(context.Background(), Request{Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "echo",
			Arguments: json.RawMessage(`{"i":1}`), Workspace: h.ws, Approvers: []capability.Approver{yes{}}})
		if err != nil || o.Err != nil || string(o.Output) != `{"i":1}` {
			t.Fatalf("call %d: %v %v %s", i, err, o.Err, o.Output)
		}
		h.waitPoolsIdle()
		h.rt.mu.Lock()
		for _, p := range h.rt.pools {
			if len(p.ready) != cap(p.ready) {
				t.Errorf("call %d: the pool holds %d ready instances after the call, want %d", i, len(p.ready), cap(p.ready))
			}
		}
		h.rt.mu.Unlock()
	}
	// The first call started the pool, which builds as it starts.
	for i, busy := range w.busy[1:] {
		if busy {
			t.Errorf("call %d: the pool was asked to refill before the call's record was written", i+1)
		}
	}
}
