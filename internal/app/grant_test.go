package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// TestGrantRefusedFirst: a grant to a pack whose files changed since
// install is refused before packs.db or packs.lock change; a grant to an
// intact pack reaches both.
func TestGrantRefusedFirst(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	installWeather(t, a, nil)
	dir, err := a.Home.PackDir("weather")
	if err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, "SKILL.md")
	orig, err := os.ReadFile(skill)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, append(orig, "tampered\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	network := []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopePersistent}}
	if _, err := a.Grant(ctx, "weather", "", network); !errors.Is(err, packs.ErrModified) {
		t.Fatalf("grant to a modified pack: %v, want packs.ErrModified", err)
	}
	if rows, err := a.DB.Grants(ctx, "weather"); err != nil || len(rows) != 0 {
		t.Fatalf("packs.db holds %+v (%v) after a refused grant", rows, err)
	}
	if err := os.WriteFile(skill, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := a.Home.Entry("weather"); e.Capabilities[capability.Network].Granted {
		t.Fatal("packs.lock says network is granted after a refused grant")
	}
	e, err := a.Grant(ctx, "weather", "", network)
	if err != nil || !e.Capabilities[capability.Network].Granted {
		t.Fatalf("grant to the intact pack: %v, lock %+v", err, e.Capabilities)
	}
	if rows, err := a.DB.Grants(ctx, "weather"); err != nil || len(rows) != 1 {
		t.Fatalf("packs.db holds %+v (%v), want the one grant", rows, err)
	}
}

// TestFolderPackHoldsNoGrant: a pack run from a folder that takes an
// installed pack's name does not get that pack's grants.
func TestFolderPackHoldsNoGrant(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	e := installWeather(t, a, []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopePersistent}})
	g := Grants{DB: a.DB, Home: a.Home}
	if user, err := g.PeekGrants(ctx, capability.PackRef{Name: "weather", Digest: e.Integrity}, ""); err != nil || len(user) != 1 {
		t.Fatalf("the installed pack's grants: %v, %v", user, err)
	}
	for _, take := range []bool{false, true} {
		get := g.PeekGrants
		if take {
			get = g.TakeGrants
		}
		if user, err := get(ctx, capability.PackRef{Name: "weather"}, ""); err != nil || len(user) != 0 {
			t.Fatalf("a folder pack named weather holds %v (%v)", user, err)
		}
	}
}

// installWeather installs a pack named weather that asks for network, with
// grants.
func installWeather(t *testing.T, a *App, grants []capability.UserGrant) dist.LockEntry {
	t.Helper()
	src := writePack(t, "weather", "1.0.0")
	if err := os.WriteFile(filepath.Join(src, "skill.toml"), []byte("[capabilities]\nnetwork = [\"api.example.com\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := a.Home.Stage(context.Background(), src, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := installStaged(context.Background(), a, st, grants)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
