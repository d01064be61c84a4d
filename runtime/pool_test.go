package runtime

import (
	"context"
	"sync"
	"testing"
)

// TestPoolKeepsManyKeysWarm: with the default memory budget, 50 pool keys
// (50 packs in use, or one pack in 50 workspaces) all stay warm: none is
// closed to make room for another, so no call builds its instance on the
// spot.
func TestPoolKeepsManyKeysWarm(t *testing.T) {
	const keys = 50
	h := newHarness(t, Config{PoolSize: 1})
	p := modulePack(t, "many", "", pluginWasm, map[string]string{"echo": "echo"})
	g := h.grant(p, nil)
	for range keys {
		inv := h.invocation(p, "echo", `{}`, g)
		inv.Workspace = t.TempDir()
		if _, err := h.rt.invoke(context.Background(), inv); err != nil {
			t.Fatal(err)
		}
	}
	waitPoolsFull(h.rt)
	h.rt.mu.Lock()
	n, warm := len(h.rt.pools), 0
	for _, p := range h.rt.pools {
		if len(p.ready) == cap(p.ready) {
			warm++
		}
	}
	h.rt.mu.Unlock()
	if n != keys || warm != keys {
		t.Fatalf("%d pools, %d of them full, want %d full", n, warm, keys)
	}
}

// TestPoolGrowsWithDemand: a pool keeps as many ready instances as its
// calls have asked for. A pack called once, then left, keeps one ready
// instance, not PoolSize; calls that come together find none ready, and
// the pool then keeps more, up to PoolSize, all of them fresh.
func TestPoolGrowsWithDemand(t *testing.T) {
	const size = 4
	h := newHarness(t, Config{PoolSize: size})
	p := modulePack(t, "demand", "", pluginWasm, map[string]string{"echo": "echo"})
	g := h.grant(p, nil)
	if _, err := h.rt.invoke(context.Background(), h.invocation(p, "echo", `{}`, g)); err != nil {
		t.Fatal(err)
	}
	waitPoolsFull(h.rt)
	pl := onlyPool(t, h.rt)
	if got := len(pl.ready); got != 1 {
		t.Fatalf("a pack called once keeps %d ready instances, want 1", got)
	}

	// 8 callers at once, several rounds: at most one finds an instance
	// ready at first, the others build theirs on the spot.
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 8*4)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 4 {
				if _, err := h.rt.invoke(context.Background(), h.invocation(p, "echo", `{}`, g)); err != nil {
					errs <- err
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitPoolsFull(h.rt)
	if got := len(pl.ready); got != size {
		t.Fatalf("after calls came together the pool keeps %d ready instances, want %d", got, size)
	}
}
