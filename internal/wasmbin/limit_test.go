package wasmbin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// limits are the ceilings the tests build in.
var limits = Limits{TableElements: 1000, StackUnits: 1 << 20}

// tables reads the (min, max) of every table of a module.
func tables(t *testing.T, wasm []byte) [][2]uint32 {
	t.Helper()
	m, err := Parse(wasm)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := m.Section(SectionTable)
	if !ok {
		return nil
	}
	r := reader{b: wasm[s.Body:s.End]}
	var out [][2]uint32
	for range r.u32() {
		r.valType()
		flags := r.byte()
		lo, hi := r.u32(), uint32(0)
		if flags == 1 {
			hi = r.u32()
		}
		out = append(out, [2]uint32{lo, hi})
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return out
}

// compiles reports whether wazero compiles wasm (with the interpreter: it
// validates the same).
func compiles(wasm []byte) error {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	_, err := rt.CompileModule(ctx, wasm)
	return err
}

// withTables is a module with one function and tables of the given
// limits (max 0: none), a global and a name section.
func withTables(lims ...[2]uint32) []byte {
	tab := AppendU32(nil, uint32(len(lims)))
	for _, l := range lims {
		if l[1] == 0 {
			tab = AppendU32(append(tab, 0x70, 0), l[0])
			continue
		}
		tab = AppendU32(AppendU32(append(tab, 0x70, 1), l[0]), l[1])
	}
	names := AppendName(nil, "name")
	fn := AppendName(AppendU32(AppendU32(nil, 1), 0), "main")
	names = append(AppendU32(append(names, 1), uint32(len(fn))), fn...)
	return module(
		section(1, 1, 0x60, 0, 0),
		section(3, 1, 0),
		section(SectionTable, tab...),
		section(SectionGlobal, 1, 0x7f, 0x00, 0x41, 0x05, 0x0b),
		section(SectionExport, append(AppendName([]byte{1}, "main"), KindFunc, 0)...),
		section(10, 1, 2, 0, 0x0b),
		section(SectionCustom, names...),
	)
}

func TestLimitTables(t *testing.T) {
	cases := []struct {
		name string
		in   [][2]uint32
		want [][2]uint32
		err  error
	}{
		{name: "no maximum gets the limit", in: [][2]uint32{{1, 0}}, want: [][2]uint32{{1, 1000}}},
		{name: "a larger maximum is lowered", in: [][2]uint32{{0, 5000}}, want: [][2]uint32{{0, 1000}}},
		{name: "a smaller maximum stays", in: [][2]uint32{{2, 10}}, want: [][2]uint32{{2, 10}}},
		{name: "tables share the limit", in: [][2]uint32{{0, 0}, {1, 900}}, want: [][2]uint32{{0, 500}, {1, 500}}},
		{name: "a minimum over the limit", in: [][2]uint32{{1001, 0}}, err: ErrTableLimit},
		{name: "a minimum over its share", in: [][2]uint32{{0, 0}, {600, 0}}, err: ErrTableLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Limit(withTables(c.in...), limits)
			if !errors.Is(err, c.err) {
				t.Fatalf("Limit: %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			if got := tables(t, out); !equalPairs(got, c.want) {
				t.Fatalf("tables = %v, want %v", got, c.want)
			}
			if err := compiles(out); err != nil {
				t.Fatalf("wazero refuses the result: %v", err)
			}
		})
	}
}

func equalPairs(a, b [][2]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLimitValid: what Limit makes of valid modules (hand-made ones and the
// runtime's test guests) still parses and compiles, and keeps its exports.
func TestLimitValid(t *testing.T) {
	ins := map[string][]byte{"sample": sample(), "tables": withTables([2]uint32{1, 0})}
	files, _ := filepath.Glob("../../runtime/testdata/*.wasm")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ins[filepath.Base(f)] = b
	}
	for name, in := range ins {
		t.Run(name, func(t *testing.T) {
			out, err := Limit(in, limits)
			if errors.Is(err, ErrTableLimit) && name == "wasi_bigtable.wasm" {
				return // its purpose
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			orig, _ := Parse(in)
			if len(m.Exports) != len(orig.Exports) {
				t.Fatalf("%d exports, want %d", len(m.Exports), len(orig.Exports))
			}
			if compiles(in) == nil {
				if err := compiles(out); err != nil {
					t.Fatalf("wazero compiles the module but refuses the result: %v", err)
				}
			}
		})
	}
}

// FuzzLimit: Limit never panics, and what it makes of a module wazero
// accepts, wazero accepts too.
func FuzzLimit(f *testing.F) {
	f.Add(sample())
	f.Add(withTables([2]uint32{1, 0}, [2]uint32{0, 7}))
	files, _ := filepath.Glob("../../runtime/testdata/*.wasm")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Limit(in, limits)
		if err != nil {
			return
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("Limit made a module Parse refuses: %v", err)
		}
		if compiles(in) == nil {
			if err := compiles(out); err != nil {
				t.Fatalf("wazero compiles the input but refuses the result: %v", err)
			}
		}
	})
}

// TestLimitRefusesNewIndices: a module that names a function or global
// beyond its own would name the moved bodies or the stack counter after the
// rewrite, and get past the stack limit; Limit refuses it (wazero would
// have refused the original).
func TestLimitRefusesNewIndices(t *testing.T) {
	fn := func(body ...byte) []byte {
		code := append([]byte{0}, body...) // no locals
		return module(
			section(1, 1, 0x60, 0, 0),
			section(3, 1, 0),
			section(SectionExport, append(AppendName([]byte{1}, "run"), KindFunc, 0)...),
			section(10, append(AppendU32([]byte{1}, uint32(len(code))), code...)...),
		)
	}
	cases := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{name: "calls itself", in: fn(0x10, 0, 0x0b), ok: true},
		{name: "calls its moved body", in: fn(0x10, 1, 0x0b)},
		{name: "calls the stack limit", in: fn(0x10, 2, 0x0b)},
		{name: "sets the stack counter", in: fn(0x41, 0, 0x24, 0, 0x0b)},
		{name: "takes a reference to its moved body", in: fn(0xd2, 1, 0x1a, 0x0b)},
		{name: "an unknown opcode", in: fn(0x12, 0, 0x0b)},
		{name: "nested blocks and a br_table", in: fn(0x02, 0x40, 0x41, 0, 0x0e, 1, 0, 0, 0x0b, 0x0b), ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Limit(c.in, limits)
			if (err == nil) != c.ok {
				t.Fatalf("Limit: %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Limit: %v, want ErrMalformed", err)
			}
			if c.ok {
				if err := compiles(c.in); err != nil {
					t.Fatalf("the case itself is invalid: %v", err)
				}
			}
		})
	}
}
