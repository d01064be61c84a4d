package packs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A stamp is trusted only when the stat gave an inode and a change time:
// size and modification time alone can be set back by whoever writes the
// file.
func TestStampSame(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tool.wasm")
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func() Stamp {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return StampOf(fi)
	}
	before := stat()
	if !before.Same(stat()) {
		t.Fatalf("an unchanged file's stamps differ: %+v", before)
	}
	// Same size, modification time set back: the change time still moves.
	mtime := before.mtime
	time.Sleep(10 * time.Millisecond) // file times advance in kernel ticks (≤ 4 ms): let one pass
	if err := os.WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if before.Same(stat()) {
		t.Errorf("rewritten with its modification time set back, the file still has the same stamp")
	}
	partial := before
	partial.full = false
	if partial.Same(partial) {
		t.Errorf("a stamp without inode and change time is trusted")
	}
}
