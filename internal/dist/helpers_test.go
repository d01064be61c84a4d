package dist

import (
	"os"
	"path/filepath"
	"testing"
)

// Test helpers shared with the packs package's tests (a test file cannot
// be imported across packages).

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

// writePackFiles writes files (relative path -> content) under dir.
func writePackFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// skillMD is a valid entry doc for a pack named name.
func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: A test pack.\n---\n\n# " + name + "\n\nBody.\n"
}

func shipPack(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shipper")
	files := map[string]string{
		"SKILL.md":   "---\nname: shipper\ndescription: Ships files.\n---\n# Shipper\n",
		"tools.json": `[{"name": "t", "description": "T.\nReturns.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/t.wasm", "function": "t"}}]`,
		"bin/t.wasm": "\x00asm\x01\x00\x00\x00",
	}
	for k, v := range extra {
		files[k] = v
	}
	writePackFiles(t, dir, files)
	return dir
}
