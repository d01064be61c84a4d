package dist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

func lockEntryFixture(name string, i int) LockEntry {
	return LockEntry{Name: name, Version: "1.0.0", Source: "file:///src/" + name, Integrity: fmt.Sprintf("sha256:%064x", i),
		Installed: time.Date(2026, 1, 2, 10, 0, 0, i, time.UTC), Signer: "ssh-ed25519 AAAA" + name,
		Capabilities: map[capability.Name]LockCapability{capability.EnvRead: {Granted: true, Resources: []string{"A_*"}}}}
}

// TestReadLockEntry checks that looking up one entry finds what parsing the
// whole file finds, in the canonical form and in every form that must fall
// back to the whole parse.
func TestReadLockEntry(t *testing.T) {
	lf := &Lockfile{}
	for i, n := range []string{"alpha", "beta", "gamma"} {
		lf.put(lockEntryFixture(n, i))
	}
	canonical := string(lf.Marshal())
	head := "version = 1\n"
	entry := func(name, integrity string) string {
		return "\n[[packs]]\nname = \"" + name + "\"\nsource = \"file:///x\"\nintegrity = \"" + integrity + "\"\ninstalled = \"2026-01-02T10:00:00Z\"\n"
	}
	digest := func(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }
	tests := []struct {
		name, data, lookup string
		want               string // integrity; "" for not installed
		wantErr            bool
	}{
		{"canonical first", canonical, "alpha", lockEntryFixture("alpha", 0).Integrity, false},
		{"canonical middle", canonical, "beta", lockEntryFixture("beta", 1).Integrity, false},
		{"canonical last", canonical, "gamma", lockEntryFixture("gamma", 2).Integrity, false},
		{"absent", canonical, "delta", "", false},
		{"prefix of a name", canonical, "alph", "", false},
		{"literal string name", head + strings.Replace(entry("x", digest('a')), `name = "x"`, `name = 'x'`, 1), "x", digest('a'), false},
		{"name not the first key", head + "\n[[packs]]\nsource = \"file:///x\"\nname = \"x\"\nintegrity = \"" + digest('b') + "\"\ninstalled = \"2026-01-02T10:00:00Z\"\n", "x", digest('b'), false},
		// A header inside a multi-line string is text, not an entry: the
		// whole parse says so, and the lookup must agree.
		{"header in a multi-line string", head + entry("y", digest('c')) + "version = \"\"\"\n[[packs]]\nname = \"x\"\nsource = \"s\"\nintegrity = \"" + digest('d') + "\"\ninstalled = \"2026-01-02T10:00:00Z\"\n\"\"\"\n", "x", "", false},
		{"entry and header in a multi-line string", head + entry("y", digest('c')) + "version = \"\"\"\n[[packs]]\nname = \"x\"\nsource = \"s\"\nintegrity = \"" + digest('d') + "\"\ninstalled = \"2026-01-02T10:00:00Z\"\n[[packs]]\n\"\"\"\n", "x", "", false},
		{"listed twice", head + entry("x", digest('e')) + entry("x", digest('f')), "x", "", true},
		{"broken entry of its own", head + strings.Replace(entry("x", digest('a')), "integrity = \"sha256:", "integrity = \"md5:", 1), "x", "", true},
		{"name line in a sub-table", head + "\n[[packs]]\nname = \"z\"\nsource = \"s\"\nintegrity = \"" + digest('a') + "\"\ninstalled = \"2026-01-02T10:00:00Z\"\n\n[packs.capabilities]\nname = { granted = true, resources = [] }\n", "name", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "packs.lock")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			e, ok, err := ReadLockEntry(path, tt.lookup)
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			got := ""
			if ok {
				got = e.Integrity
			}
			if got != tt.want {
				t.Errorf("integrity = %q, want %q", got, tt.want)
			}
			if full, err := ReadLock(path); err == nil {
				fe, fok := full.Entry(tt.lookup)
				if fok != ok || (ok && !fe.equal(e)) {
					t.Errorf("lookup = %+v %t, whole parse = %+v %t", e, ok, fe, fok)
				}
			}
		})
	}
}

// FuzzReadLockEntry: whenever the whole file parses, looking up one entry
// returns exactly the entry the whole parse has (or none when it has none).
func FuzzReadLockEntry(f *testing.F) {
	lf := &Lockfile{}
	for i, n := range []string{"alpha", "beta"} {
		lf.put(lockEntryFixture(n, i))
	}
	f.Add(lf.Marshal(), "alpha")
	f.Add(lf.Marshal(), "beta")
	f.Add([]byte("version = 1\n\n[[packs]]\nname = \"x\"\nsource = \"s\"\nintegrity = \"sha256:"+strings.Repeat("0", 64)+"\"\ninstalled = \"2026-01-02T10:00:00Z\"\n"), "x")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		full, err := ParseLock("packs.lock", data)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "packs.lock")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		e, ok, err := ReadLockEntry(path, name)
		if err != nil {
			t.Fatalf("the whole file parses, the lookup fails: %v", err)
		}
		fe, fok := full.Entry(name)
		if fok != ok || (ok && !fe.equal(e)) {
			t.Fatalf("lookup = %+v %t, whole parse = %+v %t", e, ok, fe, fok)
		}
	})
}

// TestHomeEntryFollowsTheLock: a remembered entry is never served for a
// packs.lock that changed since.
func TestHomeEntryFollowsTheLock(t *testing.T) {
	h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
	for i, integrity := range []string{fmt.Sprintf("sha256:%064x", 1), fmt.Sprintf("sha256:%064x", 2)} {
		lf := &Lockfile{}
		e := lockEntryFixture("alpha", i)
		e.Integrity = integrity
		lf.put(e)
		if err := WriteLock(h.LockPath(), lf); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second lookup is the remembered one
			got, err := h.Entry("alpha")
			if err != nil || got.Integrity != integrity {
				t.Fatalf("entry %+v, %v; want integrity %s", got, err, integrity)
			}
		}
	}
	if err := WriteLock(h.LockPath(), &Lockfile{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Entry("alpha"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("entry after removal: %v, want ErrNotInstalled", err)
	}
}
