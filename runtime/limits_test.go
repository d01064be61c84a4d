package runtime

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// peakRSSGrowth runs f and returns how far the process's peak resident set
// rose above its resident set before f, in bytes. It resets the peak
// through /proc/self/clear_refs (Linux), and skips elsewhere.
func peakRSSGrowth(t *testing.T, f func()) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS here: %v", err)
	}
	before := procStatus(t, "VmRSS")
	f()
	return procStatus(t, "VmHWM") - before
}

// procStatus reads a field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// TestLimitsOutsideLinearMemory: tables and the call stack stay within
// bounds under a 64 MiB memory budget, a table too large up front is
// refused with ErrTableLimit (an ErrMemoryLimit), and a module within the
// limits runs.
func TestLimitsOutsideLinearMemory(t *testing.T) {
	h := newHarness(t, Config{})
	const budget = "[limits]\nmemory_pages = 1024\n" // 64 MiB
	const maxGrowth = 48 << 20
	cases := []struct {
		name, src string
		want      error // nil: the call must fail, for any reason
		ok        bool
	}{
		{name: "table.grow to 256 MiB", src: "testdata/wasi_table.wasm"},
		{name: "recursion 10M deep", src: "testdata/wasi_recurse.wasm", want: ErrStackLimit},
		{name: "table of 128 MiB declared up front", src: "testdata/wasi_bigtable.wasm", want: ErrTableLimit},
		{name: "within the limits", src: "testdata/wasi_shallow.wasm", ok: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modulePack(t, "limits-outside-"+strconv.Itoa(i), budget, c.src, map[string]string{"tool": ""})
			var err error
			growth := peakRSSGrowth(t, func() { _, err = h.invoke(p, "tool", `{}`) })
			t.Logf("peak RSS growth %d MiB, err %v", growth>>20, err)
			switch {
			case c.ok && err != nil:
				t.Fatalf("got %v, want success", err)
			case !c.ok && err == nil:
				t.Fatal("the call succeeded, want it stopped")
			case c.want != nil && (!errors.Is(err, c.want) || !errors.Is(err, ErrMemoryLimit)):
				t.Fatalf("got %v, want %v (an ErrMemoryLimit)", err, c.want)
			}
			if growth > maxGrowth {
				t.Fatalf("peak RSS grew by %d MiB, want at most %d MiB", growth>>20, maxGrowth>>20)
			}
		})
	}
}

// TestLimitStackTrap runs the guests as the runtime prepares them
// (limitResources) in a bare wazero runtime under a memory budget: the
// stack limit's trap is told apart from every other trap, and a table.grow
// past the table limit returns -1 to the guest (wasi_table then traps by
// itself).
func TestLimitStackTrap(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cases := []struct {
		src   string
		stack bool // the trap is the stack limit's
		ok    bool
	}{
		{src: "testdata/wasi_recurse.wasm", stack: true},
		{src: "testdata/wasi_table.wasm"},
		{src: "testdata/wasi_trap.wasm"},
		{src: "testdata/wasi_shallow.wasm", ok: true},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			raw, err := os.ReadFile(c.src)
			if err != nil {
				t.Fatal(err)
			}
			wasm, err := limitResources(raw)
			if err != nil {
				t.Fatal(err)
			}
			cm, err := rt.CompileModule(ctx, wasm)
			if err != nil {
				t.Fatal(err)
			}
			defer cm.Close(ctx)
			ctx := experimental.WithMemoryAllocator(ctx, newMemBudget(1024, imageOf(wasm), 0))
			mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
			if mod != nil {
				mod.Close(ctx)
			}
			if got := err == nil; got != c.ok {
				t.Fatalf("instantiate and run: %v, want ok=%v", err, c.ok)
			}
			if got := stackLimitHit(err); got != c.stack {
				t.Fatalf("stackLimitHit(%v) = %v, want %v", err, got, c.stack)
			}
		})
	}
}
