//go:build linux || darwin

package runtime

import "syscall"

// reserve maps address space for a memory that may grow to the smaller of
// its declared maximum and the budget (at least its minimum), with no
// access and no commitment; growing makes pages readable and writable in
// place. Nothing is ever copied, the kernel hands out zero pages as the
// guest first touches them, and Free unmaps the lot. It returns nil when
// the mapping fails (the caller falls back to the Go heap).
//
// A memory that starts from img (nil for none) has it mapped over its
// place in the reservation (mapImage), or, where it cannot be, copied in
// by the first Reallocate.
func (b *memBudget) reserve(capacity, maximum uint64, img *dataImage) linearMemory {
	size := max(min(maximum, uint64(b.limit)), capacity)
	if size == 0 || size > 1<<32 {
		return nil
	}
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	m := &mappedMemory{b: b, mem: mem, image: img}
	if img != nil && mapImage(mem, img) {
		m.image = nil // in place already
	}
	return m
}

// mappedMemory is a linear memory in a reserved mapping.
type mappedMemory struct {
	b     *memBudget
	mem   []byte     // the whole mapping, as syscall.Mmap returned it
	size  uint64     // bytes accessible
	sized bool       // the first Reallocate (the declared minimum) happened
	image *dataImage // to copy in at the first Reallocate; nil for none
}

// Reallocate implements experimental.LinearMemory. A nil result is what
// memory.grow reports to the guest as -1.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	first := !m.sized
	m.sized = true
	if size <= m.size {
		return m.mem[:size:size]
	}
	if size > uint64(len(m.mem)) {
		// Past the reservation, which ends at the budget (or at the
		// module's own maximum, which wazero checks before asking).
		m.b.hit.Store(true)
		return nil
	}
	if !m.b.grow(int64(m.size), int64(size), first) {
		return nil
	}
	// Wasm pages are 64 KiB, a multiple of every OS page size, so m.size
	// is page-aligned.
	if err := syscall.Mprotect(m.mem[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
		m.b.used.Add(int64(m.size) - int64(size))
		return nil
	}
	m.size = size
	if first && m.image != nil {
		m.image.install(m.mem[:size])
	}
	return m.mem[:size:size]
}

func (m *mappedMemory) private() int64 { return privateBytes(m.mem[:m.size]) }

// Free implements experimental.LinearMemory. wazero calls it once the
// module is closed and no call runs in it any more.
func (m *mappedMemory) Free() {
	if m.mem != nil {
		syscall.Munmap(m.mem)
		m.mem, m.size = nil, 0
	}
}
