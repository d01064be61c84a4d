package packs

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestContentCacheKeepModules: a cache that keeps modules hands out the
// bytes it hashed once, with their hash and stamp; one that does not keeps
// nothing, and nothing but modules is kept.
func TestContentCacheKeepModules(t *testing.T) {
	dir := t.TempDir()
	module := "\x00asm\x01\x00\x00\x00"
	for rel, body := range map[string]string{"SKILL.md": "x", "bin/a.wasm": module, "docs/b.md": "y"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Lstat(filepath.Join(dir, "bin", "a.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		keep     bool
		rel      string
		wantKept bool
	}{
		{"module kept", true, "bin/a.wasm", true},
		{"not a module", true, "docs/b.md", false},
		{"keeping off", false, "bin/a.wasm", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &ContentCache{KeepModules: tt.keep}
			content, err := c.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			data, sha, stamp, ok := c.TakeModule(dir, tt.rel)
			if ok != tt.wantKept {
				t.Fatalf("kept = %t, want %t", ok, tt.wantKept)
			}
			if !ok {
				return
			}
			sum := sha256.Sum256([]byte(module))
			if want := hex.EncodeToString(sum[:]); string(data) != module || sha != want || content.Files[tt.rel] != want || stamp != StampOf(fi) {
				t.Errorf("got %q %s (Files: %s) %v, want the module, %s, its stamp", data, sha, content.Files[tt.rel], stamp, want)
			}
			if want, err := Digest(dir); err != nil || content.Digest != want {
				t.Errorf("digest %s, want %s (%v): keeping modules must not change it", content.Digest, want, err)
			}
			if _, _, _, again := c.TakeModule(dir, tt.rel); again {
				t.Error("the bytes were handed out twice")
			}
			// A second check of the unchanged folder reads nothing, so it
			// keeps nothing either.
			if _, err := c.Read(dir); err != nil {
				t.Fatal(err)
			}
			if _, _, _, again := c.TakeModule(dir, tt.rel); again {
				t.Error("a cache hit kept bytes it did not read")
			}
		})
	}
}
