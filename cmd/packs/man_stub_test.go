//go:build !packsman

package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestManNeedsTag: the binary built without -tags packsman says how to get
// the man pages, and writes nothing.
func TestManNeedsTag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	r := packsCLI(t, "man", dir)
	if r.code == exitOK {
		t.Fatalf("packs man succeeded without the man page writer: %+v", r)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("packs man made %s", dir)
	}
}
