package runtime

import (
	"os"
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
