package wasmbin

// refs checks that a module names only functions and globals it has.
// Limit adds functions and a global after the module's own, where wazero's
// validation of the rewritten module would accept a reference the original
// could not make: a body calling its moved copy directly, or setting the
// stack counter, would slip past the stack limit. So before rewriting,
// every index the module names in code, constant expressions, elements,
// exports and the start section must be below the original counts.
type refs struct {
	funcs, globals uint32 // the module's own counts, imports included
}

func (c refs) fn(r *reader, what string) {
	if i := r.u32(); r.err == nil && i >= c.funcs {
		r.fail("%s names function %d of %d", what, i, c.funcs)
	}
}

func (c refs) global(r *reader, what string) {
	if i := r.u32(); r.err == nil && i >= c.globals {
		r.fail("%s names global %d of %d", what, i, c.globals)
	}
}

// expr reads one expression up to its final end, checking every index it
// names. It decodes the instructions wazero accepts by default (WebAssembly
// 2.0: reference types, bulk memory, SIMD, multi-value, sign extension,
// non-trapping conversions) and refuses any other opcode.
func (c refs) expr(r *reader) {
	depth := 0
	for r.err == nil {
		op := r.byte()
		switch {
		case op == 0x0b: // end
			if depth == 0 {
				return
			}
			depth--
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			r.s33()
			depth++
		case op <= 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b ||
			op >= 0x45 && op <= 0xc4 || op == 0xd1:
			// no immediate
		case op == 0x0c || op == 0x0d || op >= 0x20 && op <= 0x22 || op == 0x25 || op == 0x26:
			r.u32()
		case op == 0x0e: // br_table
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.u32()
			}
			r.u32()
		case op == 0x10:
			c.fn(r, "call")
		case op == 0x11: // call_indirect: type, table
			r.u32()
			r.u32()
		case op == 0x1c: // select t*
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.valType()
			}
		case op == 0x23 || op == 0x24:
			c.global(r, "global.get/set")
		case op >= 0x28 && op <= 0x3e:
			memarg(r)
		case op == 0x3f || op == 0x40:
			r.byte()
		case op == 0x41:
			r.sleb(5)
		case op == 0x42:
			r.sleb(10)
		case op == 0x43:
			r.skip(4)
		case op == 0x44:
			r.skip(8)
		case op == 0xd0: // ref.null
			r.s33()
		case op == 0xd2:
			c.fn(r, "ref.func")
		case op == 0xfc:
			c.misc(r)
		case op == 0xfd:
			simd(r)
		default:
			r.fail("opcode 0x%02x at offset %d is not supported", op, r.i-1)
		}
	}
}

// misc reads the immediates of a 0xfc instruction.
func (c refs) misc(r *reader) {
	switch sub := r.u32(); {
	case sub <= 7: // saturating conversions
	case sub == 8: // memory.init: data, memory
		r.u32()
		r.byte()
	case sub == 9, sub == 13, sub >= 15 && sub <= 17: // data.drop, elem.drop, table.grow/size/fill
		r.u32()
	case sub == 10: // memory.copy
		r.byte()
		r.byte()
	case sub == 11: // memory.fill
		r.byte()
	case sub == 12 || sub == 14: // table.init, table.copy
		r.u32()
		r.u32()
	default:
		r.fail("opcode 0xfc %d is not supported", sub)
	}
}

// simd reads the immediates of a 0xfd instruction.
func simd(r *reader) {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads and stores
		memarg(r)
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		memarg(r)
		r.byte()
	case sub > 0x113:
		r.fail("opcode 0xfd %d is not supported", sub)
	}
}

func memarg(r *reader) {
	r.u32()
	r.u32()
}

// elements checks the function indices of an element section.
func (c refs) elements(r *reader) {
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		flags := r.u32()
		if flags > 7 {
			r.fail("element flags %d", flags)
			return
		}
		if flags&0x02 != 0 && flags&0x01 == 0 { // explicit table
			r.u32()
		}
		if flags&0x01 == 0 { // active: an offset
			c.expr(r)
		}
		exprs := flags&0x04 != 0
		if flags&0x03 != 0 { // elemkind or reftype
			r.byte()
		}
		for k := r.u32(); k > 0 && r.err == nil; k-- {
			if exprs {
				c.expr(r)
			} else {
				c.fn(r, "element")
			}
		}
	}
}

// globals checks the initializers of a global section.
func (c refs) globalInits(r *reader) {
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		r.valType()
		r.byte()
		c.expr(r)
	}
}

// check runs the checks over m's sections.
func (c refs) check(m *Module, wasm []byte) error {
	for _, s := range m.sections {
		r := reader{b: wasm[s.Body:s.End]}
		switch s.ID {
		case SectionGlobal:
			c.globalInits(&r)
		case 9: // element
			c.elements(&r)
		case 8: // start
			c.fn(&r, "start")
		default:
			continue
		}
		if r.err == nil && r.i != len(r.b) {
			r.fail("%d stray bytes", len(r.b)-r.i)
		}
		if r.err != nil {
			return malformed("section %d at offset %d: %v", s.ID, s.Start, r.err)
		}
	}
	for _, e := range m.Exports {
		r := reader{b: e.Desc[1:]}
		switch e.Kind() {
		case KindFunc:
			c.fn(&r, "export "+e.Name)
		case KindGlobal:
			c.global(&r, "export "+e.Name)
		}
		if r.err != nil {
			return malformed("%v", r.err)
		}
	}
	return nil
}

// sleb skips a signed LEB128 of at most n bytes.
func (r *reader) sleb(n int) {
	for k := 0; k < n; k++ {
		if r.byte()&0x80 == 0 || r.err != nil {
			return
		}
	}
	r.fail("integer too long at offset %d", r.i)
}

func (r *reader) skip(n int) {
	if r.err == nil && len(r.b)-r.i < n {
		r.fail("unexpected end at offset %d", r.i)
		return
	}
	r.i += n
}
