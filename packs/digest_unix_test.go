//go:build unix

package packs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

func TestDigestRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, baseTree)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	if _, err := Digest(dir); !errors.Is(err, ErrUnsupportedFile) {
		t.Fatalf("got %v, want ErrUnsupportedFile", err)
	}
}
