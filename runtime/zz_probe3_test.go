package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/packs-run/packs/hostfns"
)

func TestProbeFresh(t *testing.T) {
	h := newHarness(t, Config{PoolSize: -1})
	p := modulePack(t, "probe", "", pluginWasm, map[string]string{"echo": "echo"})
	inv := h.invocation(p, "echo", `{}`, h.grant(p, nil))
	h.rt.Invoke(context.Background(), inv)
	m, _ := h.rt.module(context.Background(), inv.Pack, inv.Tool)
	cp, _ := h.rt.plugin(context.Background(), m)
	call := &hostfns.Call{Pack: p.Name, Grant: inv.Grant, Recorder: &earlyRecorder{}, PackRoot: p.Dir, Workspace: h.ws}
	for _, mode := range []string{"budget", "default"} {
		var a, b, c, d []time.Duration
		for i := 0; i < 100; i++ {
			ctx := hostfns.WithCall(context.Background(), call)
			ictx := ctx
			if mode == "budget" { ictx = experimental.WithMemoryAllocator(ctx, newMemBudget(1024)) }
			pl, err := cp.Instance(ictx, extism.PluginInstanceConfig{ModuleConfig: wazero.NewModuleConfig()})
			if err != nil { t.Fatal(err) }
			time.Sleep(time.Millisecond)
			t0 := time.Now()
			pl.SetInput([]byte(benchInput))
			t1 := time.Now()
			pl.CallWithContext(ctx, "echo", []byte(benchInput))
			t2 := time.Now()
			pl.CallWithContext(ctx, "echo", []byte(benchInput))
			t3 := time.Now()
			pl.CallWithContext(context.Background(), "echo", []byte(benchInput))
			t4 := time.Now()
			a, b, c, d = append(a, t1.Sub(t0)), append(b, t2.Sub(t1)), append(c, t3.Sub(t2)), append(d, t4.Sub(t3))
			pl.Close(ctx)
		}
		for _, x := range [][]time.Duration{a, b, c, d} { slices.Sort(x) }
		t.Logf("%s: first SetInput %v, first call %v, second call %v, call no-cancel ctx %v", mode, a[50], b[50], c[50], d[50])
	}
}
