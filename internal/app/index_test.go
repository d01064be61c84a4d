package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
)

// openSettled opens home with a clock an hour ahead, so every file the
// test wrote is settled (dist.Home.Settled) and packs.db's index is used
// as it is once files are a few seconds old.
func openSettled(t *testing.T, home string) *App {
	t.Helper()
	a, err := Open(context.Background(), Options{Home: home, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// installSettled installs the packs named into a fresh home and returns it.
func installSettled(t *testing.T, names ...string) string {
	t.Helper()
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	a := openSettled(t, home)
	for _, name := range names {
		st, err := a.Home.Stage(ctx, writePack(t, name, "1.0.0"), dist.StageOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := installStaged(ctx, a, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	return home
}

// TestPacksFindTamperingThroughTheIndex: once a listing has recorded each
// folder's check in packs.db, the next listing reads no unchanged file, and
// still reports every way of changing a pack's files as modified or
// missing, while a folder replaced by an identical copy stays ok.
func TestPacksFindTamperingThroughTheIndex(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   Status
	}{
		{"same size, modification time put back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "SKILL.md")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			copy(data[len(data)-5:], "Evil\n")
			time.Sleep(10 * time.Millisecond) // file times advance in kernel ticks (≤ 4 ms): let one pass, as TestStampSame does
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, StatusModified},
		{"made executable", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "skill.toml"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, StatusModified},
		{"file added", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "extra.md"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, StatusModified},
		{"file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "skill.toml")); err != nil {
				t.Fatal(err)
			}
		}, StatusModified},
		{"file replaced by a symlink", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "SKILL.md")
			if err := os.Rename(p, filepath.Join(t.TempDir(), "SKILL.md")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("skill.toml", p); err != nil {
				t.Fatal(err)
			}
		}, StatusModified},
		{"folder removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, StatusMissing},
		{"folder replaced by an identical copy", func(t *testing.T, dir string) {
			cp := dir + ".copy"
			if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(cp, dir); err != nil {
				t.Fatal(err)
			}
		}, StatusOK},
	}
	names := []string{"alpha", "beta", "gamma", "delta"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := installSettled(t, names...)
			a := openSettled(t, home)
			list, err := a.Packs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, ip := range list {
				if ip.Status != StatusOK {
					t.Fatalf("%s before: status %s (%v)", ip.Entry.Name, ip.Status, ip.LoadErr)
				}
			}
			checks, err := a.DB.PackChecks(ctx)
			if err != nil || len(checks) != len(names) {
				t.Fatalf("recorded checks: %d, %v; want %d", len(checks), err, len(names))
			}
			a.Close()

			dir, _ := a.Home.PackDir("gamma")
			c.tamper(t, dir)
			b := openSettled(t, home)
			list, err = b.Packs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, ip := range list {
				want := StatusOK
				if ip.Entry.Name == "gamma" {
					want = c.want
				}
				if ip.Status != want {
					t.Errorf("%s: status %s, want %s", ip.Entry.Name, ip.Status, want)
				}
			}
		})
	}
}

// TestPacksDropChecksOfRemovedPacks: a removed pack's recorded check goes
// at the next listing.
func TestPacksDropChecksOfRemovedPacks(t *testing.T) {
	ctx := context.Background()
	home := installSettled(t, "alpha", "beta")
	a := openSettled(t, home)
	if _, err := a.Packs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remove(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Packs(ctx); err != nil {
		t.Fatal(err)
	}
	checks, err := a.DB.PackChecks(ctx)
	if _, ok := checks["beta"]; err != nil || ok || len(checks) != 1 {
		t.Fatalf("checks after removing beta: %v, %v; want alpha's only", checks, err)
	}
}

// TestEntryFromTheIndex: a lock entry looked up through packs.db is the
// entry packs.lock holds, every field; and once packs.lock is rewritten the
// table no longer answers for it, even when its rows were not updated.
func TestEntryFromTheIndex(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	if _, err := dist.OpenHome(ctx, home, dist.HomeOptions{}); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(home, "packs.lock")
	lf := &dist.Lockfile{}
	for i, name := range []string{"alpha", "beta", "gamma"} {
		e := dist.LockEntry{Name: name, Version: "1.0." + fmt.Sprint(i), Source: "file:///src/" + name,
			Integrity: fmt.Sprintf("sha256:%064x", i+1), Installed: time.Date(2026, 1, 2, 10, 0, 0, i, time.UTC)}
		switch name {
		case "beta":
			e.Signer, e.Resolved = "ssh-ed25519 AAAAbeta", "git:0123456789abcdef0123456789abcdef01234567"
			e.Capabilities = map[capability.Name]dist.LockCapability{
				capability.Network: {Granted: true, Resources: []string{"api.example.com", "*.example.org"}},
				capability.EnvRead: {Granted: false, Resources: []string{}},
			}
		case "gamma":
			e.Capabilities = map[capability.Name]dist.LockCapability{capability.EnvRead: {Granted: true, Resources: []string{"A_*"}}}
		}
		lf.Packs = append(lf.Packs, e)
	}
	if err := dist.WriteLock(lockPath, lf); err != nil {
		t.Fatal(err)
	}
	a := openSettled(t, home) // brings packs.db in line, with packs.lock's stamp
	for _, name := range []string{"alpha", "beta", "gamma"} {
		want, ok, err := dist.ReadLockEntry(lockPath, name)
		if err != nil || !ok {
			t.Fatal(name, ok, err)
		}
		got, err := a.Home.Entry(name)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("entry %s:\n got %+v, %v\nwant %+v", name, got, err, want)
		}
	}
	if _, err := a.Home.Entry("delta"); !errors.Is(err, dist.ErrNotInstalled) {
		t.Errorf("entry delta: %v, want ErrNotInstalled", err)
	}

	// The table answers for the packs.lock it was synced with: a row
	// changed behind packs.lock's back shows that the answer comes from it.
	if _, err := a.DB.SQL().ExecContext(ctx, `UPDATE packs SET version = 'from-db' WHERE name = 'alpha'`); err != nil {
		t.Fatal(err)
	}
	if got, err := openSettled(t, home).Home.Entry("alpha"); err != nil || got.Version != "from-db" {
		t.Fatalf("entry alpha through the index: %+v, %v; want version from-db", got, err)
	}
	// A rewritten packs.lock (another process's install) is read from the
	// file until packs.db is brought in line with it again.
	lf.Packs[0].Version = "2.0.0"
	if err := dist.WriteLock(lockPath, lf); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Home.Entry("alpha"); err != nil || got.Version != "2.0.0" {
		t.Fatalf("entry alpha after packs.lock changed: %+v, %v; want version 2.0.0", got, err)
	}
	if got, err := openSettled(t, home).Home.Entry("alpha"); err != nil || got.Version != "2.0.0" {
		t.Fatalf("entry alpha after the next start: %+v, %v; want version 2.0.0", got, err)
	}
}

// TestPacksRecordOnlySettledChecks: a folder whose files changed within the
// last tick is hashed at every listing, never recorded: a change in the
// same tick could keep every stamp (git's "racily clean" files).
func TestPacksRecordOnlySettledChecks(t *testing.T) {
	ctx := context.Background()
	home := installSettled(t, "alpha", "beta")
	a := open(t, home) // the real clock: the files were just written
	list, err := a.Packs(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d packs, %v", len(list), err)
	}
	checks, err := a.DB.PackChecks(ctx)
	if err != nil || len(checks) != 0 {
		t.Fatalf("checks recorded for files written just now: %v, %v", checks, err)
	}
	synced, stamp, err := a.DB.PacksSyncedWith(ctx)
	if err != nil || synced == "" || stamp != "" {
		t.Fatalf("lock sync for a packs.lock written just now: hash %q, stamp %q, %v; want a hash and no stamp", synced, stamp, err)
	}
}
