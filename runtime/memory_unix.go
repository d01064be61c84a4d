//go:build linux || darwin

package runtime

import "syscall"

// reserve maps address space for a memory that may grow to the smaller of
// its declared maximum and the budget (at least its minimum), with no
// access and no commitment; growing makes pages readable and writable in
// place. Nothing is ever copied, the kernel hands out zero pages as the
// guest first touches them, and Free returns them at once: it keeps the
// emptied reservation as a spare for the next memory of the same shape,
// where the platform can empty it (keepSpare), or unmaps it. It returns
// nil when the mapping fails (the caller falls back to the Go heap).
//
// A memory that starts from img (nil for none) has it mapped over its
// place in the reservation (mapImage), or, where it cannot be, copied in
// by the first Reallocate.
func (b *memBudget) reserve(capacity, maximum uint64, img *dataImage) linearMemory {
	size := max(min(maximum, uint64(b.limit)), capacity)
	if size == 0 || size > 1<<32 {
		return nil
	}
	// A spare of the same size is as good as a new reservation: one with
	// this image mapped for a memory that maps it, one without an image
	// for any other.
	if img != nil && img.file != nil {
		if r, ok := takeSpare(spareKey{size: size, image: img}); ok {
			return &mappedMemory{b: b, mem: r.mem, open: r.open, mapped: img}
		}
	} else if r, ok := takeSpare(spareKey{size: size}); ok {
		return &mappedMemory{b: b, mem: r.mem, open: r.open, image: img}
	}
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	m := &mappedMemory{b: b, mem: mem, image: img}
	if img != nil && mapImage(mem, img) {
		m.image, m.mapped = nil, img // in place already
	}
	return m
}

// spareKey is the shape of a reservation: its size, and the image mapped
// over it (nil for none).
type spareKey struct {
	size  uint64
	image *dataImage
}

// spare is the reservation of a closed memory, emptied: each of its pages
// reads as in a new reservation of its shape (zero, or the image's), and
// its first open bytes are readable and writable, the rest inaccessible.
type spare struct {
	mem  []byte
	open uint64
}

// mappedMemory is a linear memory in a reserved mapping.
type mappedMemory struct {
	b      *memBudget
	mem    []byte     // the whole mapping, as syscall.Mmap returned it
	size   uint64     // bytes the guest may access
	open   uint64     // bytes readable and writable (size, or more in a spare's first use)
	sized  bool       // the first Reallocate (the declared minimum) happened
	image  *dataImage // to copy in at the first Reallocate; nil for none
	mapped *dataImage // mapped over the reservation (mapImage); nil for none
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
	// is page-aligned. A spare may be open further than this memory's
	// minimum: the first Reallocate closes the rest again.
	if err := m.protect(size); err != nil {
		m.b.used.Add(int64(m.size) - int64(size))
		return nil
	}
	m.size = size
	if first && m.image != nil {
		m.image.install(m.mem[:size])
	}
	return m.mem[:size:size]
}

// protect makes the first size bytes of the mapping readable and writable
// and the rest inaccessible.
func (m *mappedMemory) protect(size uint64) error {
	switch {
	case size > m.open:
		if err := syscall.Mprotect(m.mem[m.open:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return err
		}
	case size < m.open:
		if err := syscall.Mprotect(m.mem[size:m.open], syscall.PROT_NONE); err != nil {
			return err
		}
	}
	m.open = size
	return nil
}

func (m *mappedMemory) private() int64 { return privateBytes(m.mem[:m.size]) }

// Free implements experimental.LinearMemory. wazero calls it once the
// module is closed and no call runs in it any more. The mapping is kept as
// a spare when it can be emptied (keepSpare), else unmapped.
func (m *mappedMemory) Free() {
	if m.mem == nil {
		return
	}
	if !keepSpare(spareKey{size: uint64(len(m.mem)), image: m.mapped}, spare{mem: m.mem, open: m.open}) {
		syscall.Munmap(m.mem)
	}
	m.mem, m.size, m.open = nil, 0, 0
}
