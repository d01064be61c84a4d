package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/wasmbin"
	"github.com/packs-run/packs/packs"
)

// The benchmarks of the table. Each reports p50-ns: the median of
// the per-call durations it recorded (ns/op, an average, hides the shape).

// benchGuests are the trivial tool ("echo": input back as output) in each
// guest language available here.
func benchGuests(b *testing.B) []struct{ name, src, fn string } {
	guests := []struct{ name, src, fn string }{
		{"wat-plugin", pluginWasm, "echo"},
		{"wasi-command", wasiEcho, ""},
	}
	if goPluginWasm != "" {
		guests = append(guests, struct{ name, src, fn string }{"go-plugin", goPluginWasm, "echo"})
	} else {
		b.Logf("go-plugin skipped: %v", goPluginErr)
	}
	// The examples' Rust plugin (wasm32-unknown-unknown, about 80 KB); its
	// slugify of a short text is as trivial a tool as echo.
	if _, err := os.Stat(rustPlugin); err == nil {
		guests = append(guests, struct{ name, src, fn string }{"rust-plugin", rustPlugin, "slugify"})
	} else {
		b.Logf("rust-plugin skipped: %v (run make examples)", err)
	}
	return guests
}

const benchInput = `{"text":"hello, world"}`

// rustPlugin is built by make examples.
const rustPlugin = "../wasm-examples/text-kit/bin/text-kit.wasm"

// BenchmarkWarmCall is a call that finds a pre-initialized instance in the
// pool: a fresh instance per call, nothing shared with the previous one.
// Between calls it waits for the pool to be full again, as it is when calls
// are seconds apart: p50-ns is the call as the caller sees it; ns/op also
// includes that wait (the pool's background refill), so it is the sustained
// rate of one caller. Its peers (see peers_test.go) run the same module
// without packs; their p50-ns is the comparison.
func BenchmarkWarmCall(b *testing.B) {
	for _, g := range benchGuests(b) {
		b.Run(g.name+"/packs", func(b *testing.B) {
			h := newHarness(b, Config{PoolSize: 2})
			p := modulePack(b, "warm", "", g.src, map[string]string{"echo": g.fn})
			inv := h.invocation(p, "echo", benchInput, h.grant(p, nil))
			if _, err := h.rt.invoke(context.Background(), inv); err != nil {
				b.Fatal(err)
			}
			pl := onlyPool(b, h.rt)
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for len(pl.ready) < int(pl.target.Load()) {
					time.Sleep(20 * time.Microsecond)
				}
				begin := time.Now()
				if _, err := h.rt.invoke(context.Background(), inv); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(begin))
			}
			reportPercentiles(b, durs)
		})
		for _, kind := range peerKinds(g.fn == "") {
			b.Run(g.name+"/peer="+kind, func(b *testing.B) {
				pr := peerFactory(b, kind, g.src, g.fn)()
				defer pr.close(context.Background())
				if err := pr.call(context.Background(), []byte(benchInput)); err != nil {
					b.Fatal(err)
				}
				durs := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					begin := time.Now()
					if err := pr.call(context.Background(), []byte(benchInput)); err != nil {
						b.Fatal(err)
					}
					durs = append(durs, time.Since(begin))
				}
				reportPercentiles(b, durs)
			})
		}
	}
}

// BenchmarkExecFallback is the same trivial tool as a native command
// through the exec fallback (fork, exec, wait): compare its p50-ns with
// BenchmarkWarmCall's.
func BenchmarkExecFallback(b *testing.B) {
	h := newHarness(b, Config{})
	tools := `[{"name": "echo", "description": "Echo.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}, "run": {"exec": ["echo", "{{text}}"]}}]`
	p := testPack{name: "native", toml: "[capabilities]\nterminal_exec = { commands = [\"echo\"] }\n", tools: tools}.load(b)
	inv := h.invocation(p, "echo", benchInput, h.grant(p, nil))
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		if _, err := h.rt.invoke(context.Background(), inv); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(begin))
	}
	reportPercentiles(b, durs)
}

