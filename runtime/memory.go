package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/packs-run/packs/internal/wasmbin"
)

// pageSize is the size of one wasm page.
const pageSize = 64 << 10

// memBudget is the memory budget of one instance: every linear memory the
// instance creates (the guest's, and for Extism the kernel's, which holds
// input and output) draws pages from it. It is installed with
// experimental.WithMemoryAllocator in the context that instantiates, so one
// shared wazero runtime serves every limit, and it remembers when a guest
// asked for more than its budget: that is how a failed memory.grow becomes
// ErrMemoryLimit instead of whatever the guest does next (a Go guest exits
// with "out of memory", a Rust guest traps).
//
// Where the platform allows, each memory is a reservation of address space
// outside the Go heap (see reserve in memory_unix.go): growing it copies nothing, and
// closing the instance returns its pages at once. Elsewhere, and when the
// reservation fails, it is a Go slice that grows like append.
//
// The module's own memory starts from its data segments' image, when
// prepare took them out (see dataImage): image is that image, imageAt the
// number of memories instantiated before the module's (0 for a WASI
// command; 1 for an Extism plugin, whose kernel go-sdk instantiates first).
type memBudget struct {
	limit int64        // bytes
	used  atomic.Int64 // bytes held by all memories of the instance
	hit   atomic.Bool  // a growth was refused

	image     *dataImage
	imageAt   int
	allocated int  // memories allocated so far (instantiation is sequential)
	installed bool // the image went into a memory of its module's size
	mems      []linearMemory
}

// linearMemory is a linear memory that can tell how much memory of its own
// it holds.
type linearMemory interface {
	experimental.LinearMemory
	private() int64
}

// private returns the memory the instance's linear memories hold that is
// theirs alone: what a ready instance in a pool costs (see pool), beyond
// the compiled code and data images its module's instances share. The
// instance must not be running.
func (b *memBudget) private() int64 {
	var n int64
	for _, m := range b.mems {
		n += m.private()
	}
	return n
}

func newMemBudget(pages uint32, image *dataImage, imageAt int) *memBudget {
	return &memBudget{limit: int64(pages) * pageSize, image: image, imageAt: imageAt}
}

// Allocate implements experimental.MemoryAllocator. capacity is the
// memory's declared minimum, maximum its declared maximum (4 GiB when none).
func (b *memBudget) Allocate(capacity, maximum uint64) experimental.LinearMemory {
	var img *dataImage
	if b.image != nil && b.allocated == b.imageAt && capacity == b.image.minBytes {
		img, b.installed = b.image, true
	}
	b.allocated++
	if m := b.reserve(capacity, maximum, img); m != nil {
		b.mems = append(b.mems, m)
		return m
	}
	m := &heapMemory{b: b, buf: make([]byte, 0, min(int64(capacity), b.limit)), image: img}
	b.mems = append(b.mems, m)
	return m
}

// checkImage reports an instance whose module's memory should have started
// from an image and did not (go-sdk instantiated its modules in another
// order than the one imageAt expects): it would run without its data.
func (b *memBudget) checkImage() error {
	if b.image != nil && !b.installed {
		return errNoImage
	}
	return nil
}

// exceeded reports whether the guest asked for more than its budget.
func (b *memBudget) exceeded() bool { return b.hit.Load() }

// grow accounts for a memory growing from have to want bytes. The first
// growth of a memory (first: to its declared minimum) is always granted:
// the runtime has already refused a module whose minimum is over budget
// (see newInstance), and wazero panics when that allocation fails. A later
// growth past the budget is refused and remembered.
func (b *memBudget) grow(have, want int64, first bool) bool {
	if b.used.Add(want-have) > b.limit && !first {
		b.used.Add(have - want)
		b.hit.Store(true)
		return false
	}
	return true
}

// heapMemory is a linear memory in a Go slice.
type heapMemory struct {
	b     *memBudget
	buf   []byte
	sized bool       // the first Reallocate (the declared minimum) happened
	image *dataImage // copied in by the first Reallocate; nil for none
}

// Reallocate implements experimental.LinearMemory. A nil result is what
// memory.grow reports to the guest as -1.
func (m *heapMemory) Reallocate(size uint64) []byte {
	first := !m.sized
	m.sized = true
	if size <= uint64(len(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	if !m.b.grow(int64(len(m.buf)), int64(size), first) {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Grow like append does for large slices (by a quarter), never
	// reserving past the budget.
	newCap := max(int64(size), min(int64(cap(m.buf))*5/4, m.b.limit))
	buf := make([]byte, size, newCap)
	copy(buf, m.buf)
	m.buf = buf
	if first && m.image != nil {
		m.image.install(m.buf)
	}
	return m.buf
}

func (m *heapMemory) private() int64 { return int64(len(m.buf)) }

// Free implements experimental.LinearMemory: the garbage collector reclaims
// the buffer once the instance is closed.
func (m *heapMemory) Free() { m.buf = nil }

// The ceilings outside linear memory. They are fixed, not drawn from the
// per-call budget: a module is prepared once (module.prepare) for every
// limit it may run under.
const (
	// tableElements bounds all the tables of a module together. wazero
	// keeps a table element in 8 bytes: 1 Mi elements are 8 MiB.
	tableElements = 1 << 20
	// stackUnits bounds the call stack of a module's own functions, in
	// wasmbin's estimate of 8-byte slots: 8 MiB.
	stackUnits = 1 << 20
)

// ErrTableLimit and ErrStackLimit are the memory limits outside linear
// memory. Both wrap ErrMemoryLimit.
var (
	// ErrTableLimit: the module declares more table elements up front than
	// tableElements allows. A table.grow past the limit returns -1 to the
	// guest, as the spec says it does at a table's maximum.
	ErrTableLimit error = &limitError{"runtime: table limit exceeded"}
	// ErrStackLimit: the guest's calls nested deeper than stackUnits
	// allows, and it was stopped.
	ErrStackLimit error = &limitError{"runtime: call stack limit exceeded"}
)

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return ErrMemoryLimit }

// limitResources builds the table and stack ceilings into a module
// (wasmbin.Limit). A module whose tables are too large from the start is
// refused with ErrTableLimit. Its output is what the prepared-module cache
// keeps; prepare then takes the data segments out into an image in this
// process (stripData).
func limitResources(wasm []byte) ([]byte, error) {
	out, err := wasmbin.Limit(wasm, wasmbin.Limits{TableElements: tableElements, StackUnits: stackUnits})
	if errors.Is(err, wasmbin.ErrTableLimit) {
		return nil, fmt.Errorf("%w: %w", ErrTableLimit, err)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// stackLimitHit reports whether err, a failed call's error from wazero or
// Extism, is the trap of a module that passed stackUnits: the trap's stack
// trace names wasmbin.StackLimitFunc. It looks through wrapped errors.
func stackLimitHit(err error) bool {
	for err != nil {
		if strings.Contains(err.Error(), wasmbin.StackLimitFunc+"(") {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			return slices.ContainsFunc(u.Unwrap(), stackLimitHit)
		default:
			return false
		}
	}
	return false
}
