package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
)

func TestDisabledPacks(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	steps := []struct {
		name        string
		disable     bool
		changed     bool
		wantBlocked bool
	}{
		{"web-fetch", true, true, true},
		{"web-fetch", true, false, true},
		{"web-fetch", false, true, false},
		{"web-fetch", false, false, false},
	}
	for i, s := range steps {
		changed, err := db.SetDisabled(ctx, s.name, s.disable)
		if err != nil || changed != s.changed {
			t.Fatalf("step %d: changed = %t, %v; want %t", i, changed, err, s.changed)
		}
		err = db.CheckEnabled(ctx, s.name)
		var de *capability.DeniedError
		blocked := errors.Is(err, store.ErrPackDisabled) && errors.Is(err, capability.ErrDenied) && errors.As(err, &de) && de.Layer == capability.LayerUser
		if blocked != s.wantBlocked || (err != nil && !blocked) {
			t.Fatalf("step %d: CheckEnabled = %v, want disabled %t", i, err, s.wantBlocked)
		}
	}
	// Another pack's state is its own.
	if _, err := db.SetDisabled(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckEnabled(ctx, "b"); err != nil {
		t.Errorf("b: %v", err)
	}
	all, err := db.DisabledPacks(ctx)
	if _, ok := all["a"]; err != nil || len(all) != 1 || !ok || all["a"].IsZero() {
		t.Errorf("DisabledPacks = %v, %v", all, err)
	}
}

// BenchmarkCheckEnabled is what every call of an installed pack's tool
// adds, next to the grant read it comes with (BenchmarkPeekGrants).
func BenchmarkCheckEnabled(b *testing.B) {
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "packs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.SetDisabled(ctx, "other", true); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := db.CheckEnabled(ctx, "web-fetch"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPeekGrants(b *testing.B) {
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "packs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.PutGrant(ctx, "web-fetch", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.PeekGrants(ctx, "web-fetch", "chat_1"); err != nil {
			b.Fatal(err)
		}
	}
}
