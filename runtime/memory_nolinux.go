//go:build !linux

package runtime

// store keeps the image in img.data: it is copied into each memory.
func (img *dataImage) store() {}

// mapImage has no memory file to map: the image is copied instead.
func mapImage([]byte, *dataImage) bool { return false }

// privateBytes cannot tell shared pages from private ones here: all of mem
// counts.
func privateBytes(mem []byte) int64 { return int64(len(mem)) }
