package packs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// treeFile is one entry of a test tree: a file (with mode) or a symlink.
type treeFile struct {
	path, body string
	mode       os.FileMode // 0 means 0644
	link       bool        // body is the symlink target
}

// writeTree creates files under dir in the order given.
func writeTree(t testing.TB, dir string, files []treeFile) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if f.link {
			if err := os.Symlink(f.body, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, []byte(f.body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // beat the umask
			t.Fatal(err)
		}
	}
}

func digestOf(t testing.TB, files []treeFile) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	d, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var baseTree = []treeFile{
	{path: "SKILL.md", body: "---\nname: p\n---\nbody\n"},
	{path: "a-b", body: "dash"},
	{path: "a/b", body: "slash"},
	{path: "bin/run.sh", body: "#!/bin/sh\n", mode: 0o755},
	{path: "README.md", body: "SKILL.md", link: true},
}

// TestDigestCanonical recomputes the digest of baseTree from the format
// the Digest doc comment defines, so the format cannot drift silently:
// every lockfile depends on it.
func TestDigestCanonical(t *testing.T) {
	h := sha256.New()
	for _, e := range []struct {
		rel  string
		kind byte
		body string
	}{ // sorted by path: "README.md" < "SKILL.md" < "a-b" < "a/b" < "bin/run.sh"
		{"README.md", 'l', "SKILL.md"},
		{"SKILL.md", 'f', "---\nname: p\n---\nbody\n"},
		{"a-b", 'f', "dash"},
		{"a/b", 'f', "slash"},
		{"bin/run.sh", 'x', "#!/bin/sh\n"},
	} {
		fmt.Fprintf(h, "%s\x00%c%d\x00%s", e.rel, e.kind, len(e.body), e.body)
	}
	want := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if got := digestOf(t, baseTree); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestDigestIgnoresOrderTimesAndFolders(t *testing.T) {
	want := digestOf(t, baseTree)
	reversed := make([]treeFile, len(baseTree))
	for i, f := range baseTree {
		reversed[len(baseTree)-1-i] = f
	}
	dir := t.TempDir()
	writeTree(t, dir, reversed)
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "a", "b"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "SKILL.md"), 0o600); err != nil { // read bits do not count
		t.Fatal(err)
	}
	got, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestDigestChanges(t *testing.T) {
	base := digestOf(t, baseTree)
	change := func(i int, f func(*treeFile)) []treeFile {
		out := append([]treeFile(nil), baseTree...)
		f(&out[i])
		return out
	}
	tests := []struct {
		name  string
		files []treeFile
	}{
		{"one byte of content", change(2, func(f *treeFile) { f.body = "dasH" })},
		{"exec bit", change(3, func(f *treeFile) { f.mode = 0o644 })},
		{"exec bit added", change(2, func(f *treeFile) { f.mode = 0o744 })},
		{"renamed", change(2, func(f *treeFile) { f.path = "a-c" })},
		{"symlink target", change(4, func(f *treeFile) { f.body = "a-b" })},
		{"symlink made a file", change(4, func(f *treeFile) { f.link = false })},
		{"file added", append(append([]treeFile(nil), baseTree...), treeFile{path: "new", body: ""})},
		{"file removed", baseTree[1:]},
		{"content moved between files", change(2, func(f *treeFile) { f.body = "dashs" })},
	}
	seen := map[string]string{base: "base"}
	for _, tt := range tests {
		got := digestOf(t, tt.files)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: same digest as %s", tt.name, prev)
		}
		seen[got] = tt.name
	}
}

func TestDigestMissing(t *testing.T) {
	if _, err := Digest(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want ErrNotExist", err)
	}
}

func TestValidDigest(t *testing.T) {
	good := digestPrefix + hex.EncodeToString(make([]byte, 32))
	for s, want := range map[string]bool{
		good:                        true,
		good[:len(good)-1]:          false,
		good + "0":                  false,
		"sha512:" + good[7:]:        false,
		good[:10] + "A" + good[11:]: false,
		"":                          false,
	} {
		if got := ValidDigest(s); got != want {
			t.Errorf("ValidDigest(%q) = %v, want %v", s, got, want)
		}
	}
}
