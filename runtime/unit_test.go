package runtime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/packs-run/packs/internal/wasmbin"
)

// wasmModule builds a module with one func type () -> (), one function per
// export name (all exported as functions) and an optional memory.
func wasmModule(memPages int, exports ...string) []byte {
	sec := func(id byte, body []byte) []byte {
		return append(wasmbin.AppendU32([]byte{id}, uint32(len(body))), body...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = append(out, sec(1, []byte{1, 0x60, 0, 0})...)
	funcs := wasmbin.AppendU32(nil, uint32(len(exports)))
	for range exports {
		funcs = append(funcs, 0)
	}
	out = append(out, sec(3, funcs)...)
	if memPages >= 0 {
		out = append(out, sec(5, wasmbin.AppendU32([]byte{1, 0}, uint32(memPages)))...)
	}
	exp := wasmbin.AppendU32(nil, uint32(len(exports)))
	for i, name := range exports {
		exp = wasmbin.AppendU32(exp, uint32(len(name)))
		exp = append(exp, name...)
		exp = append(exp, wasmbin.KindFunc)
		exp = wasmbin.AppendU32(exp, uint32(i))
	}
	out = append(out, sec(7, exp)...)
	code := wasmbin.AppendU32(nil, uint32(len(exports)))
	for range exports {
		code = append(code, 2, 0, 0x0b) // body: size 2, no locals, end
	}
	return append(out, sec(10, code)...)
}

func TestRenameExport(t *testing.T) {
	initWasm, err := os.ReadFile("testdata/plugin_init.wasm")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		in          []byte
		wantRenamed bool
	}{
		{"reactor", initWasm, true},
		{"hand-built reactor", wasmModule(1, "run", reactorInit, "other"), true},
		{"no initializer", wasmModule(1, "run"), false},
		{"haskell", wasmModule(1, reactorInit, "hs_init"), false},
		{"target taken", wasmModule(1, reactorInit, initExport), false},
		{"no export section", []byte("\x00asm\x01\x00\x00\x00"), false},
	}
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := renameExport(c.in, reactorInit, initExport)
			if err != nil {
				t.Fatal(err)
			}
			info, err := inspect(got)
			if err != nil {
				t.Fatal(err)
			}
			renamed := info.exportsFunc(initExport) && !info.exportsFunc(reactorInit)
			if renamed != c.wantRenamed {
				t.Fatalf("renamed %v, want %v (exports %q)", renamed, c.wantRenamed, info.exports)
			}
			if !c.wantRenamed && !bytes.Equal(got, c.in) {
				t.Fatal("a module with nothing to rename changed")
			}
			if _, err := rt.CompileModule(context.Background(), got); err != nil {
				t.Fatalf("the result does not compile: %v", err)
			}
		})
	}
}

func TestInspect(t *testing.T) {
	cases := []struct {
		file         string
		imports      []string
		someExports  []string
		minPages     uint32
		notExporting string
	}{
		{"testdata/plugin.wasm", []string{"extism:host/env"}, []string{"echo", "fail", "trap"}, 1, "_start"},
		{"testdata/wasi_echo.wasm", []string{"wasi_snapshot_preview1"}, []string{"_start"}, 1, "echo"},
		{"testdata/wasi_bigmem.wasm", nil, []string{"_start"}, 2048, "memory"},
	}
	for _, c := range cases {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		info, err := inspect(b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var modules []string
		for _, im := range info.imports {
			if !im.fn {
				t.Errorf("%s: import %s", c.file, im)
			}
			modules = append(modules, im.module)
		}
		if modules = slices.Compact(modules); !slices.Equal(modules, c.imports) {
			t.Errorf("%s: imports from %q, want %q", c.file, modules, c.imports)
		}
		for _, e := range c.someExports {
			if !info.exportsFunc(e) {
				t.Errorf("%s: %s not among exports %q", c.file, e, info.exports)
			}
		}
		if info.exportsFunc(c.notExporting) {
			t.Errorf("%s: %s listed as a function export", c.file, c.notExporting)
		}
		if info.minPages != c.minPages {
			t.Errorf("%s: min pages %d, want %d", c.file, info.minPages, c.minPages)
		}
	}
}

func TestWasmReaderRejects(t *testing.T) {
	good := wasmModule(1, reactorInit)
	cases := map[string][]byte{
		"empty":                  nil,
		"no magic":               []byte("\x00wasm\x01\x00\x00\x00"),
		"section past the end":   append([]byte("\x00asm\x01\x00\x00\x00"), 7, 50, 1),
		"leb128 too long":        append([]byte("\x00asm\x01\x00\x00\x00"), 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
		"leb128 overflow":        append([]byte("\x00asm\x01\x00\x00\x00"), 7, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"export name too long":   append([]byte("\x00asm\x01\x00\x00\x00"), 7, 4, 1, 9, 'a', 0),
		"stray bytes in exports": append([]byte("\x00asm\x01\x00\x00\x00"), 7, 2, 0, 0),
		"64-bit memory":          append([]byte("\x00asm\x01\x00\x00\x00"), 5, 3, 1, 4, 1),
		"truncated":              good[:len(good)-3],
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err1 := inspect(b)
			_, err2 := renameExport(b, reactorInit, initExport)
			if !errors.Is(err1, wasmbin.ErrMalformed) || !errors.Is(err2, wasmbin.ErrMalformed) {
				t.Fatalf("inspect: %v; rename: %v; want wasmbin.ErrMalformed", err1, err2)
			}
		})
	}
}

// FuzzWasmReader checks that the binary reader never panics, and that a
// rename keeps a module valid: what compiled before still compiles, with the
// export renamed.
func FuzzWasmReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.wasm")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(wasmModule(3, "a", reactorInit, "b"))
	f.Add(wasmModule(-1, reactorInit, "hs_init"))
	rt := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(context.Background())
	f.Fuzz(func(t *testing.T, b []byte) {
		info, ierr := inspect(b)
		out, rerr := renameExport(b, reactorInit, initExport)
		if rerr != nil {
			return
		}
		if ierr == nil && bytes.Equal(out, b) && info.exportsFunc(reactorInit) && !info.exportsFunc(initExport) && !info.exportsFunc("hs_init") {
			t.Fatal("an initializer was left in place")
		}
		if _, err := rt.CompileModule(context.Background(), b); err != nil {
			return
		}
		if _, err := rt.CompileModule(context.Background(), out); err != nil {
			t.Fatalf("a valid module became invalid: %v", err)
		}
		after, err := inspect(out)
		if err != nil {
			t.Fatalf("inspect after rename: %v", err)
		}
		if after.exportsFunc(reactorInit) && !after.exportsFunc("hs_init") && !info.exportsFunc(initExport) {
			t.Fatal("the initializer is still exported")
		}
	})
}

