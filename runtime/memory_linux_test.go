package runtime

import (
	"bytes"
	"testing"
	"unsafe"
)

// A reservation kept as a spare serves the next memory of its shape, and
// that memory reads exactly as a new one: zero where no image is, the
// image where one is mapped, whatever the memory before it wrote, and
// open only as far as its own minimum although the one before grew.
func TestSpareReservationStartsFresh(t *testing.T) {
	const minBytes = 2 * pageSize
	pattern := bytes.Repeat([]byte("image!"), pageSize/6)
	img := &dataImage{minBytes: minBytes, off: 0, size: pageSize, data: append(pattern, make([]byte, pageSize-len(pattern))...)}
	want := bytes.Clone(img.data)
	img.store()
	if img.file == nil {
		t.Skip("no sealed memory file here: images are copied, not mapped")
	}
	cases := []struct {
		name  string
		image *dataImage
	}{
		{"no image", nil},
		{"image mapped", img},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			use := func() (*mappedMemory, []byte) {
				b := newMemBudget(64, tc.image, 0)
				lm := b.Allocate(minBytes, 1<<32)
				m, ok := lm.(*mappedMemory)
				if !ok {
					t.Fatalf("Allocate returned %T, want a reservation", lm)
				}
				return m, m.Reallocate(minBytes)
			}
			first, buf := use()
			at := unsafe.Pointer(&first.mem[0])
			for i := range buf {
				buf[i] = 0xA5
			}
			grown := first.Reallocate(minBytes + pageSize)
			for i := range grown {
				grown[i] = 0x5A
			}
			first.Free()

			second, buf := use()
			defer second.Free()
			if unsafe.Pointer(&second.mem[0]) != at {
				t.Fatal("the second memory did not take the first one's reservation")
			}
			if second.open != minBytes {
				t.Errorf("the second memory has %d bytes open, want its minimum %d", second.open, minBytes)
			}
			head := make([]byte, pageSize)
			if tc.image != nil {
				head = want
			}
			if !bytes.Equal(buf[:pageSize], head) || !bytes.Equal(buf[pageSize:], make([]byte, pageSize)) {
				t.Fatalf("the second memory starts with %q…, want a new memory's content", buf[:16])
			}
			grown = second.Reallocate(minBytes + pageSize)
			if !bytes.Equal(grown[minBytes:], make([]byte, pageSize)) {
				t.Fatal("the page the first memory grew into still holds what it wrote")
			}
		})
	}
}
