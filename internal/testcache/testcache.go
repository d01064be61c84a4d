// Package testcache is the compiled-module cache the tests of every package
// share, so that a fresh test home does not compile the same WebAssembly
// again (the built-in packs alone are 9 MB of it). Entries are keyed by the
// module's digest and the compiler's version, so sharing never mixes two
// modules; a test that checks the cache itself uses its own folder.
// Only tests import it.
package testcache

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Dir is the shared cache: app.Options.ModuleCache, dist.HomeOptions.ModuleCache,
// runtime.Config.CacheDir, or PACKS_CACHE for a packs process a test starts.
func Dir() string { return filepath.Join(os.TempDir(), "packs-test-modules") }

// Builtins compiles the built-in packs installed in home into rt's cache
// ahead of a test's timed part: a deadline that includes a compile is a
// flake on a loaded machine, so the test loads them instead.
func Builtins(tb testing.TB, rt *runtime.Runtime, home *dist.Home) {
	tb.Helper()
	for _, name := range builtin.Names() {
		dir, err := home.PackDir(name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := os.Stat(dir); err != nil {
			continue // not installed in this home (the policy may block one)
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			tb.Fatalf("built-in %s: %v", name, err)
		}
		if err := rt.Precompile(context.Background(), p); err != nil {
			tb.Fatalf("built-in %s: %v", name, err)
		}
	}
}
