package audit

import "testing"

// BenchmarkCheckpoint is what each commit adds for the checkpoint: read
// and authenticate the old one, write the new one.
func BenchmarkCheckpoint(b *testing.B) {
	k := &key{dir: b.TempDir(), secret: make([]byte, 32), first: 1}
	k.id = keyID(k.secret)
	for i := 0; b.Loop(); i++ {
		if _, err := readCheckpoint(k); err != nil {
			b.Fatal(err)
		}
		if _, err := writeCheckpoint(k, int64(i), "h", "m", "append", false); err != nil {
			b.Fatal(err)
		}
	}
}
