package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAddShipsSelection: packs add installs what the pack ships, not its
// build tree: what .gitignore and .packignore exclude stays behind, and so
// does a pack's .git; packs pack's archive installs the same files with the
// same integrity.
func TestAddShipsSelection(t *testing.T) {
	files := weatherFiles("1.0.0")
	files[".packignore"] = "# cargo\n/target/\n"
	files[".gitignore"] = "*.o\n"
	files["target/CACHEDIR.TAG"] = "Signature: 8a477f597d28d172789f06886806bc55\n"
	files["target/release/big.rlib"] = "build output"
	files["src/lib.o"] = "object"
	files["src/lib.rs"] = "fn main() {}\n"
	files[".git/config"] = "[core]\n"
	src := filepath.Join(t.TempDir(), "weather")
	writeFiles(t, src, files)

	tests := []struct {
		name    string
		present bool
	}{
		{"target", false},
		{"src/lib.o", false},
		{".git", false},
		{"src/lib.rs", true},
		{".packignore", true},
		{"bin/weather.wasm", true},
	}
	folderHome := t.TempDir()
	withHome(t, folderHome, "add", src, "--yes", "--grant", "none").mustCode(t, 0)
	archive := filepath.Join(t.TempDir(), "weather.tar.gz")
	packsCLI(t, "pack", src, "--output", archive).mustCode(t, 0)
	archiveHome := t.TempDir()
	withHome(t, archiveHome, "add", archive, "--yes", "--grant", "none").mustCode(t, 0)
	for _, home := range []string{folderHome, archiveHome} {
		for _, tt := range tests {
			_, err := os.Lstat(filepath.Join(home, "packs", "weather", filepath.FromSlash(tt.name)))
			if got := err == nil; got != tt.present {
				t.Errorf("%s: installed %s: %t, want %t", home, tt.name, got, tt.present)
			}
		}
	}
	a, b := listJSON(t, folderHome), listJSON(t, archiveHome)
	if len(a) != 1 || len(b) != 1 || a[0].Integrity != b[0].Integrity {
		t.Errorf("integrity from the folder %+v, from the archive %+v", a, b)
	}
}
