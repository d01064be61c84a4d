package app

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkOpen measures what EnsureBuiltins adds to opening a home whose
// built-ins are current (it reads packs.lock and compares digests), against
// its peer, the same open without it.
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	home := filepath.Join(b.TempDir(), "home")
	a, err := Open(ctx, Options{Home: home, Builtins: true})
	if err != nil {
		b.Fatal(err)
	}
	a.Close()
	for _, bc := range []struct {
		name     string
		builtins bool
	}{{"plain", false}, {"builtins-current", true}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				a, err := Open(ctx, Options{Home: home, Builtins: bc.builtins})
				if err != nil {
					b.Fatal(err)
				}
				a.Close()
			}
		})
	}
}

// BenchmarkEnsureBuiltinsFresh is the first open of a new home: every
// built-in staged, validated and committed.
func BenchmarkEnsureBuiltinsFresh(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		a, err := Open(ctx, Options{Home: filepath.Join(b.TempDir(), "home"), Builtins: true})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}
