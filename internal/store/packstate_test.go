package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
)

func TestDisabledPacks(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
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
	})
}

// BenchmarkCheckEnabled is the disabled check alone, as the catalog makes
// it; a call of an installed pack's tool makes it in its grant read
// (BenchmarkCallGrants), which used to be this and BenchmarkPeekGrants.
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
		if _, err := db.PeekGrants(ctx, "web-fetch", "chat_1", time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallGrants is the one read of the person's state that a call
// of an installed pack's tool makes: disabled or not, and its grants.
func BenchmarkCallGrants(b *testing.B) {
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "packs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.SetDisabled(ctx, "other", true); err != nil {
		b.Fatal(err)
	}
	if err := db.PutGrant(ctx, "web-fetch", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.CallGrants(ctx, "web-fetch", "chat_1", false, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCallGrants checks the one read of a call: a disabled pack is refused
// whether it holds grants or none (its row then carries no grant), nothing
// is spent for it, and an enabled pack gets what PeekGrants and TakeGrants
// give, the once grant spent only by take.
func TestCallGrants(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		tests := []struct {
			name       string
			grants     bool // the pack holds a persistent and a once grant
			disabled   bool
			take       bool
			want       []capability.Name
			wantDenied bool
			wantOnce   bool // the once grant is still there afterwards
		}{
			{name: "no grants", want: nil},
			{name: "no grants, take", take: true, want: nil},
			{name: "no grants, disabled", disabled: true, wantDenied: true},
			{name: "no grants, disabled, take", disabled: true, take: true, wantDenied: true},
			{name: "grants", grants: true, want: []capability.Name{capability.EnvRead, capability.Network}, wantOnce: true},
			{name: "grants, take", grants: true, take: true, want: []capability.Name{capability.EnvRead, capability.Network}},
			{name: "grants, disabled", grants: true, disabled: true, wantDenied: true, wantOnce: true},
			{name: "grants, disabled, take", grants: true, disabled: true, take: true, wantDenied: true, wantOnce: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				db := openDB(t)
				if tt.grants {
					for _, g := range []capability.UserGrant{
						{Capability: capability.Network, Scope: capability.ScopePersistent},
						{Capability: capability.EnvRead, Scope: capability.ScopeOnce},
					} {
						if err := db.PutGrant(ctx, "p", "", g); err != nil {
							t.Fatal(err)
						}
					}
				}
				// Another pack's state and another chat's grants are not p's.
				if _, err := db.SetDisabled(ctx, "other", true); err != nil {
					t.Fatal(err)
				}
				if err := db.PutGrant(ctx, "p", "chat-2", capability.UserGrant{Capability: capability.FilesystemRead, Scope: capability.ScopeChat}); err != nil {
					t.Fatal(err)
				}
				if _, err := db.SetDisabled(ctx, "p", tt.disabled); err != nil {
					t.Fatal(err)
				}
				got, err := db.CallGrants(ctx, "p", "chat-1", tt.take, time.Time{})
				if denied := errors.Is(err, store.ErrPackDisabled) && errors.Is(err, capability.ErrDenied); denied != tt.wantDenied || (err != nil && !denied) {
					t.Fatalf("CallGrants = %v, %v; want denied %t", got, err, tt.wantDenied)
				}
				var names []capability.Name
				for _, g := range got {
					names = append(names, g.Capability)
				}
				if !slices.Equal(names, tt.want) {
					t.Errorf("CallGrants = %v, want %v", names, tt.want)
				}
				left, err := db.PeekGrants(ctx, "p", "chat-1", time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				once := slices.ContainsFunc(left, func(g capability.UserGrant) bool { return g.Scope == capability.ScopeOnce })
				if once != tt.wantOnce {
					t.Errorf("once grant left = %t, want %t", once, tt.wantOnce)
				}
			})
		}
	})
}
