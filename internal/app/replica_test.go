package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/testpg"
)

// openReplica opens a fresh state directory on the shared store url, as
// packs serve does (built-ins installed), with the audit key of first
// copied in (docs/deploy.md) when there is a first replica.
func openReplica(t *testing.T, url string, first ...*App) *App {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	for _, f := range first {
		key, err := os.ReadFile(filepath.Join(f.AuditKeyDir(), audit.KeyFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, audit.KeyFile), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Open(context.Background(), Options{Home: home, Store: url, Builtins: true, ModuleCache: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// callGrants is what a call of the installed pack name holds on replica
// a: the grants the pipeline takes for it.
func callGrants(t *testing.T, a *App, name string) ([]capability.UserGrant, error) {
	t.Helper()
	e, err := a.Home.Entry(name)
	if err != nil {
		t.Fatal(err)
	}
	return a.Grants().TakeGrants(context.Background(), e.Ref(), "")
}

// holds reports whether grants hold a live grant of n.
func holds(grants []capability.UserGrant, n capability.Name) bool {
	return slices.ContainsFunc(grants, func(u capability.UserGrant) bool { return u.Capability == n && !u.Revoked })
}

// installOn installs the pack folder src on a with grants, through the
// installer's commit.
func installOn(t *testing.T, a *App, src string, grants []capability.UserGrant) dist.LockEntry {
	t.Helper()
	st, err := a.Home.Stage(context.Background(), src, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Discard()
	e, err := installStaged(context.Background(), a, st, grants)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestReplicasKeepGrants: replicas on one PostgreSQL store share the
// person's grants, and no replica's own packs.lock rewrites them. A fresh
// replica starting (which installs the built-ins into its own state
// directory) keeps a built-in's grant made on another; a replica
// installing the content the store already records keeps the grants made
// on the others; a replica whose copy of a pack is not the content the
// store records (another replica installed a new version) runs nothing of
// it and grants nothing to it until it installs that content.
func TestReplicasKeepGrants(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx := context.Background()
	url := testpg.URL(t)
	a := openReplica(t, url)
	network := []capability.UserGrant{{Capability: capability.Network, Resources: []string{"example.com"}, Scope: capability.ScopePersistent}}
	if _, err := a.Grant(ctx, "web-fetch", "", network); err != nil {
		t.Fatal(err)
	}

	c := openReplica(t, url, a) // a fresh replica: it installs the built-ins here
	for _, r := range []*App{a, c} {
		got, err := callGrants(t, r, "web-fetch")
		if err != nil || !holds(got, capability.Network) {
			t.Errorf("after a fresh replica started, web-fetch holds %+v (%v): want the network grant made on the first", got, err)
		}
	}

	// What a replica shows of a pack is the store's grants, not its own
	// packs.lock's mirror of them: a revocation on A, then a grant again.
	shows := func(r *App) bool {
		t.Helper()
		ip, err := r.Pack(ctx, "web-fetch")
		if err != nil || ip.Status != StatusOK {
			t.Fatalf("web-fetch: %s (%v)", ip.Status, err)
		}
		return ip.Entry.Capabilities[capability.Network].Granted
	}
	if _, err := a.DB.RevokeGrant(ctx, "web-fetch", capability.Network); err != nil {
		t.Fatal(err)
	}
	if shows(c) {
		t.Error("C shows web-fetch's network grant revoked on A")
	}
	if _, err := a.Grant(ctx, "web-fetch", "", network); err != nil {
		t.Fatal(err)
	}
	if !shows(c) {
		t.Error("C shows web-fetch without the network grant made on A")
	}

	// The same content installed on a second replica keeps the grant.
	src := writePack(t, "weather", "1.0.0")
	installOn(t, a, src, whole(capability.Network))
	b := openReplica(t, url, a)
	installOn(t, b, src, nil)
	for _, r := range []*App{a, b} {
		got, err := callGrants(t, r, "weather")
		if err != nil || !holds(got, capability.Network) {
			t.Errorf("after the same weather was installed on B, it holds %+v (%v): want the grant made on A", got, err)
		}
	}

	// Installed again with the same grant, the grant is not written
	// again: its review counts from when the person made it.
	before, err := a.DB.Grants(ctx, "weather")
	if err != nil || len(before) != 1 {
		t.Fatalf("the store holds %+v (%v), want one grant", before, err)
	}
	installOn(t, b, src, whole(capability.Network))
	if after, err := a.DB.Grants(ctx, "weather"); err != nil || len(after) != 1 || !after[0].GrantedAt.Equal(before[0].GrantedAt) {
		t.Errorf("after the same grant was consented on B, the store holds %+v (%v), want %+v as it was", after, err, before)
	}

	// New content installed on B is a new decision, B's: A's older copy
	// runs nothing, holds nothing and takes no grant until A installs it.
	v2 := writePack(t, "weather", "2.0.0")
	installOn(t, b, v2, nil)
	if got, err := callGrants(t, b, "weather"); err != nil || holds(got, capability.Network) {
		t.Fatalf("B's weather 2.0.0, installed with nothing granted, holds %+v (%v)", got, err)
	}
	got, err := callGrants(t, a, "weather")
	if !errors.Is(err, ErrNotStoreContent) || !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("A's weather 1.0.0, after B installed 2.0.0: holds %+v (%v), want a denial wrapping ErrNotStoreContent", got, err)
	}
	listed, err := a.Listing(ctx)
	if i := slices.IndexFunc(listed, func(p InstalledPack) bool { return p.Entry.Name == "weather" }); err != nil || i < 0 || listed[i].Status != StatusStale {
		t.Errorf("A lists %+v (%v): want weather stale", listed, err)
	}
	if _, err := a.Grant(ctx, "weather", "", network); !errors.Is(err, ErrNotStoreContent) {
		t.Fatalf("a grant to A's stale weather: %v, want ErrNotStoreContent", err)
	}
	if rows, err := b.DB.Grants(ctx, "weather"); err != nil || len(rows) != 0 {
		t.Fatalf("the store holds %+v (%v) after a refused grant", rows, err)
	}
	// Removing the stale copy removes it from A only.
	if _, err := a.Remove(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if r, err := b.DB.Pack(ctx, "weather"); err != nil || r.Version != "2.0.0" {
		t.Fatalf("the store records weather %+v (%v) after A removed its stale copy: want B's 2.0.0", r, err)
	}
	installOn(t, a, v2, nil)
	if got, err := callGrants(t, a, "weather"); err != nil || holds(got, capability.Network) {
		t.Fatalf("A's weather 2.0.0: holds %+v (%v), want B's decision: nothing", got, err)
	}

	// A pack removed on one replica is gone for all of them.
	if _, err := b.Remove(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if got, err := callGrants(t, a, "weather"); !errors.Is(err, ErrNotStoreContent) {
		t.Fatalf("A's weather after B removed it: %+v (%v), want ErrNotStoreContent", got, err)
	}
}

// TestReplicaRefusesPackStoreLacks: a pack in a replica's packs.lock
// that the shared store does not record (installed before the replica
// joined, or removed on another replica) is not written into the store
// when the replica opens, and does not run.
func TestReplicaRefusesPackStoreLacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	solo := open(t, home) // packs.db in the state directory
	installWeather(t, solo, whole(capability.Network))
	solo.Close()
	if _, err := os.Stat(filepath.Join(home, "packs.lock")); err != nil {
		t.Fatal(err)
	}
	url := testpg.URL(t)
	a, err := Open(ctx, Options{Home: home, Store: url, ModuleCache: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.DB.Pack(ctx, "weather"); err == nil {
		t.Fatal("opening the shared store wrote this replica's weather into it")
	}
	got, err := callGrants(t, a, "weather")
	if !errors.Is(err, ErrNotStoreContent) {
		t.Fatalf("weather, which the store does not record: holds %+v (%v), want ErrNotStoreContent", got, err)
	}
}

// TestFreshReplicaOfAnotherVersion: a fresh replica whose binary carries
// another version of a built-in than the one the shared store records
// (installed by a replica of another version of packs) installs it in its
// own state directory only: the store's record and grants stay, and the
// replica refuses the built-in until the replicas run one version.
func TestFreshReplicaOfAnotherVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx := context.Background()
	url := testpg.URL(t)
	a := openReplica(t, url)
	network := []capability.UserGrant{{Capability: capability.Network, Resources: []string{"example.com"}, Scope: capability.ScopePersistent}}
	if _, err := a.Grant(ctx, "web-fetch", "", network); err != nil {
		t.Fatal(err)
	}
	// The record a replica of another version would have written.
	other, err := a.DB.Pack(ctx, "web-fetch")
	if err != nil {
		t.Fatal(err)
	}
	other.Integrity, other.Version = "sha256:"+strings.Repeat("ab", 32), "9.9.9"
	if err := a.DB.PutPack(ctx, other); err != nil {
		t.Fatal(err)
	}

	c := openReplica(t, url, a)
	if r, err := c.DB.Pack(ctx, "web-fetch"); err != nil || r.Integrity != other.Integrity {
		t.Fatalf("the store records web-fetch %+v (%v) after a fresh replica started: want the other version's record kept", r, err)
	}
	if rows, err := c.DB.Grants(ctx, "web-fetch"); err != nil || !holds(store.UserGrants(rows), capability.Network) {
		t.Fatalf("the store holds %+v (%v) after a fresh replica started: want the network grant kept", rows, err)
	}
	if got, err := callGrants(t, c, "web-fetch"); !errors.Is(err, ErrNotStoreContent) {
		t.Fatalf("the fresh replica's web-fetch holds %+v (%v): want ErrNotStoreContent", got, err)
	}
}
