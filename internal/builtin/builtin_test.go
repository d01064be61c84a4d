package builtin

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"testing/fstest"

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
		f, err := os.Open(filepath.Join(out, file+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		built, err := gunzip(f, file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		committed, err := readModule(content, file)
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

// A damaged compressed module is refused with an error that names it, never
// written as a short or garbled module.
func TestDamagedModuleRefused(t *testing.T) {
	good, err := content.ReadFile("wasm/builtins.wasm.gz")
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	for name, gz := range map[string][]byte{
		"truncated": good[:len(good)/2],
		"flipped":   flipped, // gzip's CRC-32 catches it
		"not gzip":  []byte("\x00asm\x01\x00\x00\x00"),
	} {
		fsys := fstest.MapFS{"wasm/builtins.wasm.gz": {Data: gz}}
		dir := t.TempDir()
		err := copyModule(fsys, "builtins.wasm", dir)
		if err == nil || !strings.Contains(err.Error(), "builtins.wasm") {
			t.Errorf("%s: got %v, want an error naming the module", name, err)
		}
		if _, statErr := os.Stat(filepath.Join(dir, "builtins.wasm")); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("%s: a module was written", name)
		}
	}
}

// BenchmarkModule is what storing the modules gzipped costs: decompressing
// builtins.wasm (at install, once per pack that runs it) beside reading it
// stored plain.
func BenchmarkModule(b *testing.B) {
	plain, err := readModule(content, "builtins.wasm")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("packs", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if _, err := readModule(content, "builtins.wasm"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer=plain", func(b *testing.B) {
		fsys := fstest.MapFS{"builtins.wasm": {Data: plain}}
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if _, err := fsys.ReadFile("builtins.wasm"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
