//go:build !linux

package runtime

// store keeps the image in img.data: it is copied into each memory.
func (img *dataImage) store() {}

// mapImage has no memory file to map: the image is copied instead.
func mapImage([]byte, *dataImage) bool { return false }
