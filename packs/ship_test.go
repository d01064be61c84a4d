package packs

import (
	"bytes"
	"context"
	"errors"
	"os"
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

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	slices.Sort(out)
	return out
}

// TestShipSelection: packs add (from the folder and from packs pack's
// archive) installs exactly what the pack ships, with the same integrity,
// and an ignore rule cannot drop a file the pack needs.
func TestShipSelection(t *testing.T) {
	tests := []struct {
		name    string
		extra   map[string]string
		want    []string // installed files besides SKILL.md, tools.json, bin/t.wasm
		wantErr error
	}{
		{"no ignore files", map[string]string{"target/CACHEDIR.TAG": "x"}, []string{"target/CACHEDIR.TAG"}, nil},
		{".packignore", map[string]string{".packignore": "/target/\n*.o\n", "target/CACHEDIR.TAG": "x", "src/a.o": "o", "src/a.c": "c"},
			[]string{".packignore", "src/a.c"}, nil},
		{".gitignore, re-included by .packignore", map[string]string{".gitignore": "node_modules/\ndocs/*.md\n", ".packignore": "!docs/keep.md\n",
			"node_modules/x/index.js": "x", "docs/keep.md": "k", "docs/drop.md": "d"}, []string{".gitignore", ".packignore", "docs/keep.md"}, nil},
		{".git never ships", map[string]string{".git/config": "x"}, nil, nil},
		{"a needed module", map[string]string{".packignore": "*.wasm\n"}, nil, ErrIgnoredReference},
		{"a needed folder", map[string]string{".gitignore": "bin/\n"}, nil, ErrIgnoredReference},
		{"the entry doc", map[string]string{".packignore": "*.md\n"}, nil, ErrIgnoredReference},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := shipPack(t, tt.extra)
			h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
			st, err := h.Stage(context.Background(), src, StageOptions{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("stage: %v, want %v", err, tt.wantErr)
			}
			var buf bytes.Buffer
			_, perr := PackArchive(src, &buf)
			if !errors.Is(perr, tt.wantErr) {
				t.Fatalf("pack: %v, want %v", perr, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			defer st.Discard()
			want := append([]string{"SKILL.md", "bin/t.wasm", "tools.json"}, tt.want...)
			slices.Sort(want)
			if got := listFiles(t, st.dir); !slices.Equal(got, want) {
				t.Errorf("installed %q, want %q", got, want)
			}
			archive := filepath.Join(t.TempDir(), "shipper.tar.gz")
			if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			fromArchive, err := h.Stage(context.Background(), archive, StageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer fromArchive.Discard()
			if fromArchive.Integrity != st.Integrity {
				t.Errorf("integrity from the archive %s, from the folder %s", fromArchive.Integrity, st.Integrity)
			}
		})
	}
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
		s := &Selection{rules: parseIgnore(PackIgnoreFile, data)}
		s.Excluded(rel, false)
		s.Excluded(rel, true)
		if _, ok := s.Excluded(".git", true); !ok {
			t.Fatal(".git shipped")
		}
	})
}
