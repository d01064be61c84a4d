package capability

import (
	"slices"
	"sync"
)

// MemoryRecorder keeps exercises in memory: for tests, for a program that
// embeds packs and audits elsewhere, and for buffering the exercises of work
// done before a call is known. It is safe for concurrent use; the zero value
// is ready.
type MemoryRecorder struct {
	mu sync.Mutex
	ex []Exercise
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
