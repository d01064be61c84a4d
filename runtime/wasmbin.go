package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// The Extism ABI leaves a reactor's initializer (the "_initialize" export that
// a Go c-shared or Rust wasm32-wasi plugin has) to the first call:
// extism/go-sdk runs it lazily and keeps the "done" flag private. A pool
// that hands out fresh instances would then pay the guest runtime's start-up
// (about 1.5 ms for standard Go) on every call. So the runtime renames the
// export before compiling: go-sdk no longer sees a reactor, and the pool calls
// initExport itself while the instance waits, before any invocation is known.
const (
	reactorInit = "_initialize"
	initExport  = "_packs_initialize"
)

// errWasm is wrapped by every error of the binary reader below.
var errWasm = errors.New("malformed wasm binary")

// Section ids and import/export kinds of the wasm binary format.
const (
	secImport = 2
	secMemory = 5
	secExport = 7

	kindFunc   = 0
	kindTable  = 1
	kindMemory = 2
	kindGlobal = 3
	kindTag    = 4
)

// moduleInfo is what the runtime needs to know about a module before it
// instantiates one.
type moduleInfo struct {
	imports  []string // distinct module names it imports from, sorted
	exports  []string // exported function names, sorted
	minPages uint32   // the largest declared minimum of its memories
}

// exportsFunc reports whether the module exports function name.
func (m moduleInfo) exportsFunc(name string) bool {
	_, ok := slices.BinarySearch(m.exports, name)
	return ok
}

// importsFrom reports whether the module imports anything from module.
func (m moduleInfo) importsFrom(module string) bool {
	_, ok := slices.BinarySearch(m.imports, module)
	return ok
}

// section is one section of a module: its id and where its content lies.
type section struct {
	id               byte
	head, start, end int // head: offset of the id byte
}

// sections splits a module into its sections.
func sections(wasm []byte) ([]section, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, fmt.Errorf("%w: no wasm magic number", errWasm)
	}
	var out []section
	for off := 8; off < len(wasm); {
		size, n, err := readU32(wasm[off+1:])
		if err != nil {
			return nil, fmt.Errorf("%w: section at byte %d: %v", errWasm, off, err)
		}
		start := off + 1 + n
		end := start + int(size)
		if uint64(start)+uint64(size) > uint64(len(wasm)) {
			return nil, fmt.Errorf("%w: section at byte %d runs past the end", errWasm, off)
		}
		out = append(out, section{id: wasm[off], head: off, start: start, end: end})
		off = end
	}
	return out, nil
}

// inspect reads the import, memory and export sections of wasm.
func inspect(wasm []byte) (moduleInfo, error) {
	var info moduleInfo
	secs, err := sections(wasm)
	if err != nil {
		return info, err
	}
	for _, s := range secs {
		r := &reader{b: wasm[s.start:s.end]}
		switch s.id {
		case secImport:
			err = info.readImports(r)
		case secMemory:
			err = info.readMemories(r)
		case secExport:
			err = info.readExports(r)
		default:
			continue
		}
		if err == nil && len(r.b) != 0 {
			err = fmt.Errorf("%d stray bytes", len(r.b))
		}
		if err != nil {
			return info, fmt.Errorf("%w: section %d: %v", errWasm, s.id, err)
		}
	}
	slices.Sort(info.imports)
	info.imports = slices.Compact(info.imports)
	slices.Sort(info.exports)
	return info, nil
}

func (m *moduleInfo) readImports(r *reader) error {
	count, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < count; i++ {
		mod, err := r.name()
		if err != nil {
			return err
		}
		if _, err := r.name(); err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case kindFunc:
			_, err = r.u32()
		case kindTable:
			if _, err = r.byte(); err == nil {
				_, err = r.limits()
			}
		case kindMemory:
			var min uint32
			if min, err = r.limits(); err == nil {
				m.minPages = max(m.minPages, min)
			}
		case kindGlobal:
			_, err = r.bytes(2) // value type and mutability
		case kindTag:
			if _, err = r.byte(); err == nil {
				_, err = r.u32()
			}
		default:
			err = fmt.Errorf("import %d has unknown kind %d", i, kind)
		}
		if err != nil {
			return err
		}
		m.imports = append(m.imports, mod)
	}
	return nil
}

