//go:build unix

package packs

import (
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestFIFOsNeverBlock: a FIFO where a pack file belongs is refused without
// being opened (opening it would block until a writer came).
func TestFIFOsNeverBlock(t *testing.T) {
	tool := `[{"name":"t","description":"d","input_schema":{"type":"object"},"run":{"wasm":"bin/x.wasm","function":"f"}}]`
	cases := []struct {
		name  string
		files map[string]string
		fifo  string
		want  []spot
	}{
		{"entry", nil, "SKILL.md", []spot{{"SKILL.md", 0, SeverityError, "read-error"}}},
		{"manifest", map[string]string{"SKILL.md": skillMD("manifest")}, "skill.toml", []spot{{"skill.toml", 0, SeverityError, "read-error"}}},
		{"tools", map[string]string{"SKILL.md": skillMD("tools")}, "tools.json", []spot{{"tools.json", 0, SeverityError, "read-error"}}},
		{"wasm", map[string]string{"SKILL.md": skillMD("wasm"), "tools.json": tool, "bin/keep": ""}, "bin/x.wasm", []spot{{"tools.json", 1, SeverityError, "wasm-format"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.name)
			writePackFiles(t, dir, tc.files)
			if tc.files == nil {
				writePackFiles(t, dir, map[string]string{"keep": ""})
			}
			if err := syscall.Mkfifo(filepath.Join(dir, tc.fifo), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := spotsOf(dir, Validate(dir, LoadOptions{})); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
	root := t.TempDir()
	writePackFiles(t, root, map[string]string{"p/keep": ""})
	if err := syscall.Mkfifo(filepath.Join(root, "p", "SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Discover(context.Background(), []string{root}, DiscoverOptions{})
	if err != nil || len(res.Packs) != 0 || len(res.Findings) != 1 || res.Findings[0].Rule != "read-error" {
		t.Errorf("Discover = %+v, %v", res, err)
	}
}
