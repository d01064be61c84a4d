package capability

import (
	"sync"
	"testing"
)

func TestMemoryRecorder(t *testing.T) {
	var r MemoryRecorder
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				r.RecordExercise(Exercise{Capability: Network, Resource: string(rune('a' + i))})
			}
		})
	}
	wg.Wait()
	got := r.Exercises()
	if len(got) != 800 {
		t.Fatalf("got %d exercises, want 800", len(got))
	}
	got[0].Resource = "changed"
	if r.Exercises()[0].Resource == "changed" {
		t.Error("Exercises returned the recorder's own slice, want a copy")
	}
	if taken := r.Take(); len(taken) != 800 {
		t.Fatalf("Take returned %d, want 800", len(taken))
	}
	if left := r.Exercises(); len(left) != 0 {
		t.Errorf("after Take, %d exercises remain, want 0", len(left))
	}
}
