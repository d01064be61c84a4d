package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
)

// writePack writes a pack that asks for network.
func writePack(t *testing.T, name, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: A test pack.\n---\nBody.\n",
		"skill.toml": "[skill]\nid = \"test." + name + "\"\nname = \"" + name + "\"\nversion = \"" + version + "\"\ndescription = \"t\"\napi_version = \"1.0\"\n\n[capabilities]\nnetwork = [\"api.example.com\"]\n",
	}
	for rel, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func open(t *testing.T, home string) *App {
	t.Helper()
	a, err := Open(context.Background(), Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestInstallMirrorsIntoDBAndRunsHooks(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	var installed []dist.LockEntry
	var removed []string
	a.Installed = append(a.Installed, func(_ context.Context, e dist.LockEntry) error { installed = append(installed, e); return nil })
	a.Removed = append(a.Removed, func(_ context.Context, name string) error { removed = append(removed, name); return nil })

	st, err := a.Home.Stage(ctx, writePack(t, "weather", "1.0.0"), dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := installStaged(ctx, a, st, whole(capability.Network))
	if err != nil {
		t.Fatal(err)
	}
	row, err := a.DB.Pack(ctx, "weather")
	if err != nil {
		t.Fatal(err)
	}
	if row.Integrity != e.Integrity || row.Version != "1.0.0" || !row.Capabilities["network"].Granted {
		t.Errorf("row: got %+v, want the lock entry %+v", row, e)
	}
	if len(installed) != 1 || installed[0].Name != "weather" || installed[0].Granted()[0] != capability.Network {
		t.Errorf("Installed hook: got %+v", installed)
	}

	list, err := a.Packs(ctx)
	if err != nil || len(list) != 1 || list[0].Status != StatusOK || list[0].Pack == nil || list[0].Pack.Name != "weather" {
		t.Fatalf("Packs: got %+v, %v", list, err)
	}

	if _, err := a.Remove(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.Pack(ctx, "weather"); !errors.Is(err, store.ErrPackNotFound) {
		t.Errorf("row after remove: %v", err)
	}
	if len(removed) != 1 || removed[0] != "weather" {
		t.Errorf("Removed hook: got %v", removed)
	}
	if _, err := a.Pack(ctx, "weather"); !errors.Is(err, dist.ErrNotInstalled) {
		t.Errorf("Pack after remove: got %v, want ErrNotInstalled", err)
	}
}

// TestOpenRepairsDB: packs.lock is the source of truth; a packs.db that
// drifted from it (a crash between the two writes, a deleted database) is
// rewritten at the next Open.
func TestOpenRepairsDB(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	a := open(t, home)
	st, err := a.Home.Stage(ctx, writePack(t, "weather", "1.0.0"), dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := installStaged(ctx, a, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.DB.DeletePack(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.PutPack(ctx, store.PackRow{Name: "ghost", Source: "x", Integrity: "sha256:00"}); err != nil {
		t.Fatal(err)
	}
	a.Close()

	b := open(t, home)
	rows, err := b.DB.Packs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Name != "weather" || rows[0].Integrity != e.Integrity || !rows[0].InstalledAt.Equal(e.Installed) {
		t.Fatalf("rows after reopen: %+v", rows)
	}
}

func TestStatuses(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	for _, name := range []string{"alpha", "beta", "gamma"} {
		st, err := a.Home.Stage(ctx, writePack(t, name, "1.0.0"), dist.StageOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := installStaged(ctx, a, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := func(n string) string { d, _ := a.Home.PackDir(n); return d }
	if err := os.WriteFile(filepath.Join(dir("beta"), "SKILL.md"), []byte("---\nname: beta\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir("gamma")); err != nil {
		t.Fatal(err)
	}
	list, err := a.Packs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"alpha": StatusOK, "beta": StatusModified, "gamma": StatusMissing}
	for _, ip := range list {
		if ip.Status != want[ip.Entry.Name] {
			t.Errorf("%s: status %s, want %s", ip.Entry.Name, ip.Status, want[ip.Entry.Name])
		}
	}
	beta, err := a.Pack(ctx, "beta")
	if err != nil {
		t.Fatal(err)
	}
	if beta.Pack != nil || beta.LoadErr == nil {
		t.Errorf("beta lost its description and should not load: %+v", beta)
	}
}

func TestOpenNeedsHome(t *testing.T) {
	if _, err := Open(context.Background(), Options{}); err == nil {
		t.Fatal("Open without a home succeeded")
	}
}

// TestRemoveForgetsGrants: a removed pack keeps no grant in packs.db, its
// persistent grants nor those made in a chat, whichever front end removed
// it (packs remove, the web app): the rule is Remove's, not a front end's.
func TestRemoveForgetsGrants(t *testing.T) {
	ctx := context.Background()
	a := open(t, filepath.Join(t.TempDir(), "home"))
	st, err := a.Home.Stage(ctx, writePack(t, "weather", "1.0.0"), dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := installStaged(ctx, a, st, whole(capability.Network)); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.PutGrant(ctx, "weather", "chat_1", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopeChat}); err != nil {
		t.Fatal(err)
	}
	if rows, err := a.DB.Grants(ctx, "weather"); err != nil || len(rows) != 2 {
		t.Fatalf("grants before remove: got %d, %v; want 2", len(rows), err)
	}
	if _, err := a.Remove(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if rows, err := a.DB.Grants(ctx, "weather"); err != nil || len(rows) != 0 {
		t.Errorf("grants after remove: got %+v, %v; want none", rows, err)
	}
}
