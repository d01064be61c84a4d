package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleCacheShared: with PACKS_CACHE, two state directories keep
// compiled modules in one folder, and the second install loads what the
// first compiled; each home keeps its own origins. A relative PACKS_CACHE
// is refused with the variable named.
func TestModuleCacheShared(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "modules")
	t.Setenv("PACKS_CACHE", shared)
	pack := toolPack(t, "echo", "wasi_echo.wasm", "", "")
	first, second := t.TempDir(), t.TempDir()
	withHome(t, first, "add", pack, "--grant", "none", "--yes").mustCode(t, exitOK)
	compiled := cacheFiles(t, shared)
	if len(compiled) == 0 {
		t.Fatalf("nothing compiled into PACKS_CACHE %s", shared)
	}
	if own := cacheFiles(t, filepath.Join(first, "cache")); len(own) != 0 {
		t.Errorf("the home's own cache holds compiled modules with PACKS_CACHE set: %v", own)
	}
	withHome(t, second, "add", pack, "--grant", "none", "--yes").mustCode(t, exitOK)
	if again := cacheFiles(t, shared); len(again) != len(compiled) {
		t.Errorf("the second home compiled again: %d files, then %d", len(compiled), len(again))
	}
	if r := withHome(t, second, "run", "echo", "t", "--input", `{"text":"hi"}`, "--yes").mustCode(t, exitOK); !strings.Contains(r.stdout, "hi") {
		t.Errorf("the tool did not run from the shared cache: %q", r.stdout)
	}

	t.Setenv("PACKS_CACHE", "relative/modules")
	msg := withHome(t, t.TempDir(), "list").mustCode(t, exitFailure).oneLineError(t)
	if !strings.Contains(msg, "PACKS_CACHE") || !strings.Contains(msg, "absolute") {
		t.Errorf("a relative PACKS_CACHE says %q", msg)
	}
}

// cacheFiles lists the regular files under dir, except the installed
// packs' origins (which belong to a home, not to the module cache).
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "origins" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}
