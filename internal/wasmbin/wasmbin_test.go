package wasmbin

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// section encodes one section.
func section(id byte, content ...byte) []byte {
	return append(AppendU32([]byte{id}, uint32(len(content))), content...)
}

func module(sections ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

// sample imports a function, a memory (min 3) and a global, defines a
// memory (min 7) and exports a function and the memory; a custom section
// sits between them.
func sample() []byte {
	imports := AppendU32(nil, 3)
	imports = append(AppendName(AppendName(imports, "env"), "f"), KindFunc, 0)
	imports = append(AppendName(AppendName(imports, "wasi"), "mem"), KindMemory, 1, 3, 9)
	imports = append(AppendName(AppendName(imports, "env"), "g"), KindGlobal, 0x7f, 0)
	exports := AppendU32(nil, 2)
	exports = append(AppendName(exports, "run"), KindFunc, 1)
	exports = append(AppendName(exports, "memory"), KindMemory, 0)
	return module(
		section(1, 1, 0x60, 0, 0),
		section(SectionImport, imports...),
		section(3, 1, 0),
		section(SectionMemory, 1, 0, 7),
		section(SectionCustom, append(AppendName(nil, "note"), 1, 2, 3)...),
		section(SectionExport, exports...),
		section(10, 1, 2, 0, 0x0b),
	)
}

func TestParse(t *testing.T) {
	m, err := Parse(sample())
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		mod, name string
		kind      byte
	}
	var got []entry
	for _, im := range m.Imports {
		got = append(got, entry{im.Module, im.Name, im.Kind()})
	}
	for _, e := range m.Exports {
		got = append(got, entry{"", e.Name, e.Kind()})
	}
	want := []entry{{"env", "f", KindFunc}, {"wasi", "mem", KindMemory}, {"env", "g", KindGlobal}, {"", "run", KindFunc}, {"", "memory", KindMemory}}
	if !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	if m.MinPages != 7 {
		t.Errorf("MinPages %d, want 7", m.MinPages)
	}
	if _, ok := m.Section(SectionExport); !ok {
		t.Error("no export section found")
	}
	if _, ok := m.Section(4); ok {
		t.Error("a table section found in a module without one")
	}
}

func TestReplace(t *testing.T) {
	in := sample()
	m, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	sec, _ := m.Section(SectionExport)
	exports := slices.Clone(m.Exports)
	exports[0].Name = "a much longer name than before, to grow the section"
	out := Replace(in, sec, AppendExports(nil, exports))
	after, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if after.Exports[0].Name != exports[0].Name || after.Exports[1].Name != "memory" {
		t.Errorf("exports after Replace: %+v", after.Exports)
	}
	if !bytes.Equal(in[:sec.Start], out[:sec.Start]) || !bytes.Equal(in[sec.End:], out[len(out)-(len(in)-sec.End):]) {
		t.Error("bytes outside the replaced section changed")
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string][]byte{
		"empty":                nil,
		"not wasm":             []byte("#!/bin/sh\necho hi\n"),
		"a component":          {0, 'a', 's', 'm', 0x0d, 0, 1, 0},
		"section past the end": module([]byte{SectionExport, 50, 1}),
		"size LEB too long":    module([]byte{SectionImport, 0x80, 0x80, 0x80, 0x80, 0x80, 0}),
		"size LEB overflow":    module([]byte{SectionImport, 0xff, 0xff, 0xff, 0xff, 0x7f}),
		"export count lie":     module(section(SectionExport, 0xff, 0xff, 0xff, 0xff, 0x0f)),
		"function count lie":   module(section(3, 0xff, 0xff, 0xff, 0xff, 0x0f)),
		"import count lie":     module(section(SectionImport, 5, 0, 0, 0, 0, 0)),
		"unknown import kind":  module(section(SectionImport, 1, 0, 0, 0x09, 0)),
		"name past the end":    module(section(SectionImport, 1, 0x7f, 0)),
		"stray bytes":          module(section(SectionExport, 0, 0)),
		"two import sections":  module(section(SectionImport, 0), section(SectionImport, 0)),
		"bad limits flags":     module(section(SectionMemory, 1, 0x09, 0)),
		"64-bit memory":        module(section(SectionMemory, 1, 4, 1)),
		"64-bit memory import": module(section(SectionImport, 1, 0, 0, KindMemory, 4, 1)),
		"truncated":            sample()[:len(sample())-3],
	}
	for name, in := range cases {
		if m, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Parse = %v, %v; want ErrMalformed", name, m, err)
		}
	}
}

// FuzzParse: Parse never panics, and re-encoding the import and export
// sections of a module it accepts gives back the very same bytes.
func FuzzParse(f *testing.F) {
	f.Add(sample())
	files, _ := filepath.Glob("../testdata/*.wasm")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if sec, ok := m.Section(SectionImport); ok {
			if out := Replace(in, sec, AppendImports(nil, m.Imports)); !canonicalEqual(in, out, sec) {
				t.Fatalf("re-encoding the imports changed the module")
			}
		}
		if sec, ok := m.Section(SectionExport); ok {
			if out := Replace(in, sec, AppendExports(nil, m.Exports)); !canonicalEqual(in, out, sec) {
				t.Fatalf("re-encoding the exports changed the module")
			}
		}
	})
}

// canonicalEqual reports whether out equals in, or, when in encodes some
// LEB128 value of section sec with more bytes than needed, whether out
// parses to the same imports and exports.
func canonicalEqual(in, out []byte, sec Section) bool {
	if bytes.Equal(in, out) {
		return true
	}
	a, errA := Parse(in)
	b, errB := Parse(out)
	if errA != nil || errB != nil || a.MinPages != b.MinPages || len(a.Imports) != len(b.Imports) || len(a.Exports) != len(b.Exports) {
		return false
	}
	for i := range a.Imports {
		if a.Imports[i].Module != b.Imports[i].Module || a.Imports[i].Name != b.Imports[i].Name || !bytes.Equal(a.Imports[i].Desc, b.Imports[i].Desc) {
			return false
		}
	}
	for i := range a.Exports {
		if a.Exports[i].Name != b.Exports[i].Name || !bytes.Equal(a.Exports[i].Desc, b.Exports[i].Desc) {
			return false
		}
	}
	return bytes.Equal(in[:sec.Start+1], out[:sec.Start+1]) && bytes.Equal(in[sec.End:], out[len(out)-(len(in)-sec.End):])
}
