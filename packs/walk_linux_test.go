package packs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestWalkEntriesMatchWalkDir: the descriptor-relative walk finds what
// filepath.WalkDir finds, entry for entry, with the same stamps (a stamp
// recorded by one is Same as the other's), and refuses what it refuses.
func TestWalkEntriesMatchWalkDir(t *testing.T) {
	dir := t.TempDir()
	for rel, body := range map[string]string{
		"SKILL.md": "---\nname: x\n---\n", "a-b": "dash", "a/b/c.txt": "deep", "a/z": "z",
		"bin/run.sh": "#!/bin/sh\n", "docs/empty": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []error{
		os.Chmod(filepath.Join(dir, "bin", "run.sh"), 0o755),
		os.Chmod(filepath.Join(dir, "a-b"), 0o4644|os.ModeSetuid),
		os.Mkdir(filepath.Join(dir, "emptydir"), 0o755),
		os.Symlink("SKILL.md", filepath.Join(dir, "link")),
		os.Symlink("a", filepath.Join(dir, "dirlink")),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	sorted := func(es []digestEntry) []digestEntry {
		slices.SortFunc(es, func(a, b digestEntry) int { return strings.Compare(a.rel, b.rel) })
		return es
	}
	fast, handled, err := walkEntries(dir)
	if err != nil || !handled {
		t.Fatalf("walkEntries: handled %v, %v", handled, err)
	}
	slow, err := walkDirEntries(dir)
	if err != nil {
		t.Fatal(err)
	}
	fast, slow = sorted(fast), sorted(slow)
	if len(fast) != len(slow) || len(fast) != 8 {
		t.Fatalf("walkEntries found %d entries, WalkDir %d (want 8)", len(fast), len(slow))
	}
	for i := range fast {
		if f, s := fast[i], slow[i]; f != s || !f.stamp.Same(s.stamp) {
			t.Errorf("entry %d: walkEntries %+v, WalkDir %+v", i, f, s)
		}
	}

	// A named pipe is refused by both, as an unsupported file.
	if err := syscall.Mkfifo(filepath.Join(dir, "a", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := walkEntries(dir); !errors.Is(err, ErrUnsupportedFile) {
		t.Errorf("walkEntries with a named pipe: %v, want ErrUnsupportedFile", err)
	}
	if _, err := walkDirEntries(dir); !errors.Is(err, ErrUnsupportedFile) {
		t.Errorf("WalkDir with a named pipe: %v, want ErrUnsupportedFile", err)
	}

	// A folder given as a symlink is not walked here: WalkDir decides.
	if _, handled, _ := walkEntries(filepath.Join(dir, "dirlink")); handled {
		t.Error("walkEntries followed a symlinked folder")
	}
}
