package wasmbin

import (
	"errors"
	"fmt"
)

// Section ids Limit rewrites, besides those above.
const (
	SectionType     = 1
	SectionFunction = 3
	SectionTable    = 4
	SectionGlobal   = 6
	SectionCode     = 10
)

// StackLimitFunc names, in the rewritten module's name section, the
// function it calls when its call stack would pass Limits.StackUnits. The
// function traps (unreachable), so the trap's stack trace names it: that is
// how the host tells a stack limit from any other trap.
const StackLimitFunc = "packs.stack_limit"

// ErrTableLimit is wrapped by Limit's error for a module whose tables
// declare more elements up front than Limits.TableElements.
var ErrTableLimit = errors.New("wasmbin: tables declared larger than the limit")

// Limits are the ceilings Limit builds into a module.
type Limits struct {
	// TableElements bounds the elements of all the module's tables
	// together: each of n tables may hold TableElements/n. A table whose
	// declared maximum is larger (or absent) gets that share as its
	// maximum, so table.grow past it returns -1, as the spec says it does
	// at a table's maximum.
	TableElements uint32
	// StackUnits bounds the call stack, in units of one 8-byte slot: each
	// call of a function defined in the module costs an estimate of its
	// frame (see frameCost) while it runs. 0 leaves the stack alone.
	StackUnits uint32
}

// maxFrameCost caps one function's estimated frame, in 8-byte units.
const maxFrameCost = 1 << 16

// frameCost estimates the stack a call of a function takes, in 8-byte
// units: a fixed overhead (return address, frame pointer, the thunk's own
// frame), its parameters and locals, and one slot per 16 bytes of code for
// the operand stack and spills. It only has to grow with what makes a frame
// large: a bound on depth alone would let a function with 50,000 locals
// take 400 KB a frame.
func frameCost(params uint32, locals uint64, bodyLen int) uint32 {
	c := 8 + uint64(params) + locals + uint64(bodyLen)/16
	return uint32(min(c, maxFrameCost))
}

// Limit returns a copy of wasm (which Parse must accept) with l built in.
//
// Tables: every defined table gets a maximum no larger than its share of
// l.TableElements; a declared minimum above the share is refused with
// ErrTableLimit.
//
// Stack: the body of each function defined in the module moves to a new
// function appended after the others, and its index keeps a thunk of the
// same type that adds the function's frameCost to a new mutable global,
// calls StackLimitFunc (which traps) if the sum passes l.StackUnits, calls
// the body and subtracts the cost again. Every index a call, call_indirect,
// element, export, start or ref.func names stays valid and now goes through
// the thunk, so no instruction needs decoding, whatever way a function
// returns.
func Limit(wasm []byte, l Limits) ([]byte, error) {
	m, err := Parse(wasm)
	if err != nil {
		return nil, err
	}
	repl := map[byte][]byte{}
	if s, ok := m.Section(SectionTable); ok {
		body, err := capTables(wasm[s.Body:s.End], l.TableElements)
		if err != nil {
			return nil, err
		}
		repl[SectionTable] = body
	}
	var names []byte
	if l.StackUnits > 0 {
		if names, err = m.limitStack(wasm, l.StackUnits, repl); err != nil {
			return nil, err
		}
	}
	return m.assemble(wasm, repl, names), nil
}

// capTables re-encodes a table section with every maximum capped.
func capTables(b []byte, total uint32) ([]byte, error) {
	r := reader{b: b}
	n := r.u32()
	if r.err != nil || n == 0 {
		return nil, malformed("table section: %v", r.err)
	}
	share := total / n
	out := AppendU32(nil, n)
	for i := range n {
		t := r.i
		r.valType()
		out = append(out, r.b[t:r.i]...)
		flags := r.byte()
		if flags > 0x01 {
			return nil, malformed("table %d: limits flags 0x%02x (64-bit or shared tables are not supported)", i, flags)
		}
		lo := r.u32()
		hi := share
		if flags == 0x01 {
			hi = min(r.u32(), share)
		}
		if r.err != nil {
			return nil, malformed("table %d: %v", i, r.err)
		}
		if lo > share {
			return nil, fmt.Errorf("%w: table %d declares %d elements up front, the limit is %d", ErrTableLimit, i, lo, share)
		}
		out = AppendU32(append(out, 0x01), lo)
		out = AppendU32(out, hi)
	}
	if r.i != len(b) {
		return nil, malformed("table section: %d stray bytes", len(b)-r.i)
	}
	return out, nil
}

