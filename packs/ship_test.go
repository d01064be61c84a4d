package packs

import (
	"path/filepath"
	"slices"
	"testing"
)

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

// TestCheckShipped: validate warns about build output with the file, and
// names the ignore rule that drops a needed file.
func TestCheckShipped(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]string
		want  []string // "rule file:line"
	}{
		{"rust target", map[string]string{"target/CACHEDIR.TAG": "x"}, []string{"build-output target:0"}},
		{"ignored target", map[string]string{"target/CACHEDIR.TAG": "x", ".gitignore": "/target/\n"}, nil},
		{"object file and node_modules", map[string]string{"a.o": "o", "node_modules/x.js": "x"}, []string{"build-output a.o:0", "build-output node_modules:0"}},
		{"needed module ignored", map[string]string{".packignore": "# build\n\nbin/*.wasm\n"}, []string{"ignored-reference .packignore:3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := shipPack(t, tt.extra)
			p, _ := load(dir, LoadOptions{})
			var got []string
			for _, f := range CheckShipped(dir, p, nil) {
				rel, _ := filepath.Rel(dir, f.File)
				got = append(got, f.Rule+" "+filepath.ToSlash(rel)+":"+itoa(f.Line))
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzIgnore: any ignore file and any path are decided without a panic, and
// the .git rule holds whatever the file says.
func FuzzIgnore(f *testing.F) {
	f.Add([]byte("/target/\n!keep\n# c\n\\#x\n**/a/**\n"), "target/x")
	f.Add([]byte("*\n"), ".git")
	f.Fuzz(func(t *testing.T, data []byte, rel string) {
		s := &selection{rules: parseIgnore(packIgnoreFile, data)}
		s.excluded(rel, false)
		s.excluded(rel, true)
		if _, ok := s.excluded(".git", true); !ok {
			t.Fatal(".git shipped")
		}
	})
}
