package author

import (
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
	sel, err := packs.ReadSelection(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sel.Excluded("target", true); !ok {
		t.Error("target/ ships with the pack")
	}
	for _, rel := range []string{"bin/greeter.wasm", "SKILL.md", "src/lib.rs"} {
		if r, ok := sel.Excluded(rel, false); ok {
			t.Errorf("%s is excluded by %s", rel, r)
		}
	}
}
