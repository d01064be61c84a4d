package app

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
)

// TestReplaceGrants: the grants made at install replace every earlier grant
// of the pack in packs.db, chat grants too, and packs.lock mirrors them; an
// unknown pack is an error wrapping dist.ErrNotInstalled.
func TestReplaceGrants(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	st, err := a.Home.Stage(ctx, writePack(t, "weather", "1.0.0"), dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := installStaged(ctx, a, st, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.PutGrant(ctx, "weather", "c1", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopeChat}); err != nil {
		t.Fatal(err)
	}
	net := capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}
	tests := []struct {
		name   string
		grants []capability.UserGrant
		want   bool
	}{
		{"grant network", []capability.UserGrant{net}, true},
		{"grant nothing", nil, false},
	}
	for _, tt := range tests {
		e, err := a.ReplaceGrants(ctx, "weather", tt.grants)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		lock, err := a.Home.Entry("weather")
		if err != nil {
			t.Fatal(err)
		}
		for what, got := range map[string]dist.LockCapability{"returned": e.Capabilities[capability.Network], "packs.lock": lock.Capabilities[capability.Network]} {
			if got.Granted != tt.want {
				t.Errorf("%s: %s entry network = %+v, want granted %v", tt.name, what, got, tt.want)
			}
		}
		rows, err := a.DB.Grants(ctx, "weather")
		if err != nil {
			t.Fatal(err)
		}
		var live []capability.UserGrant
		for _, r := range rows {
			if r.RevokedAt.IsZero() {
				live = append(live, capability.UserGrant{Capability: r.Capability, Resources: r.Resources, Scope: r.Scope})
			}
		}
		if !slices.EqualFunc(live, tt.grants, func(x, y capability.UserGrant) bool { return x.Capability == y.Capability && x.Scope == y.Scope }) {
			t.Errorf("%s: packs.db holds %+v, want %+v", tt.name, live, tt.grants)
		}
	}
	if _, err := a.ReplaceGrants(ctx, "nosuch", nil); !errors.Is(err, dist.ErrNotInstalled) {
		t.Errorf("ReplaceGrants of an unknown pack: got %v, want ErrNotInstalled", err)
	}
}
