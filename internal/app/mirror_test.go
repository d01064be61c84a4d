package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// TestMirrorGrants: the grants in packs.db are mirrored into the pack's
// lock entry and its packs.db row, a narrowed grant with its resources, a
// revoke as not granted, chat grants not at all; the integrity stays.
func TestMirrorGrants(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	src := writePack(t, "weather", "1.0.0")
	if err := os.WriteFile(filepath.Join(src, "skill.toml"), []byte("[skill]\nid = \"test.weather\"\nname = \"weather\"\nversion = \"1.0.0\"\ndescription = \"t\"\napi_version = \"1.0\"\n\n[capabilities]\nnetwork = [\"*.example.com\"]\nenv_read = [\"W_*\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := a.Home.Stage(ctx, src, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	installed, err := installStaged(ctx, a, st, []capability.UserGrant{{Capability: capability.Network, Resources: []string{"api.example.com"}, Scope: capability.ScopePersistent}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string, want map[capability.Name]dist.LockCapability) {
		t.Helper()
		e, err := a.Home.Entry("weather")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []capability.Name{capability.Network, capability.EnvRead} {
			got, w := e.Capabilities[n], want[n]
			if got.Granted != w.Granted || !slices.Equal(got.Resources, w.Resources) {
				t.Errorf("%s: lock %s = %+v, want %+v", step, n, got, w)
			}
			row, err := a.DB.Pack(ctx, "weather")
			if err != nil || row.Capabilities[string(n)].Granted != w.Granted || !slices.Equal(row.Capabilities[string(n)].Resources, w.Resources) {
				t.Errorf("%s: packs.db %s = %+v, %v; want %+v", step, n, row.Capabilities[string(n)], err, w)
			}
		}
		if e.Integrity != installed.Integrity || a.Home.Verify("weather") != nil {
			t.Errorf("%s: integrity changed or no longer verifies: %s, was %s", step, e.Integrity, installed.Integrity)
		}
	}
	check("install", map[capability.Name]dist.LockCapability{capability.Network: {Granted: true, Resources: []string{"api.example.com"}}})

	if err := a.DB.PutGrant(ctx, "weather", "", capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopePersistent}); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.PutGrant(ctx, "weather", "", capability.UserGrant{Capability: capability.Network, Resources: []string{"api.example.com"}, Scope: capability.ScopePersistent}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MirrorGrants(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	check("grant env_read", map[capability.Name]dist.LockCapability{
		capability.Network: {Granted: true, Resources: []string{"api.example.com"}},
		capability.EnvRead: {Granted: true, Resources: []string{"W_*"}},
	})

	if _, err := a.DB.RevokeGrant(ctx, "weather", capability.Network); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.PutGrant(ctx, "weather", "c1", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopeChat}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MirrorGrants(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	check("revoke network, grant it for one chat", map[capability.Name]dist.LockCapability{
		capability.EnvRead: {Granted: true, Resources: []string{"W_*"}},
	})

	// A modified pack is not mirrored: its skill.toml cannot be trusted.
	dir, _ := a.Home.PackDir("weather")
	if err := os.WriteFile(filepath.Join(dir, "skill.toml"), []byte("[skill]\nid = \"test.weather\"\nname = \"weather\"\nversion = \"1.0.0\"\ndescription = \"t\"\napi_version = \"1.0\"\n\n[capabilities]\nnetwork = [\"*\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(a.Home.LockPath())
	if _, err := a.MirrorGrants(ctx, "weather"); !errors.Is(err, packs.ErrModified) {
		t.Errorf("MirrorGrants of a modified pack: got %v, want ErrModified", err)
	}
	if after, _ := os.ReadFile(a.Home.LockPath()); string(after) != string(before) {
		t.Errorf("packs.lock changed for a modified pack:\n%s", after)
	}
	if _, err := a.MirrorGrants(ctx, "nosuch"); !errors.Is(err, dist.ErrNotInstalled) {
		t.Errorf("MirrorGrants of an unknown pack: got %v, want ErrNotInstalled", err)
	}
}
