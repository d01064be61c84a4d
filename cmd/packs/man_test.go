//go:build packsman

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// These run with -tags packsman (make test does), the build that has the man
// page writer.

// manPages reads the man pages in dir, without their .TH line (it holds
// the date and the version).
func manPages(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = regexp.MustCompile(`(?m)^\.TH .*\n`).ReplaceAllString(string(b), "")
	}
	return out
}

// TestManPages: packs man writes a page per command, and docs/man holds
// what it writes today (make man regenerates them).
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	packsCLI(t, "man", dir).mustCode(t, exitOK)
	got := manPages(t, dir)
	for _, name := range []string{"packs.1", "packs-add.1", "packs-run.1", "packs-mcp.1", "packs-completion.1"} {
		if got[name] == "" {
			t.Errorf("no %s among %d pages", name, len(got))
		}
	}
	if !strings.Contains(got["packs-add.1"], "--grant") {
		t.Errorf("packs-add.1 does not document --grant")
	}
	checked := manPages(t, "../../docs/man")
	for name, page := range got {
		if checked[name] != page {
			t.Errorf("docs/man/%s is out of date: run make man", name)
		}
	}
	for name := range checked {
		if _, ok := got[name]; !ok {
			t.Errorf("docs/man/%s is for no command: run make man", name)
		}
	}
}
