package runtime

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
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
type memBudget struct {
	limit int64        // bytes
	used  atomic.Int64 // bytes held by all memories of the instance
	hit   atomic.Bool  // a growth was refused
}

func newMemBudget(pages uint32) *memBudget {
	return &memBudget{limit: int64(pages) * pageSize}
}

// Allocate implements experimental.MemoryAllocator.
func (b *memBudget) Allocate(capacity, _ uint64) experimental.LinearMemory {
	return &budgetedMemory{b: b, buf: make([]byte, 0, min(int64(capacity), b.limit))}
}

// exceeded reports whether the guest asked for more than its budget.
func (b *memBudget) exceeded() bool { return b.hit.Load() }

// budgetedMemory is one linear memory drawing on a memBudget.
type budgetedMemory struct {
	b     *memBudget
	buf   []byte
	sized bool // the first Reallocate (the declared minimum) happened
}

// Reallocate implements experimental.LinearMemory. The first call sizes the
// memory to its declared minimum; the runtime has already refused a module
// whose minimum is over budget (see checkMemory), and returning nil there
// would make wazero panic, so that call always succeeds. A later growth past
// the budget returns nil, which memory.grow reports to the guest as -1.
func (m *budgetedMemory) Reallocate(size uint64) []byte {
	if size <= uint64(len(m.buf)) {
		m.sized = true
		m.buf = m.buf[:size]
		return m.buf
	}
	grow := int64(size) - int64(len(m.buf))
	if m.b.used.Add(grow) > m.b.limit && m.sized {
		m.b.used.Add(-grow)
		m.b.hit.Store(true)
		return nil
	}
	m.sized = true
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
	return m.buf
}

// Free implements experimental.LinearMemory: the garbage collector reclaims
// the buffer once the instance is closed.
func (m *budgetedMemory) Free() { m.buf = nil }