func TestJSONResult(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"  [1,2]\n", `[1,2]`},
		{"", `null`},
		{"\n\t ", `null`},
		{"hello world\n", `"hello world\n"`},
		{`{"a":1}{"b":2}`, `"{\"a\":1}{\"b\":2}"`},
		{"\xff\xfe", "\"\uFFFD\""},
		{`42`, `42`},
	}
	for _, c := range cases {
		if got := string(jsonResult([]byte(c.in))); got != c.want {
			t.Errorf("jsonResult(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestMemBudget(t *testing.T) {
	backings := map[string]func(b *memBudget, capacity, maximum uint64) experimental.LinearMemory{
		"platform": func(b *memBudget, c, m uint64) experimental.LinearMemory { return b.Allocate(c, m) },
		"heap":     func(b *memBudget, c, _ uint64) experimental.LinearMemory { return &heapMemory{b: b} },
	}
	for name, alloc := range backings {
		t.Run(name, func(t *testing.T) {
			b := newMemBudget(4, nil, 0) // 256 KiB shared by every memory of the instance
			m1 := alloc(b, pageSize, 100*pageSize)
			m2 := alloc(b, pageSize, 100*pageSize)
			steps := []struct {
				m     experimental.LinearMemory
				size  uint64
				ok    bool
				label string
			}{
				{m1, pageSize, true, "m1 minimum"},
				{m2, pageSize, true, "m2 minimum"},
				{m1, 2 * pageSize, true, "m1 to 2 pages"},
				{m2, 2 * pageSize, true, "m2 to 2 pages: budget full"},
				{m1, 3 * pageSize, false, "m1 past the budget"},
				{m2, 2 * pageSize, true, "m2 stays"},
				{m1, 5 * pageSize, false, "m1 past its reservation"},
			}
			for _, s := range steps {
				buf := s.m.Reallocate(s.size)
				if (buf != nil) != s.ok || s.ok && uint64(len(buf)) != s.size {
					t.Fatalf("%s: got %d bytes (nil %v), want ok %v", s.label, len(buf), buf == nil, s.ok)
				}
				if buf != nil {
					buf[len(buf)-1] = 1 // the memory is writable to its end
				}
			}
			if !b.exceeded() {
				t.Fatal("the refused growth was not remembered")
			}
			if buf := m2.Reallocate(2 * pageSize); buf[pageSize-1] != 1 || buf[0] != 0 {
				t.Fatal("the memory lost its content, or was not zeroed")
			}
			m1.Free()
			m2.Free()

			small := newMemBudget(1, nil, 0)
			over := alloc(small, 4*pageSize, 4*pageSize)
			if buf := over.Reallocate(4 * pageSize); len(buf) != 4*pageSize {
				t.Fatal("the first allocation (a module's declared minimum) must never fail")
			}
			over.Free()
		})
	}
}

func TestLimitWriter(t *testing.T) {
	stopped := false
	w := &limitWriter{limit: 10, stop: func() { stopped = true }}
	if n, err := w.Write([]byte("12345")); n != 5 || err != nil {
		t.Fatalf("got %d, %v", n, err)
	}
	if _, err := w.Write([]byte("678901")); err == nil || !stopped || !w.over {
		t.Fatalf("past the limit: err %v, stopped %v, over %v", err, stopped, w.over)
	}
	if got := w.buf.String(); got != "1234567890" {
		t.Fatalf("kept %q", got)
	}
	logs := &limitWriter{limit: 4}
	if n, err := logs.Write([]byte("abcdef")); n != 6 || err != nil || logs.buf.String() != "abcd" || !logs.over {
		t.Fatalf("logs: %d, %v, %q, over %v", n, err, logs.buf.String(), logs.over)
	}
}
