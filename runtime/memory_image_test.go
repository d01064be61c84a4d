package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/packs-run/packs/internal/wasmbin"
)

// imageModules are the modules the image tests read: every test guest, the
// examples' modules and the Go plugin.
func imageModules(tb testing.TB) []string {
	var out []string
	for _, glob := range []string{"testdata/*.wasm", "../wasm-examples/*/bin/*.wasm"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, m...)
	}
	if goPluginWasm != "" {
		out = append(out, goPluginWasm)
	}
	return out
}

// stubImports instantiates, in rt, host modules that serve every function
// cm imports with a function that returns 8s.
func stubImports(t *testing.T, ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule) {
	t.Helper()
	builders := map[string]wazero.HostModuleBuilder{}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if rt.Module(mod) != nil {
			continue
		}
		b, ok := builders[mod]
		if !ok {
			b = rt.NewHostModuleBuilder(mod)
			builders[mod] = b
		}
		results := len(f.ResultTypes())
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			for i := range results {
				stack[i] = 8 // WASI's EBADF: a start section that asks for descriptors stops
			}
		}), f.ParamTypes(), f.ResultTypes()).Export(name)
	}
	for _, b := range builders {
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// memoryAfterInstantiation instantiates wasm in a new runtime (its imports
// stubbed; a start section runs) under a memory budget starting from img, and returns its memory.
func memoryAfterInstantiation(t *testing.T, wasm []byte, img *dataImage) []byte {
	t.Helper()
	ctx := context.Background()
	// The interpreter: nothing runs, and compiling the Go modules to
	// machine code would take most of a minute.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	stubImports(t, ctx, rt, cm)
	b := newMemBudget(1<<16-1, img, 0)
	mod, err := rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, b), cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	if err := b.checkImage(); err != nil {
		t.Fatal(err)
	}
	mem, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		t.Fatal("memory unreadable")
	}
	return bytes.Clone(mem)
}

// TestDataImageIsWhatTheSegmentsWrite: a module without its data segments,
// its memory started from their image, holds exactly what wazero's own
// copying of the segments leaves in the memory of the module as it was.
func TestDataImageIsWhatTheSegmentsWrite(t *testing.T) {
	stripped := 0
	for _, path := range imageModules(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			limited, err := wasmbin.Limit(raw, wasmbin.Limits{TableElements: tableElements, StackUnits: stackUnits})
			if err != nil {
				t.Skipf("not a module the runtime runs: %v", err)
			}
			out := stripData(limited, shaHex(raw))
			img := imageOf(out)
			if img == nil {
				if !bytes.Equal(out, limited) {
					t.Fatal("the module changed, and no image was kept")
				}
				t.Skip("keeps its data segments")
			}
			stripped++
			want := memoryAfterInstantiation(t, limited, nil)
			got := memoryAfterInstantiation(t, out, img)
			if !bytes.Equal(got, want) {
				t.Fatalf("memory differs (%d bytes vs %d) at offset %d", len(got), len(want), firstDifference(got, want))
			}
		})
	}
	if stripped < 5 {
		t.Fatalf("%d modules stripped, want the test guests with data, the examples and the Go plugin", stripped)
	}
}

// TestDataImageOverlappingSegments: segments written later win, gaps between
// them stay zero, and a module that names a segment (a data count section)
// or puts one out of bounds keeps its segments.
func TestDataImageOverlappingSegments(t *testing.T) {
	seg := func(at byte, data string) []byte {
		return append([]byte{0, 0x41, at, 0x0b, byte(len(data))}, data...)
	}
	module := func(extra []byte, segs ...[]byte) []byte {
		b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 5, 3, 1, 0, 1} // one memory of one page
		b = append(b, extra...)
		var body []byte
		body = append(body, byte(len(segs)))
		for _, s := range segs {
			body = append(body, s...)
		}
		b = append(b, 11, byte(len(body)))
		return append(b, body...)
	}
	overlapping := module(nil, seg(10, "aaaa"), seg(12, "bb"), seg(40, "c"), seg(11, "d"))
	out := stripData(overlapping, shaHex(overlapping))
	img := imageOf(out)
	if img == nil {
		t.Fatal("not stripped")
	}
	got := memoryAfterInstantiation(t, out, img)
	want := make([]byte, pageSize)
	copy(want[10:], "adbb")
	copy(want[40:], "c")
	if !bytes.Equal(got, want) {
		t.Fatalf("memory differs at offset %d", firstDifference(got, want))
	}
	if !bytes.Equal(got, memoryAfterInstantiation(t, overlapping, nil)) {
		t.Fatal("differs from wazero's copying of the segments")
	}

	kept := []struct {
		name string
		wasm []byte
	}{
		{"out of bounds", module(nil, append([]byte{0, 0x41, 0xff, 0xff, 0x03, 0x0b, 2}, "zz"...))},
		{"only a passive segment", module(nil, append([]byte{1, 1}, "p"...))},
		{"memory 1", module(nil, append([]byte{2, 1, 0x41, 0, 0x0b, 1}, "m"...))},
		{"global offset", module(nil, append([]byte{0, 0x23, 0, 0x0b, 1}, "g"...))},
	}
	for _, k := range kept {
		if out := stripData(k.wasm, shaHex(k.wasm)); !bytes.Equal(out, k.wasm) || imageOf(out) != nil {
			t.Errorf("%s: stripped", k.name)
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzStripData: stripData never panics, and what it strips has an image
// inside the memory's declared minimum.
func FuzzStripData(f *testing.F) {
	for _, path := range []string{"testdata/plugin.wasm", "testdata/wasi_echo.wasm", "testdata/plugin_state.wasm", "testdata/wasi_files.wasm"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		img, _, _, ok := readImage(wasm)
		if !ok {
			return
		}
		if img.off+img.size > img.minBytes || img.off%uint64(os.Getpagesize()) != 0 || uint64(len(img.data)) != img.size {
			t.Fatalf("image [%d, +%d) outside %d bytes of memory", img.off, img.size, img.minBytes)
		}
	})
}

// shaHex is the SHA-256 (hex) of b, as moduleKey.sha names a module file.
func shaHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestCompiledModuleReleasesBytes: once a module is compiled, the runtime
// keeps no copy of its prepared bytes (megabytes for a Go guest, per
// installed pack), and its instances still start from its data image: the
// Go plugin's initializer and call need their data segments.
func TestCompiledModuleReleasesBytes(t *testing.T) {
	src := needGoPlugin(t)
	h := newHarness(t, Config{PoolSize: -1})
	p := modulePack(t, "released", "", src, map[string]string{"echo": "echo"})
	for range 2 {
		res, err := h.invoke(p, "echo", `{"a":1}`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(res.Output), `{"a":1}`; got != want {
			t.Fatalf("echo: got %s, want %s", got, want)
		}
	}
	h.rt.mu.Lock()
	defer h.rt.mu.Unlock()
	if len(h.rt.modules) != 1 {
		t.Fatalf("%d modules, want 1", len(h.rt.modules))
	}
	for _, e := range h.rt.modules {
		if e.m.wasm != nil {
			t.Errorf("the compiled module still holds %d bytes of its prepared form", len(e.m.wasm))
		}
		if e.m.image == nil {
			t.Error("the Go plugin has no data image")
		}
	}
}
