// Package wasmbin reads the parts of a WebAssembly binary (core module,
// version 1) that packs needs before it hands the bytes to wazero: the
// section layout, the imports, the exports and the memories' minimum sizes,
// and it re-encodes one section while copying every other byte.
//
// Parse is also a guard. wazero v1.12.0 allocates for a vector's declared
// count before it reads the entries, so a 16-byte module whose export
// section claims four billion entries exhausts the host's memory. Parse
// refuses any known vector section whose count exceeds its size in bytes
// (every entry takes at least one byte); the runtime compiles nothing that
// Parse refused. It imports only the standard library.
package wasmbin

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every error of Parse.
var ErrMalformed = errors.New("wasmbin: malformed wasm binary")

// Section ids of the binary format.
const (
	SectionCustom = 0
	SectionImport = 2
	SectionMemory = 5
	SectionExport = 7
)

// Import and export kinds.
const (
	KindFunc   = 0
	KindTable  = 1
	KindMemory = 2
	KindGlobal = 3
	KindTag    = 4
)

// vectorSections are the known sections that hold one vector: type,
// import, function, table, memory, global, export, element, code, data and
// tag.
var vectorSections = [14]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 9: true, 10: true, 11: true, 13: true}

var header = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Section is one section of a module: the id byte at Start, its content
// from Body to End.
type Section struct {
	ID               byte
	Start, Body, End int
}

// Import is one import. Desc is its descriptor as encoded: the kind byte
// and the type.
type Import struct {
	Module, Name string
	Desc         []byte
}

// Kind returns the import's kind (KindFunc ...).
func (im Import) Kind() byte { return im.Desc[0] }

// Export is one export. Desc is its descriptor as encoded: the kind byte
// and the index.
type Export struct {
	Name string
	Desc []byte
}

// Kind returns the export's kind (KindFunc ...).
func (e Export) Kind() byte { return e.Desc[0] }

// Module is what Parse read. Its Desc slices alias the parsed bytes.
type Module struct {
	Imports  []Import
	Exports  []Export
	MinPages uint32 // the largest declared minimum of its memories, imported or defined

	sections []Section
}

// Section returns the section with id (not a custom one), if present.
func (m *Module) Section(id byte) (Section, bool) {
	for _, s := range m.sections {
		if s.ID == id {
			return s, true
		}
	}
	return Section{}, false
}

// Parse reads wasm's section headers and its import, memory and export
// sections. Every error wraps ErrMalformed and names the offset; Parse never
// panics and allocates no more than the input's size warrants.
func Parse(wasm []byte) (*Module, error) {
	if len(wasm) < len(header) || !bytes.Equal(wasm[:4], header[:4]) {
		return nil, malformed("no \\0asm magic: not a WebAssembly binary")
	}
	if !bytes.Equal(wasm[4:8], header[4:]) {
		return nil, malformed("version % x: only core modules of version 1 are supported", wasm[4:8])
	}
	m := &Module{}
	var seen [256]bool
	r := reader{b: wasm, i: len(header)}
	for r.i < len(wasm) {
		start := r.i
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return nil, malformed("section header at offset %d: %v", start, r.err)
		}
		if int64(size) > int64(len(wasm)-r.i) {
			return nil, malformed("section %d at offset %d claims %d bytes, only %d remain", id, start, size, len(wasm)-r.i)
		}
		if id != SectionCustom {
			if seen[id] {
				return nil, malformed("second section %d at offset %d", id, start)
			}
			seen[id] = true
		}
		s := Section{ID: id, Start: start, Body: r.i, End: r.i + int(size)}
		r.i = s.End
		m.sections = append(m.sections, s)
	}
	for _, s := range m.sections {
		if int(s.ID) >= len(vectorSections) || !vectorSections[s.ID] {
			continue
		}
		// Each entry takes at least one byte: a count beyond the section's
		// size is a lie that would make a decoder allocate for it.
		r := reader{b: wasm[s.Body:s.End]}
		if n := r.u32(); r.err != nil || int64(n) > int64(s.End-s.Body) {
			return nil, malformed("section %d at offset %d declares %d entries in %d bytes", s.ID, s.Start, n, s.End-s.Body)
		}
		var err error
		r = reader{b: wasm[s.Body:s.End]}
		switch s.ID {
		case SectionImport:
			err = m.readImports(&r)
		case SectionMemory:
			err = m.readMemories(&r)
		case SectionExport:
			err = m.readExports(&r)
		default:
			continue
		}
		if err == nil && r.i != len(r.b) {
			err = fmt.Errorf("%d stray bytes after the last entry", len(r.b)-r.i)
		}
		if err != nil {
			return nil, malformed("section %d at offset %d: %v", s.ID, s.Start, err)
		}
	}
	return m, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

