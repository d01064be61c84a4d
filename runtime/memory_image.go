package runtime

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"weak"

	"github.com/packs-run/packs/internal/wasmbin"
)

// A module's data segments are the initial content of its memory, and
// wazero copies every one of them into every new instance: for a standard-Go
// guest that is 38,000 segments and 1.7 MB, each offset decoded anew, about
// 40% of building the instance, and each page written is a page of the
// instance's own. Instead, prepare takes the data segments out of the module
// (stripData) and keeps what they write as one image, in a sealed memory
// file where the platform has one; the memory allocator starts each new
// memory of the module from a copy-on-write mapping of the image (see
// memBudget.Allocate). Every instance still starts from exactly the bytes
// the segments would have written and gets its own copy of each page it
// writes; the pages it only reads are shared by all instances of the module.
//
// Only a module whose data segments wazero would copy unconditionally and
// whose active segments behave as dropped ones after instantiation is
// stripped: one memory, its own (not imported), 32-bit and not shared;
// every active segment on it with a constant i32 offset, inside its
// declared minimum. Passive segments stay; so does each active one's index,
// as an empty passive segment, when the module has a data count section
// (without one, no memory.init or data.drop can name a segment). Any other
// module keeps its segments and is instantiated as before.

// dataImage is what a stripped module's data segments write into its
// memory: the bytes from off (page-aligned) on.
type dataImage struct {
	minBytes uint64 // the memory's declared minimum
	off      uint64 // where the image starts, page-aligned
	size     uint64 // its length, page-aligned
	file     *os.File
	data     []byte // the image itself, when there is no file
}

// images holds every image stripData made: by the SHA-256 (hex) of the
// module file it came from, for the life of the process (one per distinct
// module, as the compiled code is), and by a weak pointer to the first byte
// of each stripped module it returned, for as long as those bytes live
// (imageOf finds them; prepare keeps its module's in module.image).
var images sync.Map

// errNoImage: a module's data segments were taken out and no image of them
// is known. The instance would start without its data, so it is refused.
var errNoImage = errors.New("runtime: the module's memory image is missing")

// imageFor returns the image of m's data segments, nil when m keeps them.
func imageFor(m *module) (*dataImage, error) {
	if m.stripped && m.image == nil {
		return nil, errNoImage
	}
	return m.image, nil
}

// imageOf returns the image of wasm, a module stripData returned, or nil.
func imageOf(wasm []byte) *dataImage {
	if len(wasm) == 0 {
		return nil
	}
	if img, ok := images.Load(weak.Make(&wasm[0])); ok {
		return img.(*dataImage)
	}
	return nil
}

// hasNoData reports whether wasm carries the marker stripData leaves.
func hasNoData(wasm []byte) bool {
	return len(wasm) >= len(strippedMarker) && string(wasm[len(wasm)-len(strippedMarker):]) == string(strippedMarker)
}

// strippedMarker ends every module stripData took the segments out of: a
// custom section named "packs:data-image" holding one byte (wazero v1.12.0
// fails to read an empty custom section at the end of a module).
var strippedMarker = append(append([]byte{wasmbin.SectionCustom, 18, 16}, "packs:data-image"...), 1)

// stripData returns wasm without its data segments, and registers their
// image (see images), when wasm qualifies; else wasm itself. sourceSHA is
// the SHA-256 (hex) of the module as read from its file (moduleKey.sha): it
// names the image. stripData never fails: a module it cannot read is left
// for wazero to judge. It runs in every process that prepares the module,
// also when the prepared bytes come from the disk cache: an image lives in
// the process that made it.
func stripData(wasm []byte, sourceSHA string) []byte {
	img, sec, content, ok := readImage(wasm)
	if !ok {
		return wasm
	}
	if known, ok := images.Load(sourceSHA); ok {
		img = known.(*dataImage)
	} else {
		img.store()
		images.Store(sourceSHA, img)
	}
	out := wasmbin.Replace(wasm, sec, content)
	out = append(out, strippedMarker...)
	key := weak.Make(&out[0])
	images.Store(key, img)
	runtime.AddCleanup(&out[0], func(key weak.Pointer[byte]) { images.Delete(key) }, key)
	return out
}

// maxImage bounds the span of memory an image may cover.
const maxImage = 64 << 20

