package dist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestCommitGrants installs with grants as a person writes them: a narrowed
// grant is recorded with exactly its resources, and anything wider than the
// request, unrequested or not persistent is refused with nothing installed.
func TestCommitGrants(t *testing.T) {
	parent := t.TempDir()
	src := writePack(t, parent, "weather", "1.0.0") // network [api.example.com], env_read [LANG, LC_*]
	persistent := func(n capability.Name, res ...string) capability.UserGrant {
		return capability.UserGrant{Capability: n, Resources: res, Scope: capability.ScopePersistent}
	}
	tests := []struct {
		name    string
		grants  []capability.UserGrant
		want    map[capability.Name]LockCapability
		wantErr error
	}{
		{"nothing granted", nil, map[capability.Name]LockCapability{
			capability.Network: {}, capability.EnvRead: {},
		}, nil},
		{"everything requested", []capability.UserGrant{persistent(capability.Network), persistent(capability.EnvRead)}, map[capability.Name]LockCapability{
			capability.Network: {Granted: true, Resources: []string{"api.example.com"}},
			capability.EnvRead: {Granted: true, Resources: []string{"LANG", "LC_*"}},
		}, nil},
		{"narrowed to one variable", []capability.UserGrant{persistent(capability.EnvRead, "LC_ALL")}, map[capability.Name]LockCapability{
			capability.Network: {},
			capability.EnvRead: {Granted: true, Resources: []string{"LC_ALL"}},
		}, nil},
		{"wider than the request", []capability.UserGrant{persistent(capability.Network, "evil.example")}, nil, capability.ErrBadSpec},
		{"not requested", []capability.UserGrant{persistent(capability.SecretsAccess)}, nil, ErrNotRequested},
		{"chat scope", []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopeChat}}, nil, capability.ErrBadSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
			st, err := h.Stage(context.Background(), src, StageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Discard()
			e, err := st.CommitGrants(context.Background(), tt.grants)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				if l, _ := h.ReadLock(); len(l.Packs) != 0 {
					t.Errorf("installed despite the refused grant: %+v", l.Packs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := LockEntry{Name: e.Name, Version: e.Version, Source: e.Source, Integrity: e.Integrity, Installed: e.Installed, Capabilities: tt.want}
			got, err := h.Entry("weather")
			if err != nil || !got.equal(want) {
				t.Errorf("lock entry: got %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

// readLockBytes returns packs.lock as it is on disk.
func readLockBytes(t *testing.T, h *Home) []byte {
	t.Helper()
	b, err := os.ReadFile(h.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// set is SetCapabilities with fixed capabilities.
func set(h *Home, name string, caps map[capability.Name]LockCapability) (LockEntry, error) {
	return h.SetCapabilities(context.Background(), name, func(LockEntry) (map[capability.Name]LockCapability, error) { return caps, nil })
}

func TestSetCapabilities(t *testing.T) {
	h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
	before := install(t, h, writePack(t, t.TempDir(), "weather", "1.0.0"))
	st, err := h.Stage(context.Background(), writePack(t, t.TempDir(), "weather", "1.0.0"), StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := st.Pack.Request()
	st.Discard()

	// A narrowed grant, mirrored through capability.ToLock.
	grants := []capability.UserGrant{{Capability: capability.EnvRead, Resources: []string{"LANG"}, Scope: capability.ScopePersistent}}
	e, err := set(h, "weather", capability.ToLock(req, grants))
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := ReadLock(h.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := onDisk.Entry("weather")
	if !got.equal(e) || !slices.Equal(got.Granted(), []capability.Name{capability.EnvRead}) ||
		!slices.Equal(got.Capabilities[capability.EnvRead].Resources, []string{"LANG"}) || got.Capabilities[capability.Network].Granted {
		t.Errorf("after the grant: got %+v, returned %+v", got, e)
	}
	// Only the capabilities changed: the digest still covers the files.
	if got.Integrity != before.Integrity || !got.Installed.Equal(before.Installed) || got.Source != before.Source || got.Version != before.Version {
		t.Errorf("SetCapabilities changed more than capabilities: before %+v, after %+v", before, got)
	}
	if err := h.Verify("weather"); err != nil {
		t.Errorf("Verify after SetCapabilities: %v", err)
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ not empty: %v", left)
	}

	// A revoked grant is mirrored as not granted, every capability listed.
	grants[0].Revoked = true
	if e, err = set(h, "weather", capability.ToLock(req, grants)); err != nil || len(e.Granted()) != 0 || len(e.Requested()) != 2 {
		t.Errorf("after the revoke: %+v, %v", e, err)
	}

	// Capabilities left out become not granted; the file is not rewritten
	// when nothing changes.
	fi1, _ := os.Stat(h.LockPath())
	if e, err = set(h, "weather", nil); err != nil || len(e.Requested()) != 2 {
		t.Errorf("no-op: %+v, %v", e, err)
	}
	if fi2, _ := os.Stat(h.LockPath()); !os.SameFile(fi1, fi2) {
		t.Error("a no-op SetCapabilities rewrote packs.lock")
	}

	// Refusals leave packs.lock as it was.
	unchanged := readLockBytes(t, h)
	errCompute := errors.New("compute failed")
	refusals := []struct {
		name    string
		pack    string
		compute func(LockEntry) (map[capability.Name]LockCapability, error)
		want    error
	}{
		{"not installed", "nosuch", func(LockEntry) (map[capability.Name]LockCapability, error) { return nil, nil }, ErrNotInstalled},
		{"not requested", "weather", func(LockEntry) (map[capability.Name]LockCapability, error) {
			return map[capability.Name]LockCapability{capability.SecretsAccess: {Granted: true}}, nil
		}, ErrNotRequested},
		{"resources without a grant", "weather", func(LockEntry) (map[capability.Name]LockCapability, error) {
			return map[capability.Name]LockCapability{capability.Network: {Resources: []string{"api.example.com"}}}, nil
		}, ErrLockInvalid},
		{"compute fails", "weather", func(LockEntry) (map[capability.Name]LockCapability, error) { return nil, errCompute }, errCompute},
	}
	for _, tt := range refusals {
		if _, err := h.SetCapabilities(context.Background(), tt.pack, tt.compute); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
		if got := readLockBytes(t, h); string(got) != string(unchanged) {
			t.Errorf("%s: packs.lock changed:\n%s", tt.name, got)
		}
	}

	// A failure right before the write leaves the old file.
	h.hook = func(step string) error {
		if step == "capabilities" {
			return errCrash
		}
		return nil
	}
	if _, err := set(h, "weather", map[capability.Name]LockCapability{capability.Network: {Granted: true}}); !errors.Is(err, errCrash) {
		t.Errorf("interrupted: got %v", err)
	}
	if got := readLockBytes(t, h); string(got) != string(unchanged) {
		t.Errorf("interrupted: packs.lock changed:\n%s", got)
	}
}

// TestSetCapabilitiesSerializes has several Homes on one directory (as
// separate processes would be) each add one resource to what it reads:
// every addition survives only if compute runs under the lock.
func TestSetCapabilitiesSerializes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	install(t, openTestHome(t, dir), writePack(t, t.TempDir(), "weather", "1.0.0"), capability.Network)
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := OpenHome(context.Background(), dir, HomeOptions{})
			if err != nil {
				errs <- err
				return
			}
			_, err = h.SetCapabilities(context.Background(), "weather", func(cur LockEntry) (map[capability.Name]LockCapability, error) {
				c := cur.Capabilities[capability.Network]
				c.Resources = append(slices.Clone(c.Resources), fmt.Sprintf("h%d.example.com", i))
				return map[capability.Name]LockCapability{capability.Network: c}, nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	e, err := openTestHome(t, dir).Entry("weather")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Capabilities[capability.Network].Resources; len(got) != writers+1 {
		t.Errorf("lost updates: %d resources, want %d: %v", len(got), writers+1, got)
	}
}

// BenchmarkSetCapabilities measures one grant change mirrored into
// packs.lock: lock, read, atomic write with fsync.
func BenchmarkSetCapabilities(b *testing.B) {
	h := openTestHome(b, filepath.Join(b.TempDir(), "home"))
	install(b, h, writePack(b, b.TempDir(), "weather", "1.0.0"))
	on := map[capability.Name]LockCapability{capability.Network: {Granted: true, Resources: []string{"api.example.com"}}}
	b.ResetTimer()
	for i := range b.N {
		caps := on
		if i%2 == 1 {
			caps = nil
		}
		if _, err := set(h, "weather", caps); err != nil {
			b.Fatal(err)
		}
	}
}