func (m *Module) readImports(r *reader) error {
	n := r.u32()
	// Each import takes at least 4 bytes: bound the allocation by the input.
	if int64(n) > int64(len(r.b)/4) {
		return fmt.Errorf("%d imports cannot fit in %d bytes", n, len(r.b))
	}
	m.Imports = make([]Import, 0, n)
	for i := range n {
		var im Import
		im.Module = r.name()
		im.Name = r.name()
		d := r.i
		switch kind := r.byte(); kind {
		case KindFunc: // type index
			r.u32()
		case KindTable: // reference type, limits
			r.valType()
			r.limits()
		case KindMemory:
			m.MinPages = max(m.MinPages, r.memory())
		case KindGlobal: // value type, mutability
			r.valType()
			r.byte()
		case KindTag: // attribute, type index
			r.byte()
			r.u32()
		default:
			r.fail("unknown kind 0x%02x", kind)
		}
		if r.err != nil {
			return fmt.Errorf("import %d: %v", i, r.err)
		}
		im.Desc = r.b[d:r.i:r.i]
		m.Imports = append(m.Imports, im)
	}
	return r.err
}

func (m *Module) readMemories(r *reader) error {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		m.MinPages = max(m.MinPages, r.memory())
	}
	return r.err
}

func (m *Module) readExports(r *reader) error {
	n := r.u32()
	// Each export takes at least 3 bytes: bound the allocation by the input.
	if int64(n) > int64(len(r.b)/3) {
		return fmt.Errorf("%d exports cannot fit in %d bytes", n, len(r.b))
	}
	m.Exports = make([]Export, 0, n)
	for i := range n {
		name := r.name()
		d := r.i
		r.byte()
		r.u32()
		if r.err != nil {
			return fmt.Errorf("export %d: %v", i, r.err)
		}
		m.Exports = append(m.Exports, Export{Name: name, Desc: r.b[d:r.i:r.i]})
	}
	return r.err
}

// Replace returns a copy of wasm with the content of section s replaced by
// content; every other byte is kept.
func Replace(wasm []byte, s Section, content []byte) []byte {
	out := make([]byte, 0, len(wasm)-(s.End-s.Body)+len(content)+5)
	out = append(out, wasm[:s.Start+1]...)
	out = AppendU32(out, uint32(len(content)))
	out = append(out, content...)
	return append(out, wasm[s.End:]...)
}

// AppendImports appends the content of an import section holding list.
func AppendImports(b []byte, list []Import) []byte {
	b = AppendU32(b, uint32(len(list)))
	for _, im := range list {
		b = AppendName(b, im.Module)
		b = AppendName(b, im.Name)
		b = append(b, im.Desc...)
	}
	return b
}

// AppendExports appends the content of an export section holding list.
func AppendExports(b []byte, list []Export) []byte {
	b = AppendU32(b, uint32(len(list)))
	for _, e := range list {
		b = AppendName(b, e.Name)
		b = append(b, e.Desc...)
	}
	return b
}

// AppendU32 appends v as unsigned LEB128.
func AppendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendName appends s as a wasm name: its length, then its bytes.
func AppendName(b []byte, s string) []byte {
	return append(AppendU32(b, uint32(len(s))), s...)
}

// reader decodes part of a binary. The first error sticks; later reads
// return zero values.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.i >= len(r.b) {
		r.fail("unexpected end at offset %d", r.i)
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

// leb reads an unsigned LEB128 of at most bits bits, rejecting encodings
// that are too long or whose last byte holds bits beyond the width.
func (r *reader) leb(bits uint) uint64 {
	var v uint64
	last := (bits+6)/7 - 1
	for n := uint(0); ; n++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		shift := 7 * n
		if n == last && c>>(bits-shift) != 0 {
			r.fail("integer too large for %d bits at offset %d", bits, r.i-1)
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) u32() uint32 { return uint32(r.leb(32)) }

// s33 skips a signed LEB128 of at most 33 bits (a heap type index).
func (r *reader) s33() {
	for n := 0; ; n++ {
		c := r.byte()
		if r.err != nil {
			return
		}
		if n == 4 {
			if c&0x80 != 0 {
				r.fail("s33 too long at offset %d", r.i-1)
			}
			return
		}
		if c&0x80 == 0 {
			return
		}
	}
}

func (r *reader) name() string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	if int64(n) > int64(len(r.b)-r.i) {
		r.fail("name of %d bytes at offset %d runs past the section", n, r.i)
		return ""
	}
	s := string(r.b[r.i : r.i+int(n)])
	r.i += int(n)
	return s
}

// valType skips a value type: one byte, or 0x63/0x64 and a heap type.
func (r *reader) valType() {
	switch r.byte() {
	case 0x63, 0x64:
		r.s33()
	}
}

// limits reads a table's or memory's limits: flags, minimum, optional
// maximum. It returns the minimum and whether the limits are 64-bit.
func (r *reader) limits() (uint64, bool) {
	flags := r.byte()
	if flags > 0x07 {
		r.fail("limits flags 0x%02x", flags)
		return 0, false
	}
	bits := uint(32)
	if flags&0x04 != 0 {
		bits = 64
	}
	min := r.leb(bits)
	if flags&0x01 != 0 {
		r.leb(bits)
	}
	return min, bits == 64
}

// memory reads a memory type and returns its minimum in pages.
func (r *reader) memory() uint32 {
	min, is64 := r.limits()
	if is64 {
		r.fail("64-bit memories are not supported")
		return 0
	}
	return uint32(min)
}
