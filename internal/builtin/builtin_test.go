package builtin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/packs-run/packs/packs"
)

// Every built-in pack loads without a finding: a built-in that warned
// would warn every person on every start.
func TestPacksValidate(t *testing.T) {
	dir := t.TempDir()
	for _, name := range Names() {
		p, err := Write(name, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range packs.Validate(p, packs.LoadOptions{}) {
			t.Errorf("%s: %s", name, f)
		}
		pk, err := packs.Load(p, packs.LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := pk.Name, name; got != want {
			t.Errorf("pack name = %q, want %q", got, want)
		}
		_, hasModule := modules[name]
		if got, want := pk.HasTools(), hasModule; got != want {
			t.Errorf("%s: HasTools = %v, want %v", name, got, want)
		}
	}
	if got, want := len(Names()), 9; got != want {
		t.Errorf("%d built-in packs, want %d: %v", got, want, Names())
	}
}

// The digests compiled in are those of the packs Write lays out; a change
// to a pack's files without go generate fails here.
func TestDigests(t *testing.T) {
	dir := t.TempDir()
	for _, name := range Names() {
		p, err := Write(name, dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := packs.Digest(p)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := Digest(name)
		if !ok || got != want {
			t.Errorf("%s: digest %s, digests.go says %s: run go generate ./internal/builtin", name, got, want)
		}
	}
}

// The committed modules are built from guest/: rebuilding gives the same
// bytes. The build always runs (a guest that no longer compiles fails
// here); the bytes are compared only with the Go version that built the
// committed modules (wasm/GOVERSION), since another toolchain emits
// other code.
func TestModulesReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two Go modules for wasip1")
	}
	out := t.TempDir()
	cmd := exec.Command("sh", "build.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	same := goruntime.Version() == GoVersion()
	for _, file := range []string{"builtins.wasm", "web-fetch.wasm"} {
		built, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := content.ReadFile("wasm/" + file)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !same:
			t.Logf("%s: built with %s, committed with %s: bytes not compared", file, goruntime.Version(), GoVersion())
		case !bytes.Equal(built, committed):
			t.Errorf("%s: rebuilt from guest/ (%d bytes) differs from the committed module (%d bytes): run go generate ./internal/builtin and commit wasm/", file, len(built), len(committed))
		}
	}
}