// BenchmarkFirstCall is a tool's first call in a new Runtime whose disk
// cache holds the module (Precompile ran at install): what a fresh `packs
// run` process pays, minus the process start. Each op builds a Runtime with
// a new in-memory engine, so nothing compiled survives between ops but the
// disk cache.
func BenchmarkFirstCall(b *testing.B) {
	for _, g := range benchGuests(b) {
		b.Run(g.name, func(b *testing.B) {
			cache := b.TempDir()
			h := newHarness(b, Config{CacheDir: cache})
			p := modulePack(b, "first", "", g.src, map[string]string{"echo": g.fn})
			if err := h.rt.Precompile(context.Background(), p); err != nil {
				b.Fatal(err)
			}
			g := h.grant(p, nil)
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				begin := time.Now()
				rt, err := New(context.Background(), Config{CacheDir: cache, PoolSize: -1})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rt.invoke(context.Background(), h.invocation(p, "echo", benchInput, g)); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(begin))
				rt.Close(context.Background())
			}
			reportPercentiles(b, durs)
		})
	}
}

// BenchmarkThroughput runs calls from GOMAXPROCS goroutines at once, each
// on a fresh instance: calls/s is what the machine sustains (instantiation
// included, as the pool cannot refill faster than the cores allow). Its
// peers run as many goroutines, each with its own peer (one kept instance
// each, for peer=extism-reused).
func BenchmarkThroughput(b *testing.B) {
	for _, g := range benchGuests(b) {
		b.Run(g.name+"/packs", func(b *testing.B) {
			h := newHarness(b, Config{PoolSize: goruntime.GOMAXPROCS(0)})
			p := modulePack(b, "many", "", g.src, map[string]string{"echo": g.fn})
			gr := h.grant(p, nil)
			if _, err := h.rt.invoke(context.Background(), h.invocation(p, "echo", benchInput, gr)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			begin := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := h.rt.invoke(context.Background(), h.invocation(p, "echo", benchInput, gr)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "calls/s")
		})
		for _, kind := range peerKinds(g.fn == "") {
			b.Run(g.name+"/peer="+kind, func(b *testing.B) {
				newPeer := peerFactory(b, kind, g.src, g.fn)
				b.ResetTimer()
				begin := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					pr := newPeer()
					defer pr.close(context.Background())
					for pb.Next() {
						if err := pr.call(context.Background(), []byte(benchInput)); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "calls/s")
			})
		}
	}
}

// BenchmarkPooledInstanceMemory measures what one ready instance holds:
// rss-B/instance is the growth of the process's resident memory (linear
// memories live outside the Go heap on Linux, in pages the guest touched;
// pages of a module's data image that instances share count once),
// heap-B/instance that of the Go heap (wazero's per-instance state). The
// compiled code is shared and counted in neither.
func BenchmarkPooledInstanceMemory(b *testing.B) {
	for _, g := range benchGuests(b) {
		b.Run(g.name, func(b *testing.B) {
			h := newHarness(b, Config{PoolSize: -1})
			p := modulePack(b, "mem", "", g.src, map[string]string{"echo": g.fn})
			inv := h.invocation(p, "echo", benchInput, h.grant(p, nil))
			if _, err := h.rt.invoke(context.Background(), inv); err != nil {
				b.Fatal(err)
			}
			s := benchSpec(b, h, inv)
			const held = 16
			var rss, heap float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rss0, heap0 := settledMemory(b)
				ins := make([]*instance, 0, held)
				for j := 0; j < held; j++ {
					early := &capability.MemoryRecorder{}
					in, err := newInstance(context.Background(), s, s.ahead(early), early)
					if err != nil {
						b.Fatal(err)
					}
					ins = append(ins, in)
				}
				rss1, heap1 := memoryInUse(b)
				rss, heap = float64(rss1-rss0)/held, float64(heap1-heap0)/held
				for _, in := range ins {
					in.close(context.Background())
				}
			}
			b.ReportMetric(rss, "rss-B/instance")
			b.ReportMetric(heap, "heap-B/instance")
		})
	}
}

// benchSpec rebuilds the spec that Invoke uses for inv.
func benchSpec(b *testing.B, h *harness, inv Invocation) *spec {
	m, err := h.rt.module(context.Background(), inv.Pack, inv.Tool, nil)
	if err != nil {
		b.Fatal(err)
	}
	lim := inv.Grant.Limits()
	s := &spec{mod: m, pack: inv.Pack.Name, packRoot: inv.Pack.Dir, workspace: inv.Workspace, grant: inv.Grant, pages: lim.MemoryPages, log: h.rt.log}
	if inv.Tool.Run.ABI == packs.ABIWASI {
		s.rt, s.tool = h.rt.wasi, inv.Tool.Name
	} else if s.plugin, err = h.rt.plugin(context.Background(), m); err != nil {
		b.Fatal(err)
	}
	return s
}

