package app

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// benchApp is a home with eight installed packs.
func benchApp(b *testing.B) *App {
	a, err := Open(context.Background(), Options{Home: filepath.Join(b.TempDir(), "home")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	for i := range 8 {
		installWith(b, a, fmt.Sprintf("pack-%d", i), "")
	}
	return a
}

// BenchmarkPacks is the peer of BenchmarkCapabilities: the listing of
// GET /v1/packs (each pack verified and loaded).
func BenchmarkPacks(b *testing.B) {
	a := benchApp(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.Packs(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCapabilities is GET /v1/capabilities: the same listing, mapped
// and sorted.
func BenchmarkCapabilities(b *testing.B) {
	a := benchApp(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.Capabilities(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateAgent checks three capabilities and writes the agent.
func BenchmarkUpdateAgent(b *testing.B) {
	a := benchApp(b)
	ctx := context.Background()
	if _, err := a.CreateAgent(ctx, AgentChange{Name: str("B")}); err != nil {
		b.Fatal(err)
	}
	caps := []string{"pack-1", "pack-4", "pack-7"}
	for b.Loop() {
		if _, err := a.UpdateAgent(ctx, "B", AgentChange{Capabilities: caps}); err != nil {
			b.Fatal(err)
		}
	}
}
