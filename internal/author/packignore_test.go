package author

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/packs"
)

// TestRustTemplateIgnoresTarget: a Rust pack from packs init does not ship
// cargo's target/ (21 MB after one build), and still ships its module.
func TestRustTemplateIgnoresTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	if _, err := Init(dir, InitOptions{Name: "greeter", Lang: "rust"}); err != nil {
		t.Fatal(err)
	}
	// What one build leaves: cargo's output, and the module.
	for _, rel := range []string{"target/release/libgreeter.rlib", "bin/greeter.wasm"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shipped := map[string]bool{}
	err := packs.WalkShipped(dir, func(_, rel string, _ fs.DirEntry) error {
		shipped[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if shipped["target"] || shipped["target/release/libgreeter.rlib"] {
		t.Error("target/ ships with the pack")
	}
	for _, rel := range []string{"bin/greeter.wasm", "SKILL.md", "src/lib.rs"} {
		if !shipped[rel] {
			t.Errorf("%s does not ship", rel)
		}
	}
}
