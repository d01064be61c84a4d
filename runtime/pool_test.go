package runtime

import (
	"context"
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
