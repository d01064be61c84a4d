package hostfns

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/packs-run/packs/capability"
)

// extismEnv is the module Extism's PDKs import their host functions from.
const extismEnv = "extism:host/env"

// renamed lists the extism:host/env imports that RewriteImports moves to our
// namespaces, so our audited implementations serve them instead of
// go-sdk's (http: http.DefaultClient, redirects to any host, a panic on a
// bad glob, nothing recorded; log: a process-wide level that is off by
// default; config: reads that nobody audits).
var renamed = map[string]string{
	"http_request":     NetworkNamespace,
	"http_status_code": NetworkNamespace,
	"http_headers":     NetworkNamespace,
	"log_trace":        LogNamespace,
	"log_debug":        LogNamespace,
	"log_info":         LogNamespace,
	"log_warn":         LogNamespace,
	"log_error":        LogNamespace,
	"get_log_level":    LogNamespace,
	"config_get":       ConfigNamespace,
}

// RewriteImports renames the Extism http_*, log_* and config_get imports
// (module "extism:host/env") to NetworkNamespace, LogNamespace and
// ConfigNamespace, so our audited, grant-checked implementations serve
// them. Only the import section is re-encoded; every other byte is copied.
// A module with nothing to rename comes back as the same slice. It returns
// an error wrapping ErrBadModule when the binary's section headers or import
// section do not parse, or when a section declares more entries than it has
// bytes (wazero v1.12.0 allocates for the declared count before reading, so
// a 16-byte module could exhaust the host's memory); it never panics. The
// runtime calls it before handing any bytes to wazero.
func RewriteImports(wasm []byte) ([]byte, error) {
	mod, err := parseModule(wasm)
	if err != nil {
		return nil, err
	}
	if mod.imports < 0 {
		return wasm, nil
	}
	changed := false
	for i, im := range mod.list {
		if ns, ok := renamed[im.name]; ok && im.module == extismEnv {
			mod.list[i].module = ns
			changed = true
		}
	}
	if !changed {
		return wasm, nil
	}
	var body []byte
	body = appendU32(body, uint32(len(mod.list)))
	for _, im := range mod.list {
		body = appendName(body, im.module)
		body = appendName(body, im.name)
		body = append(body, im.desc...)
	}
	s := mod.sections[mod.imports]
	out := make([]byte, 0, len(wasm)+len(body)-(s.end-s.start)+5)
	out = append(out, wasm[:s.start]...)
	out = append(out, sectionImport)
	out = appendU32(out, uint32(len(body)))
	out = append(out, body...)
	out = append(out, wasm[s.end:]...)
	return out, nil
}

// ImportedGroups returns the capability groups whose host functions the
// module imports, in the order of capability.All: network for
// NetworkNamespace (or Extism's http_* not yet rewritten), terminal_exec for
// ExecNamespace. The runtime computes it once per module and passes it to
// Require for every call.
func ImportedGroups(wasm []byte) ([]capability.Name, error) {
	mod, err := parseModule(wasm)
	if err != nil {
		return nil, err
	}
	need := map[capability.Name]bool{}
	for _, im := range mod.list {
		switch {
		case im.module == NetworkNamespace, im.module == extismEnv && renamed[im.name] == NetworkNamespace:
			need[capability.Network] = true
		case im.module == ExecNamespace:
			need[capability.TerminalExec] = true
		}
	}
	var out []capability.Name
	for _, n := range capability.All {
		if need[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

const sectionImport = 2

// vectorSections are the known sections that hold one vector: type,
// import, function, table, memory, global, export, element, code, data and
// tag.
var vectorSections = map[byte]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 9: true, 10: true, 11: true, 13: true}

// wasmModule is what RewriteImports needs of a binary: its section layout
// and its imports.
type wasmModule struct {
	sections []span
	imports  int // index in sections of the import section, or -1
	list     []wasmImport
}

// span is one section: [start, end) with its id and size, its content
// from body to end.
type span struct {
	id         byte
	start, end int
	body       int
}

type wasmImport struct {
	module, name string
	desc         []byte // the import descriptor, copied verbatim
}

var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

func badModule(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadModule}, args...)...)
}