func (m *moduleInfo) readMemories(r *reader) error {
	count, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < count; i++ {
		min, err := r.limits()
		if err != nil {
			return err
		}
		m.minPages = max(m.minPages, min)
	}
	return nil
}

func (m *moduleInfo) readExports(r *reader) error {
	count, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < count; i++ {
		name, err := r.name()
		if err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		if _, err := r.u32(); err != nil {
			return err
		}
		if kind == kindFunc {
			m.exports = append(m.exports, name)
		}
	}
	return nil
}

// renameExport returns wasm with its function export from renamed to to. It
// returns wasm itself (not a copy) when there is no such export, when to is
// already exported, or when the module exports "hs_init" (a Haskell plugin,
// whose initializer go-sdk must run in a fixed order with hs_init). Only the
// export section is re-encoded; every other byte is kept.
func renameExport(wasm []byte, from, to string) ([]byte, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	for _, s := range secs {
		if s.id != secExport {
			continue
		}
		sec, changed, err := renameInSection(wasm[s.start:s.end], from, to)
		if err != nil || !changed {
			return wasm, err
		}
		out := make([]byte, 0, len(wasm)+len(to))
		out = append(out, wasm[:s.head+1]...)
		out = appendU32(out, uint32(len(sec)))
		out = append(out, sec...)
		return append(out, wasm[s.end:]...), nil
	}
	return wasm, nil
}

// renameInSection re-encodes the content of one export section.
func renameInSection(sec []byte, from, to string) ([]byte, bool, error) {
	type export struct {
		name string
		desc []byte // kind byte and index, as encoded
	}
	r := &reader{b: sec}
	count, err := r.u32()
	if err != nil {
		return nil, false, fmt.Errorf("%w: export section: %v", errWasm, err)
	}
	exports := make([]export, 0, min(int(count), len(sec)))
	for i := uint32(0); i < count; i++ {
		name, err := r.name()
		if err != nil {
			return nil, false, fmt.Errorf("%w: export %d: %v", errWasm, i, err)
		}
		rest := r.b
		if _, err := r.byte(); err != nil {
			return nil, false, fmt.Errorf("%w: export %d: %v", errWasm, i, err)
		}
		if _, err := r.u32(); err != nil {
			return nil, false, fmt.Errorf("%w: export %d: %v", errWasm, i, err)
		}
		exports = append(exports, export{name: name, desc: rest[:len(rest)-len(r.b)]})
	}
	if len(r.b) != 0 {
		return nil, false, fmt.Errorf("%w: %d stray bytes after the exports", errWasm, len(r.b))
	}
	target := -1
	for i, e := range exports {
		switch {
		case e.name == to || e.name == "hs_init":
			return nil, false, nil
		case e.name == from && e.desc[0] == kindFunc:
			target = i
		}
	}
	if target < 0 {
		return nil, false, nil
	}
	exports[target].name = to
	out := appendU32(make([]byte, 0, len(sec)+len(to)), count)
	for _, e := range exports {
		out = appendU32(out, uint32(len(e.name)))
		out = append(out, e.name...)
		out = append(out, e.desc...)
	}
	return out, true, nil
}

// reader consumes the content of one section.
type reader struct{ b []byte }

var errShort = errors.New("unexpected end of section")

func (r *reader) byte() (byte, error) {
	if len(r.b) == 0 {
		return 0, errShort
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)) {
		return nil, errShort
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out, nil
}

func (r *reader) u32() (uint32, error) {
	v, n, err := readU32(r.b)
	if err != nil {
		return 0, err
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// limits reads a table or memory type's limits and returns the minimum.
func (r *reader) limits() (uint32, error) {
	flag, err := r.byte()
	if err != nil {
		return 0, err
	}
	if flag > 3 { // 0: min, 1: min max, 2 and 3: the same, shared
		return 0, fmt.Errorf("unsupported limits flag %#x (64-bit memories are not supported)", flag)
	}
	min, err := r.u32()
	if err != nil {
		return 0, err
	}
	if flag&1 == 1 {
		if _, err := r.u32(); err != nil {
			return 0, err
		}
	}
	return min, nil
}

// readU32 decodes an unsigned LEB128 value of at most 32 bits.
func readU32(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, errShort
		}
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0, errors.New("LEB128 overflows 32 bits")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 longer than 5 bytes")
}

// appendU32 encodes v as unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
