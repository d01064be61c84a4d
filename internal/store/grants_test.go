package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
)

var req = capability.Request{
	Network: []string{"api.example.com", "*.corp.example"},
	EnvRead: []string{"HOME"},
}

func resolve(t *testing.T, db *store.DB, chat string) capability.Grant {
	t.Helper()
	user, err := db.TakeGrants(context.Background(), "p", chat)
	if err != nil {
		t.Fatal(err)
	}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, user, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGrantLifecycle(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		db := openDB(t)

		if g := resolve(t, db, ""); g.Has(capability.Network) || !errors.Is(g.Host("api.example.com").Err(), capability.ErrNotGranted) {
			t.Fatal("network held before any grant")
		}
		if err := db.PutGrant(ctx, "p", "", capability.UserGrant{Capability: capability.Network, Resources: []string{"api.example.com"}, Scope: capability.ScopePersistent}); err != nil {
			t.Fatal(err)
		}
		g := resolve(t, db, "")
		if !g.Host("api.example.com").Allowed() || g.Host("x.corp.example").Allowed() {
			t.Fatal("narrowed persistent grant not applied")
		}
		// Widening the same grant replaces it.
		if err := db.PutGrant(ctx, "p", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
			t.Fatal(err)
		}
		if g := resolve(t, db, "chat-9"); !g.Host("x.corp.example").Allowed() {
			t.Fatal("widened grant not applied")
		}
		n, err := db.RevokeGrant(ctx, "p", capability.Network)
		if err != nil || n != 1 {
			t.Fatalf("RevokeGrant = %d, %v; want 1", n, err)
		}
		if err := resolve(t, db, "").Host("api.example.com").Err(); !errors.Is(err, capability.ErrRevoked) {
			t.Fatalf("after revoke: %v, want ErrRevoked", err)
		}
		rows, err := db.Grants(ctx, "p")
		if err != nil || len(rows) != 1 || rows[0].RevokedAt.IsZero() || rows[0].GrantedAt.IsZero() {
			t.Fatalf("Grants = %+v, %v", rows, err)
		}
		// Granting again lifts the revocation.
		if err := db.PutGrant(ctx, "p", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
			t.Fatal(err)
		}
		if !resolve(t, db, "").Host("api.example.com").Allowed() {
			t.Fatal("grant after revoke not applied")
		}
	})
}

func TestGrantScopes(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		db := openDB(t)
		put := func(chat string, g capability.UserGrant) {
			t.Helper()
			if err := db.PutGrant(ctx, "p", chat, g); err != nil {
				t.Fatal(err)
			}
		}
		put("chat-1", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopeChat})
		put("", capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopeOnce})

		peek, err := db.PeekGrants(ctx, "p", "chat-2", time.Time{})
		if err != nil || len(peek) != 1 || peek[0].Capability != capability.EnvRead {
			t.Fatalf("PeekGrants(chat-2) = %+v, %v; want the once grant only", peek, err)
		}
		if peek, _ := db.PeekGrants(ctx, "p", "chat-2", time.Time{}); len(peek) != 1 {
			t.Fatal("PeekGrants spent the once grant")
		}
		if g := resolve(t, db, "chat-2"); g.Has(capability.Network) {
			t.Error("a chat grant leaked into another chat")
		}
		// chat-2 spent the once grant of env_read.
		if g := resolve(t, db, "chat-1"); !g.Has(capability.Network) || g.Has(capability.EnvRead) {
			t.Errorf("chat-1 holds %v, want only network", g.Names())
		}
		put("chat-1", capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopeOnce})
		if g := resolve(t, db, "chat-1"); !g.Has(capability.EnvRead) || g.Scope() != capability.ScopeOnce {
			t.Errorf("once grant: holds %v scope %q", g.Names(), g.Scope())
		}
		if g := resolve(t, db, "chat-1"); g.Has(capability.EnvRead) {
			t.Error("a once grant served two calls")
		}
		if err := db.DeleteChatGrants(ctx, "chat-1"); err != nil {
			t.Fatal(err)
		}
		if g := resolve(t, db, "chat-1"); g.Has(capability.Network) {
			t.Error("DeleteChatGrants kept the chat grant")
		}
	})
}

func TestRevokeWithholdsPreApproval(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		db := openDB(t)
		pol, err := capability.ParsePolicy("p.toml", []byte("[[preapprove]]\npack = \"p\"\ngrants = [\"network\"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.RevokeGrant(ctx, "p", capability.Network)
		if err != nil || n != 0 {
			t.Fatalf("RevokeGrant with nothing granted = %d, %v", n, err)
		}
		user, err := db.TakeGrants(ctx, "p", "")
		if err != nil {
			t.Fatal(err)
		}
		g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, user, pol, capability.Env{})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Host("api.example.com").Err(); !errors.Is(err, capability.ErrRevoked) {
			t.Errorf("pre-approved but revoked: %v, want ErrRevoked", err)
		}
	})
}

func TestPutGrantRejects(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		db := openDB(t)
		tests := []struct {
			name string
			chat string
			g    capability.UserGrant
			want error
		}{
			{"unknown capability", "", capability.UserGrant{Capability: "teleport", Scope: capability.ScopePersistent}, capability.ErrBadSpec},
			{"no scope", "", capability.UserGrant{Capability: capability.Network}, capability.ErrBadSpec},
			{"bad resource", "", capability.UserGrant{Capability: capability.Network, Resources: []string{"http://x"}, Scope: capability.ScopePersistent}, capability.ErrBadSpec},
			{"chat grant without chat", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopeChat}, store.ErrNoChat},
		}
		for _, tt := range tests {
			if err := db.PutGrant(ctx, "p", tt.chat, tt.g); !errors.Is(err, tt.want) {
				t.Errorf("%s: PutGrant error = %v, want %v", tt.name, err, tt.want)
			}
		}
		if _, err := db.RevokeGrant(ctx, "p", "teleport"); err == nil {
			t.Error("RevokeGrant of an unknown capability: nil error")
		}
		if rows, _ := db.Grants(ctx, "p"); len(rows) != 0 {
			t.Errorf("rejected grants were stored: %+v", rows)
		}
	})
}

func TestDeleteGrantsAndLock(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		db := openDB(t)
		for _, g := range []capability.UserGrant{
			{Capability: capability.Network, Resources: []string{"api.example.com"}, Scope: capability.ScopePersistent},
			{Capability: capability.EnvRead, Scope: capability.ScopeChat},
		} {
			if err := db.PutGrant(ctx, "p", "c", g); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := db.Grants(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		lock := capability.ToLock(req, store.UserGrants(rows))
		if got := lock[capability.Network]; !got.Granted || !slices.Equal(got.Resources, []string{"api.example.com"}) {
			t.Errorf("lock network = %+v", got)
		}
		if lock[capability.EnvRead].Granted {
			t.Error("a chat grant was mirrored into the lock")
		}
		if err := db.DeleteGrants(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		if rows, _ := db.Grants(ctx, "p"); len(rows) != 0 {
			t.Errorf("DeleteGrants left %+v", rows)
		}
	})
}
