package capability

import (
	"context"
	"slices"
	"sync"
)

// MemoryRecorder keeps exercises (and call records: it is an Auditor) in memory: for tests, for a program that
// embeds packs and audits elsewhere, and for buffering the exercises of work
// done before a call is known. It is safe for concurrent use; the zero value
// is ready.
type MemoryRecorder struct {
	mu    sync.Mutex
	ex    []Exercise
	calls []CallRecord
}

// RecordCall implements Auditor. It never fails.
func (r *MemoryRecorder) RecordCall(_ context.Context, c CallRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return nil
}

// Calls returns a copy of the call records, oldest first.
func (r *MemoryRecorder) Calls() []CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// RecordExercise implements Recorder. It never fails.
func (r *MemoryRecorder) RecordExercise(e Exercise) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ex = append(r.ex, e)
	return nil
}

// Exercises returns a copy of what has been recorded, oldest first.
func (r *MemoryRecorder) Exercises() []Exercise {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ex)
}

// Take returns what has been recorded and forgets it.
func (r *MemoryRecorder) Take() []Exercise {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex := r.ex
	r.ex = nil
	return ex
}