// memoryInUse returns the process's proportional set size (its resident
// memory, a page mapped N times counting 1/N each time: pages that
// instances share count once), from /proc, and the Go heap in use, after a
// garbage collection that returns freed memory to the system (else a heap
// grown and freed earlier hides what is allocated after).
func memoryInUse(b *testing.B) (pss, heap int64) {
	debug.FreeOSMemory()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	rollup, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		b.Skipf("no /proc/self/smaps_rollup to read resident memory from: %v", err)
	}
	for _, line := range strings.Split(string(rollup), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			var kb int64
			if _, err := fmt.Sscan(rest, &kb); err != nil {
				b.Fatal(err)
			}
			return kb << 10, int64(ms.HeapInuse)
		}
	}
	b.Fatalf("no Pss in /proc/self/smaps_rollup:\n%s", rollup)
	return 0, 0
}

// settledMemory is memoryInUse once the work in the background has
// settled: the least of five readings 100 ms apart. Used instances are
// closed in the background after their calls (Runtime.retire), and
// wazero unmaps a closed Runtime's compiled code in finalizers, which run
// after a collection: a reading taken before either is done counts what
// is already let go.
func settledMemory(b *testing.B) (pss, heap int64) {
	pss, heap = memoryInUse(b)
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		p, h := memoryInUse(b)
		pss, heap = min(pss, p), min(heap, h)
	}
	return pss, heap
}

// onlyPool returns the Runtime's one pool.
func onlyPool(b testing.TB, rt *Runtime) *pool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.pools) != 1 {
		b.Fatalf("%d pools, want 1", len(rt.pools))
	}
	for _, p := range rt.pools {
		return p
	}
	return nil
}

// reportPercentiles reports the median and 90th percentile of durs.
func reportPercentiles(b *testing.B, durs []time.Duration) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durs[len(durs)*9/10].Nanoseconds()), "p90-ns")
}

// BenchmarkPipelineCall is BenchmarkWarmCall through the whole pipeline, as
// every front end calls: the schema check, the gate (an approver that says
// yes), the grant, the pack's integrity against its digest (the stamp cache
// makes it one lstat per file), a fresh capability-free instance from the
// pool claimed for the call, the call, and the audit record (in memory, to
// leave out the disk's fsync, which BenchmarkAuditAppend measures).
func BenchmarkPipelineCall(b *testing.B) {
	for _, g := range benchGuests(b) {
		b.Run(g.name, func(b *testing.B) {
			h := newHarness(b, Config{PoolSize: 2})
			p := modulePack(b, "warm", "", g.src, map[string]string{"echo": g.fn})
			digest, err := packs.Digest(p.Dir)
			if err != nil {
				b.Fatal(err)
			}
			pl, err := NewPipeline(h.rt, PipelineConfig{Grants: userGrants(nil), Audit: &capability.MemoryRecorder{}})
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Pack: p, Ref: capability.PackRef{Name: p.Name, Digest: digest}, Tool: "echo",
				Arguments: []byte(benchInput), Workspace: h.ws, Approvers: []capability.Approver{yes{}}}
			call := func() {
				if o, err := pl.Call(context.Background(), req); err != nil || o.Err != nil {
					b.Fatal(err, o.Err)
				}
			}
			call()
			pool := onlyPool(b, h.rt)
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for len(pool.ready) < int(pool.target.Load()) {
					time.Sleep(20 * time.Microsecond)
				}
				begin := time.Now()
				call()
				durs = append(durs, time.Since(begin))
			}
			reportPercentiles(b, durs)
		})
	}
}

// warmPacks is how many packs BenchmarkWarmPacks keeps warm.
const warmPacks = 50