// limitStack adds the thunks, the global and StackLimitFunc: it fills repl
// with the new type, function, global and code sections and returns the new
// name section's content (nil when the module defines no function).
func (m *Module) limitStack(wasm []byte, units uint32, repl map[byte][]byte) ([]byte, error) {
	fs, ok := m.Section(SectionFunction)
	cs, okc := m.Section(SectionCode)
	if !ok || !okc {
		return nil, nil
	}
	ts, _ := m.Section(SectionType)
	params, typeCount, err := readTypes(wasm[ts.Body:ts.End])
	if err != nil {
		return nil, err
	}
	var importedFuncs, importedGlobals uint32
	for _, im := range m.Imports {
		switch im.Kind() {
		case KindFunc:
			importedFuncs++
		case KindGlobal:
			importedGlobals++
		}
	}
	r := reader{b: wasm[fs.Body:fs.End]}
	n := r.u32()
	types := make([]uint32, n)
	for i := range types {
		types[i] = r.u32()
		if r.err == nil && types[i] >= uint32(len(params)) {
			r.fail("function %d has type %d of %d", i, types[i], len(params))
		}
	}
	if r.err != nil || r.i != len(r.b) {
		return nil, malformed("function section: %v", r.err)
	}
	if uint64(importedFuncs)+2*uint64(n)+1 > 1<<27 {
		return nil, malformed("%d functions: too many to limit the stack", n)
	}
	var definedGlobals uint32
	gs, hasGlobals := m.Section(SectionGlobal)
	if hasGlobals {
		r := reader{b: wasm[gs.Body:gs.End]}
		if definedGlobals = r.u32(); r.err != nil {
			return nil, malformed("global section: %v", r.err)
		}
	}
	c := refs{funcs: importedFuncs + n, globals: importedGlobals + definedGlobals}
	if err := c.check(m, wasm); err != nil {
		return nil, err
	}
	bodies, costs, err := readCode(wasm[cs.Body:cs.End], types, params, c)
	if err != nil {
		return nil, err
	}
	depth := importedGlobals + definedGlobals
	if hasGlobals {
		r := reader{b: wasm[gs.Body:gs.End]}
		defined := r.u32()
		// One mutable i32 more, starting at 0.
		g := append(AppendU32(nil, defined+1), wasm[gs.Body+r.i:gs.End]...)
		repl[SectionGlobal] = append(g, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	} else {
		repl[SectionGlobal] = []byte{1, 0x7f, 0x01, 0x41, 0x00, 0x0b}
	}
	// The type () -> () of StackLimitFunc, appended.
	tr := reader{b: wasm[ts.Body:ts.End]}
	tr.u32()
	repl[SectionType] = append(append(AppendU32(nil, typeCount+1), wasm[ts.Body+tr.i:ts.End]...), 0x60, 0x00, 0x00)

	fn := AppendU32(nil, 2*n+1)
	for range 2 {
		for _, t := range types {
			fn = AppendU32(fn, t)
		}
	}
	repl[SectionFunction] = AppendU32(fn, typeCount)

	limitFunc := importedFuncs + 2*n
	code := AppendU32(nil, 2*n+1)
	for j, t := range types {
		code = appendThunk(code, params[t], costs[j], units, depth, importedFuncs+n+uint32(j), limitFunc)
	}
	for _, b := range bodies {
		code = append(AppendU32(code, uint32(len(b))), b...)
	}
	repl[SectionCode] = append(code, 3, 0x00, 0x00, 0x0b) // no locals; unreachable; end

	return m.names(wasm, importedFuncs, n, limitFunc), nil
}

// readTypes returns the parameter count of every function type.
func readTypes(b []byte) ([]uint32, uint32, error) {
	r := reader{b: b}
	n := r.u32()
	params := make([]uint32, 0, min(n, uint32(len(b))))
	for i := uint32(0); i < n && r.err == nil; i++ {
		if form := r.byte(); form != 0x60 {
			r.fail("type %d: form 0x%02x (only function types are supported)", i, form)
			break
		}
		np := r.u32()
		for k := uint32(0); k < np && r.err == nil; k++ {
			r.valType()
		}
		nr := r.u32()
		for k := uint32(0); k < nr && r.err == nil; k++ {
			r.valType()
		}
		params = append(params, np)
	}
	if r.err != nil || r.i != len(b) {
		return nil, 0, malformed("type section: %v", r.err)
	}
	return params, n, nil
}

// readCode returns each function's entry (locals and expression, without
// the size) and its frameCost, after checking the indices the expression
// names (refs).
func readCode(b []byte, types, params []uint32, c refs) ([][]byte, []uint32, error) {
	r := reader{b: b}
	n := r.u32()
	if r.err != nil || n != uint32(len(types)) {
		return nil, nil, malformed("code section: %d bodies for %d functions", n, len(types))
	}
	bodies := make([][]byte, n)
	costs := make([]uint32, n)
	for i := range bodies {
		size := r.u32()
		if r.err != nil || int64(size) > int64(len(b)-r.i) {
			return nil, nil, malformed("code section: body %d runs past the section", i)
		}
		body := b[r.i : r.i+int(size)]
		r.i += int(size)
		br := reader{b: body}
		var locals uint64
		for k, groups := uint32(0), br.u32(); k < groups && br.err == nil; k++ {
			locals += uint64(br.u32())
			br.valType()
		}
		c.expr(&br)
		if br.err == nil && br.i != len(body) {
			br.fail("%d stray bytes", len(body)-br.i)
		}
		if br.err != nil {
			return nil, nil, malformed("code section: body %d: %v", i, br.err)
		}
		bodies[i] = body
		costs[i] = frameCost(params[types[i]], locals, len(body))
	}
	if r.i != len(b) {
		return nil, nil, malformed("code section: %d stray bytes", len(b)-r.i)
	}
	return bodies, costs, nil
}

// appendThunk appends the code entry of a thunk (see Limit).
func appendThunk(b []byte, params, cost, units, depth, body, limitFunc uint32) []byte {
	e := []byte{0x00} // no locals
	e = appendGlobalAdd(e, depth, cost, 0x6a)
	e = append(AppendU32(append(e, 0x23), depth), 0x41) // global.get; i32.const units
	e = AppendS32(e, int32(units))
	e = append(e, 0x4b, 0x04, 0x40, 0x10) // i32.gt_u; if; call
	e = append(AppendU32(e, limitFunc), 0x0b)
	for i := range params {
		e = AppendU32(append(e, 0x20), i) // local.get i
	}
	e = AppendU32(append(e, 0x10), body)
	e = appendGlobalAdd(e, depth, cost, 0x6b)
	e = append(e, 0x0b)
	return append(AppendU32(b, uint32(len(e))), e...)
}

// appendGlobalAdd appends global g = g op cost (op i32.add or i32.sub).
func appendGlobalAdd(e []byte, g, cost uint32, op byte) []byte {
	e = append(AppendU32(append(e, 0x23), g), 0x41)
	e = append(AppendS32(e, int32(cost)), op, 0x24)
	return AppendU32(e, g)
}

// names returns the content of a name section that keeps the module's own
// (its module name and the names of its functions, which now name the
// thunks) and names each moved body as its thunk and limitFunc as
// StackLimitFunc. A name section that does not parse is dropped: it is
// debugging information.
func (m *Module) names(wasm []byte, importedFuncs, n, limitFunc uint32) []byte {
	var module, rest []byte
	own := map[uint32]string{}
	var order []uint32
	for _, s := range m.sections {
		if s.ID != SectionCustom {
			continue
		}
		r := reader{b: wasm[s.Body:s.End]}
		if r.name() != "name" || r.err != nil {
			continue
		}
		module, rest, own, order = nil, nil, map[uint32]string{}, nil
		for r.i < len(r.b) && r.err == nil {
			start := r.i
			id := r.byte()
			size := r.u32()
			if r.err != nil || int64(size) > int64(len(r.b)-r.i) {
				r.fail("subsection")
				break
			}
			sub := reader{b: r.b[r.i : r.i+int(size)]}
			r.i += int(size)
			switch id {
			case 0:
				module = r.b[start:r.i]
			case 1:
				for k, cnt := uint32(0), sub.u32(); k < cnt && sub.err == nil; k++ {
					idx, name := sub.u32(), sub.name()
					if _, dup := own[idx]; !dup {
						order = append(order, idx)
					}
					own[idx] = name
				}
				if sub.err != nil {
					r.fail("function names")
				}
			default:
				rest = append(rest, r.b[start:r.i]...)
			}
		}
		if r.err != nil {
			module, rest, own, order = nil, nil, map[uint32]string{}, nil
		}
	}
	count := uint32(len(order)) + 1
	for j := range n {
		if _, ok := own[importedFuncs+j]; ok {
			count++
		}
	}
	fn := append(AppendU32(nil, count), fnEntries(order, own, importedFuncs, n, limitFunc)...)

	out := AppendName(nil, "name")
	out = append(out, module...)
	out = append(AppendU32(append(out, 1), uint32(len(fn))), fn...)
	return append(out, rest...)
}

// fnEntries encodes the entries of the function names subsection in index
// order: the module's own, then the moved bodies', then limitFunc.
func fnEntries(order []uint32, own map[uint32]string, importedFuncs, n, limitFunc uint32) []byte {
	var b []byte
	for _, idx := range order {
		b = AppendName(AppendU32(b, idx), own[idx])
	}
	for j := range n {
		if name, ok := own[importedFuncs+j]; ok {
			b = AppendName(AppendU32(b, importedFuncs+n+j), name)
		}
	}
	return AppendName(AppendU32(b, limitFunc), StackLimitFunc)
}

// order ranks the known sections in the order the binary format requires.
var order = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

// assemble copies wasm with the sections in repl replaced (or, for one
// missing, inserted in its place), custom sections named "name" dropped and
// names, when set, appended as the name section.
func (m *Module) assemble(wasm []byte, repl map[byte][]byte, names []byte) []byte {
	out := append(make([]byte, 0, len(wasm)+len(wasm)/4+64), header...)
	section := func(id byte, body []byte) {
		out = append(AppendU32(append(out, id), uint32(len(body))), body...)
	}
	written := map[byte]bool{}
	flush := func(before int) { // write the missing sections that rank before
		for _, id := range []byte{1, 3, 4, 6, 10} {
			if b, ok := repl[id]; ok && !written[id] && order[id] < before {
				section(id, b)
				written[id] = true
			}
		}
	}
	for _, s := range m.sections {
		if s.ID == SectionCustom {
			r := reader{b: wasm[s.Body:s.End]}
			if names != nil && r.name() == "name" {
				continue
			}
			out = append(out, wasm[s.Start:s.End]...)
			continue
		}
		flush(order[s.ID])
		if written[s.ID] {
			continue // out of order; wazero refuses the module anyway
		}
		if b, ok := repl[s.ID]; ok {
			section(s.ID, b)
			written[s.ID] = true
			continue
		}
		out = append(out, wasm[s.Start:s.End]...)
	}
	flush(1 << 30)
	if names != nil {
		section(SectionCustom, names)
	}
	return out
}

// AppendS32 appends v as signed LEB128.
func AppendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