// readImage reads wasm's data segments into an image, if the module
// qualifies (see above). sec is its data section, content what replaces it.
func readImage(wasm []byte) (img *dataImage, sec wasmbin.Section, content []byte, ok bool) {
	const sectionData, sectionDataCount = 11, 12
	m, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, wasmbin.Section{}, nil, false
	}
	sec, ok = m.Section(sectionData)
	if !ok {
		return nil, sec, nil, false
	}
	_, counted := m.Section(sectionDataCount)
	for _, im := range m.Imports {
		if im.Kind() == wasmbin.KindMemory {
			return nil, sec, nil, false
		}
	}
	memSec, ok := m.Section(wasmbin.SectionMemory)
	if !ok {
		return nil, sec, nil, false
	}
	mr := leb{b: wasm[memSec.Body:memSec.End]}
	if mr.u32() != 1 {
		return nil, sec, nil, false
	}
	flags := mr.u32()
	minPages := mr.u32()
	if flags > 1 { // shared or 64-bit
		return nil, sec, nil, false
	}
	if flags == 1 {
		mr.u32()
	}
	if mr.bad || mr.i != len(mr.b) {
		return nil, sec, nil, false
	}
	minBytes := uint64(minPages) * pageSize

	type segment struct {
		at   uint64
		data []byte
	}
	r := leb{b: wasm[sec.Body:sec.End]}
	n := r.u32()
	segs := make([]segment, 0, min(int(n), len(r.b)))
	lo, hi := uint64(1<<63), uint64(0)
	// The new section: the passive segments as they were; in place of each
	// active one, nothing, or, when instructions may name segments by
	// index (a data count section), an empty passive segment, which
	// memory.init and data.drop treat as they treat a dropped active one.
	body := []byte{}
	kept := uint32(0)
	for range n {
		start := r.i
		switch flags := r.u32(); flags {
		case 1: // passive
			size := r.u32()
			if r.bad || uint64(size) > uint64(len(r.b)-r.i) {
				return nil, sec, nil, false
			}
			r.i += int(size)
			body = append(body, r.b[start:r.i]...)
			kept++
			continue
		case 2: // active, memory index given
			if r.u32() != 0 {
				return nil, sec, nil, false
			}
		case 0: // active on memory 0
		default:
			return nil, sec, nil, false
		}
		if r.byte() != 0x41 { // i32.const
			return nil, sec, nil, false
		}
		at := uint64(uint32(r.s32()))
		if r.byte() != 0x0b { // end
			return nil, sec, nil, false
		}
		size := uint64(r.u32())
		if r.bad || size > uint64(len(r.b)-r.i) || at+size > minBytes {
			return nil, sec, nil, false
		}
		d := r.b[r.i : r.i+int(size)]
		r.i += int(size)
		if size > 0 {
			segs = append(segs, segment{at, d})
			lo, hi = min(lo, at), max(hi, at+size)
		}
		if counted {
			body = append(body, 1, 0)
			kept++
		}
	}
	if r.bad || r.i != len(r.b) || len(segs) == 0 {
		return nil, sec, nil, false
	}
	content = append(wasmbin.AppendU32(nil, kept), body...)
	page := uint64(os.Getpagesize())
	lo = lo / page * page
	hi = (hi + page - 1) / page * page
	if hi-lo > maxImage || hi > minBytes {
		return nil, sec, nil, false
	}
	img = &dataImage{minBytes: minBytes, off: lo, size: hi - lo, data: make([]byte, hi-lo)}
	for _, s := range segs { // in order: a later segment overwrites an earlier one
		copy(img.data[s.at-lo:], s.data)
	}
	return img, sec, content, true
}

// install writes the image into buf, a new memory of its module.
func (img *dataImage) install(buf []byte) {
	if img.data != nil {
		copy(buf[img.off:], img.data)
		return
	}
	img.file.ReadAt(buf[img.off:img.off+img.size], 0) // a sealed memory file: it cannot fail short
}

// leb decodes the integers of a wasm binary. The first error sticks.
type leb struct {
	b   []byte
	i   int
	bad bool
}

func (r *leb) byte() byte {
	if r.bad || r.i >= len(r.b) {
		r.bad = true
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

// u32 decodes an unsigned LEB128 of at most 5 bytes that fits 32 bits.
func (r *leb) u32() uint32 {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 1<<32-1 {
				r.bad = true
			}
			return uint32(v)
		}
	}
	r.bad = true
	return 0
}

// s32 decodes a signed LEB128 of at most 5 bytes that fits 32 bits.
func (r *leb) s32() int32 {
	var v int64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v -= 1 << (shift + 7)
			}
			if v < -1<<31 || v > 1<<31-1 {
				r.bad = true
			}
			return int32(v)
		}
	}
	r.bad = true
	return 0
}