// BenchmarkWarmPacks keeps warmPacks packs warm, each with its own module
// (as installed packs are: distinct modules, so distinct compiled code; see
// variantModules) and its own pool, and calls them round robin: MiB/pack
// is the growth of the process's resident memory (see memoryInUse) with
// every pack called and every pool settled, divided by warmPacks; p50-ns
// the call. Its peer keeps one go-sdk instance per pack, each compiled
// from the same modules.
func BenchmarkWarmPacks(b *testing.B) {
	for _, g := range benchGuests(b) {
		if g.fn == "" {
			continue
		}
		b.Run(g.name+"/packs", func(b *testing.B) {
			mods := variantModules(b, g.src, warmPacks)
			h := newHarness(b, Config{CacheDir: benchCache()})
			var invs []Invocation
			for i, mod := range mods {
				p := modulePack(b, fmt.Sprintf("warm%d", i), "", mod, map[string]string{"echo": g.fn})
				if err := h.rt.Precompile(context.Background(), p); err != nil {
					b.Fatal(err)
				}
				invs = append(invs, h.invocation(p, "echo", benchInput, h.grant(p, nil)))
			}
			// The packs are loaded from the disk cache by a new Runtime, as
			// in a new process; what Precompile compiled is released.
			h.rt.Close(context.Background())
			h = newHarness(b, Config{CacheDir: benchCache()})
			call := func(inv Invocation) {
				if _, err := h.rt.invoke(context.Background(), inv); err != nil {
					b.Fatal(err)
				}
			}
			rss0, heap0 := settledMemory(b)
			for _, inv := range invs {
				call(inv)
			}
			waitPoolsFull(h.rt)
			rss1, heap1 := settledMemory(b)
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				begin := time.Now()
				call(invs[i%len(invs)])
				durs = append(durs, time.Since(begin))
			}
			b.StopTimer()
			reportPercentiles(b, durs)
			b.ReportMetric(float64(rss1-rss0)/(1<<20)/warmPacks, "MiB/pack")
			b.ReportMetric(float64(heap1-heap0)/(1<<20)/warmPacks, "heap-MiB/pack")
		})
		b.Run(g.name+"/peer=extism-reused", func(b *testing.B) {
			mods := variantModules(b, g.src, warmPacks)
			rss0, heap0 := settledMemory(b)
			peers := make([]peer, warmPacks)
			for i := range peers {
				peers[i] = peerFactoryIn(b, benchCache(), "extism-reused", mods[i], g.fn)()
				defer peers[i].close(context.Background())
				if err := peers[i].call(context.Background(), []byte(benchInput)); err != nil {
					b.Fatal(err)
				}
			}
			rss1, heap1 := settledMemory(b)
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				begin := time.Now()
				if err := peers[i%len(peers)].call(context.Background(), []byte(benchInput)); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(begin))
			}
			b.StopTimer()
			reportPercentiles(b, durs)
			b.ReportMetric(float64(rss1-rss0)/(1<<20)/warmPacks, "MiB/pack")
			b.ReportMetric(float64(heap1-heap0)/(1<<20)/warmPacks, "heap-MiB/pack")
		})
	}
}

// variantModules writes n distinct modules that behave as src does: src
// with a custom section that numbers it appended. Each hashes differently,
// so each is compiled, cached and held on its own, as n different packs'
// modules are.
func variantModules(b *testing.B, src string, n int) []string {
	b.Helper()
	wasm, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	out := make([]string, n)
	for i := range out {
		payload := wasmbin.AppendName(nil, "packs-bench-variant")
		payload = wasmbin.AppendU32(payload, uint32(i))
		mod := append(append(slices.Clip(wasm), wasmbin.SectionCustom), wasmbin.AppendU32(nil, uint32(len(payload)))...)
		mod = append(mod, payload...)
		out[i] = filepath.Join(dir, fmt.Sprintf("v%d.wasm", i))
		if err := os.WriteFile(out[i], mod, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// benchCache is the compilation cache of the benchmarks that compile many
// distinct modules (BenchmarkWarmPacks): kept across runs, beside
// internal/testcache's, so that only the first run compiles them. Entries
// are keyed by each module's digest and the compiler's version. Prepared
// modules are named after the program that wrote them (prepared.go), and
// every rebuilt test binary is a new program: the first use in a process
// removes those of earlier ones, so they do not pile up.
func benchCache() string {
	dir := filepath.Join(os.TempDir(), "packs-bench-modules")
	clearPrepared.Do(func() { os.RemoveAll(filepath.Join(dir, preparedDir)) })
	return dir
}

var clearPrepared sync.Once

// waitPoolsFull waits until no pool of rt is building.
func waitPoolsFull(rt *Runtime) {
	for {
		rt.mu.Lock()
		busy := false
		for _, p := range rt.pools {
			busy = busy || p.building.Load()
		}
		rt.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
