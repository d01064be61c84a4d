package main

import (
	"os"
	"path/filepath"
)

// isolateHome points HOME at an empty folder for the whole test binary, so
// no test discovers the skills in the real ~/.claude/skills, ~/.agents/skills
// or ~/.codex/skills of the machine it runs on. The toolchains' own folders,
// which default to places under HOME, are kept where they were, so builds
// keep their caches. The returned func removes the folder.
func isolateHome() func() {
	real, err := os.UserHomeDir()
	if err != nil {
		real = ""
	}
	keep := map[string]string{
		"GOPATH":      filepath.Join(real, "go"),
		"CARGO_HOME":  filepath.Join(real, ".cargo"),
		"RUSTUP_HOME": filepath.Join(real, ".rustup"),
	}
	if cache, err := os.UserCacheDir(); err == nil {
		keep["GOCACHE"] = filepath.Join(cache, "go-build")
	}
	for k, v := range keep {
		if os.Getenv(k) == "" && real != "" {
			os.Setenv(k, v)
		}
	}
	if os.Getenv("GOMODCACHE") == "" {
		os.Setenv("GOMODCACHE", filepath.Join(filepath.SplitList(os.Getenv("GOPATH"))[0], "pkg", "mod"))
	}
	dir, err := os.MkdirTemp("", "packs-test-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", dir)
	return func() { os.RemoveAll(dir) }
}
