package runtime

import (
	"encoding/binary"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// store moves the image into a sealed memory file, from which each memory
// of its module maps it copy-on-write (mapImage). Where that fails, the
// image stays in img.data and is copied into each memory instead.
func (img *dataImage) store() {
	fd, err := unix.MemfdCreate("packs-data-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "packs-data-image")
	// Sealed: the file can neither change nor shrink (which would make a
	// mapping of it fault), by us or anyone.
	if _, err := f.WriteAt(img.data, 0); err != nil {
		f.Close()
		return
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return
	}
	img.file, img.data = f, nil
}

// mapImage maps img over mem (a new reservation, no access yet) at the
// image's offset: private, so the guest's writes go to pages of its own;
// no access until the memory grows over it (mappedMemory.Reallocate).
func mapImage(mem []byte, img *dataImage) bool {
	if img.file == nil {
		return false
	}
	at := unsafe.Pointer(&mem[img.off])
	got, err := unix.MmapPtr(int(img.file.Fd()), 0, at, uintptr(img.size), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_FIXED)
	return err == nil && got == at
}

// pagemap is /proc/self/pagemap, nil when it cannot be read.
var pagemap = sync.OnceValue(func() *os.File {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil
	}
	return f
})

// privateBytes returns how much of mem is in pages of this mapping's own:
// present and not shared with a file (a page of a data image the guest
// has not written is the image's, shared by every instance). Where the
// page map cannot be read, all of mem counts.
func privateBytes(mem []byte) int64 {
	f := pagemap()
	page := os.Getpagesize()
	if f == nil || len(mem) == 0 {
		return int64(len(mem))
	}
	const present, fileOrShared = 1 << 63, 1 << 61
	first := uintptr(unsafe.Pointer(&mem[0])) / uintptr(page)
	n := (len(mem) + page - 1) / page
	buf := make([]byte, 8*min(n, 4096))
	var private int64
	for done := 0; done < n; {
		chunk := buf[:8*min(n-done, 4096)]
		if _, err := f.ReadAt(chunk, int64(first+uintptr(done))*8); err != nil {
			return int64(len(mem))
		}
		for i := 0; i < len(chunk); i += 8 {
			if e := binary.LittleEndian.Uint64(chunk[i:]); e&present != 0 && e&fileOrShared == 0 {
				private += int64(page)
			}
		}
		done += len(chunk) / 8
	}
	return private
}

// Spare reservations. Mapping a memory's reservation, opening its minimum
// and unmapping it when the instance closes were three system calls per
// memory, two memories per Extism instance: over a third of building and
// closing a small plugin's instance. A closed memory's reservation is
// instead emptied with MADV_DONTNEED, which drops every page the guest
// touched: the kernel hands out a zero page at the next touch of an
// anonymous page, and the image's own page at the next touch of a page
// of the (sealed) image mapped privately over it, exactly what a new
// reservation would show. The next memory of the same shape (size, and
// image or none) takes it, opening or closing only the difference
// between its minimum and what the spare has open. Nothing else of the
// instance is reused: wazero frees a memory only once its module is
// closed and no call runs in it (the runtime closes an instance only
// after its call has returned).

// maxSpares bounds the spares kept, all shapes together: enough for the
// pools' refills and the instances being retired.
const maxSpares = 16

var spares struct {
	sync.Mutex
	byKey map[spareKey][]spare
	n     int
}

// keepSpare empties r and keeps it for a memory of shape k. It returns
// false when it does not keep it (too many spares, or it cannot be
// emptied): the caller unmaps it.
func keepSpare(k spareKey, r spare) bool {
	spares.Lock()
	full := spares.n >= maxSpares
	spares.Unlock()
	if full {
		return false
	}
	if r.open > 0 {
		if err := unix.Madvise(r.mem[:r.open], unix.MADV_DONTNEED); err != nil {
			return false
		}
	}
	spares.Lock()
	defer spares.Unlock()
	if spares.n >= maxSpares {
		return false
	}
	if spares.byKey == nil {
		spares.byKey = map[spareKey][]spare{}
	}
	spares.byKey[k] = append(spares.byKey[k], r)
	spares.n++
	return true
}

// takeSpare returns a spare of shape k, if one is kept.
func takeSpare(k spareKey) (spare, bool) {
	spares.Lock()
	defer spares.Unlock()
	l := spares.byKey[k]
	if len(l) == 0 {
		return spare{}, false
	}
	r := l[len(l)-1]
	if len(l) == 1 {
		delete(spares.byKey, k)
	} else {
		spares.byKey[k] = l[:len(l)-1]
	}
	spares.n--
	return r, true
}
