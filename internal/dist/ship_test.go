package dist

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/packs-run/packs/packs"
)

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
		{"a needed module", map[string]string{".packignore": "*.wasm\n"}, nil, packs.ErrIgnoredReference},
		{"a needed folder", map[string]string{".gitignore": "bin/\n"}, nil, packs.ErrIgnoredReference},
		{"the entry doc", map[string]string{".packignore": "*.md\n"}, nil, packs.ErrIgnoredReference},
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