func parseModule(b []byte) (*wasmModule, error) {
	if len(b) < len(wasmHeader) || !bytes.Equal(b[:4], wasmHeader[:4]) {
		return nil, badModule("no \\0asm magic: not a WebAssembly binary")
	}
	if !bytes.Equal(b[4:8], wasmHeader[4:]) {
		return nil, badModule("version % x: only core modules of version 1 are supported", b[4:8])
	}
	m := &wasmModule{imports: -1}
	r := reader{b: b, i: len(wasmHeader)}
	for r.i < len(b) {
		start := r.i
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return nil, badModule("section header at offset %d: %v", start, r.err)
		}
		if int(size) > len(b)-r.i {
			return nil, badModule("section %d at offset %d claims %d bytes, only %d remain", id, start, size, len(b)-r.i)
		}
		s := span{id: id, start: start, body: r.i, end: r.i + int(size)}
		r.i = s.end
		if id == sectionImport {
			if m.imports >= 0 {
				return nil, badModule("second import section at offset %d", start)
			}
			m.imports = len(m.sections)
		}
		m.sections = append(m.sections, s)
	}
	for _, s := range m.sections {
		if !vectorSections[s.id] {
			continue
		}
		// Each entry takes at least one byte: a count beyond the section's
		// size is a lie that would make a decoder allocate for it.
		r := reader{b: b[s.body:s.end]}
		if n := r.u32(); r.err != nil || int64(n) > int64(s.end-s.body) {
			return nil, badModule("section %d at offset %d declares %d entries in %d bytes", s.id, s.start, n, s.end-s.body)
		}
	}
	if m.imports >= 0 {
		s := m.sections[m.imports]
		list, err := parseImports(b[s.body:s.end])
		if err != nil {
			return nil, badModule("import section at offset %d: %v", s.start, err)
		}
		m.list = list
	}
	return m, nil
}

func parseImports(b []byte) ([]wasmImport, error) {
	r := reader{b: b}
	n := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	// Each import takes at least 4 bytes: bound the allocation by the input.
	if int(n) > len(b)/4 {
		return nil, fmt.Errorf("%d imports cannot fit in %d bytes", n, len(b))
	}
	list := make([]wasmImport, 0, n)
	for range n {
		var im wasmImport
		im.module = r.name()
		im.name = r.name()
		d := r.i
		r.importDesc()
		if r.err != nil {
			return nil, fmt.Errorf("import %d: %v", len(list), r.err)
		}
		im.desc = slices.Clone(b[d:r.i])
		list = append(list, im)
	}
	if r.i != len(b) {
		return nil, fmt.Errorf("%d bytes after the last import", len(b)-r.i)
	}
	return list, nil
}

// reader decodes the parts of the binary format RewriteImports needs. The
// first error sticks; later reads return zero values.
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
	if int(n) > len(r.b)-r.i {
		r.fail("name of %d bytes at offset %d runs past the section", n, r.i)
		return ""
	}
	s := string(r.b[r.i : r.i+int(n)])
	r.i += int(n)
	return s
}

// refOrValType skips a value type: one byte, or 0x63/0x64 and a heap type.
func (r *reader) refOrValType() {
	switch r.byte() {
	case 0x63, 0x64:
		r.s33()
	}
}

func (r *reader) limits() {
	flags := r.byte()
	if flags > 0x07 {
		r.fail("limits flags 0x%02x", flags)
		return
	}
	bits := uint(32)
	if flags&0x04 != 0 {
		bits = 64
	}
	r.leb(bits)
	if flags&0x01 != 0 {
		r.leb(bits)
	}
}

func (r *reader) importDesc() {
	switch kind := r.byte(); kind {
	case 0x00: // func: type index
		r.u32()
	case 0x01: // table: reference type, limits
		r.refOrValType()
		r.limits()
	case 0x02: // memory: limits
		r.limits()
	case 0x03: // global: value type, mutability
		r.refOrValType()
		r.byte()
	case 0x04: // tag: attribute, type index
		r.byte()
		r.u32()
	default:
		r.fail("unknown import kind 0x%02x", kind)
	}
}

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

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}
