package runtime

import (
	"context"
	"os"
	"testing"
	"time"
	"slices"

	"github.com/packs-run/packs/hostfns"
)

func TestProbeWarm(t *testing.T) {
	for _, src := range []string{pluginWasm, needGoPlugin(t)} {
	h := newHarness(t, Config{PoolSize: 4})
	p := modulePack(t, "probe", "", src, map[string]string{"echo": "echo"})
	g := h.grant(p, nil)
	inv := h.invocation(p, "echo", benchInput, g)
	h.rt.Invoke(context.Background(), inv)
	pl := onlyPoolT(t, h.rt)
	var d [9][]time.Duration
	for i := 0; i < 200; i++ {
		for len(pl.ready) < cap(pl.ready) { time.Sleep(50 * time.Microsecond) }
		time.Sleep(2*time.Millisecond)
		ctx := context.Background()
		t0 := time.Now()
		inv.Tool.ValidateInput(inv.Input)
		t1 := time.Now()
		m, _ := h.rt.module(ctx, inv.Pack, inv.Tool)
		t2 := time.Now()
		req := &hostfns.Call{Pack: p.Name, Tool: "echo", Invocation: inv.ID, Grant: g, Recorder: h.rec, PackRoot: p.Dir, Workspace: h.ws}
		hostfns.Require(req, m.groups)
		environ := os.Environ()
		key := poolKey{module: m.key, pages: 1024, packRoot: p.Dir, workspace: h.ws, mounts: mountKey(g.Mounts()), env: envKey(g, environ)}
		t3 := time.Now()
		cp, _ := h.rt.plugin(ctx, m)
		s := &spec{mod: m, plugin: cp, pack: p.Name, packRoot: p.Dir, workspace: h.ws, grant: g, environ: environ, pages: 1024, log: h.rt.log}
		in, pool, _ := h.rt.take(ctx, key, s)
		t4 := time.Now()
		in.claim(inv, h.rt.log)
		t5 := time.Now()
		_, err := in.callPlugin(ctx, inv, []byte(benchInput), g.Limits())
		if err != nil { t.Fatal(err) }
		t6 := time.Now()
		in.plugin.CallWithContext(hostfns.WithCall(ctx, in.call), "echo", []byte(benchInput))
		d[8] = append(d[8], time.Since(t6))
		t6 = time.Now()
		in.close(ctx)
		t7 := time.Now()
		pool.refill()
		for j, x := range []time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), t5.Sub(t4), t6.Sub(t5), t7.Sub(t6), t7.Sub(t0)} {
			d[j] = append(d[j], x)
		}
	}
	names := []string{"validate", "module", "require+keys", "plugin+take", "claim", "call", "close", "total", "2nd call"}
	for j, n := range names {
		slices.Sort(d[j])
		t.Logf("%s %-14s p50 %v", src[len(src)-12:], n, d[j][len(d[j])/2])
	}
	}
}

func onlyPoolT(t *testing.T, rt *Runtime) *pool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, p := range rt.pools { return p }
	return nil
}
