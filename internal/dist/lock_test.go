package dist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

const goodIntegrity = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func sampleLock() *Lockfile {
	l := &Lockfile{}
	l.put(LockEntry{
		Name: "weather", Version: "0.3.0", Source: "file:///home/me/weather", Integrity: goodIntegrity,
		Installed: time.Date(2026, 1, 2, 10, 0, 0, 123456789, time.UTC),
		Capabilities: map[capability.Name]LockCapability{
			capability.Network: {Granted: true, Resources: []string{"api.weather.example", "*.cdn.example"}},
			capability.EnvRead: {Granted: false, Resources: []string{"WEATHER_*"}},
		},
	})
	l.put(LockEntry{
		Name: "aardvark", Source: "file:///tmp/a \"quoted\"\tname\\x", Integrity: goodIntegrity,
		Installed: time.Date(2025, 12, 31, 9, 0, 0, 0, time.UTC),
	})
	return l
}

func TestLockRoundTrip(t *testing.T) {
	want := sampleLock()
	got, err := ParseLock("packs.lock", want.Marshal())
	if err != nil {
		t.Fatalf("%v\n%s", err, want.Marshal())
	}
	if len(got.Packs) != len(want.Packs) {
		t.Fatalf("got %d entries, want %d", len(got.Packs), len(want.Packs))
	}
	for i := range want.Packs {
		if !got.Packs[i].equal(want.Packs[i]) {
			t.Errorf("entry %d: got %+v, want %+v", i, got.Packs[i], want.Packs[i])
		}
	}
	if got.Packs[0].Name != "aardvark" {
		t.Errorf("entries not sorted: first is %s", got.Packs[0].Name)
	}
	if g, w := got.Packs[1].Granted(), []capability.Name{capability.Network}; len(g) != 1 || g[0] != w[0] {
		t.Errorf("Granted: got %v, want %v", g, w)
	}
	if g := got.Packs[1].Requested(); len(g) != 2 || g[0] != capability.Network || g[1] != capability.EnvRead {
		t.Errorf("Requested: got %v, want [network env_read]", g)
	}
}

// TestLockSpecFormat reads a lockfile written by hand in spec 001's layout
// (with "packs" for "skills"), including a second-precision time.
func TestLockSpecFormat(t *testing.T) {
	doc := `version = 1

[[packs]]
name = "cloud-aws"
version = "0.3.0"
source = "file:///home/user/cloud-aws"
integrity = "` + goodIntegrity + `"
installed = "2025-12-31T10:00:00Z"

[packs.capabilities]
terminal_exec = { granted = true, resources = ["aws", "eksctl"] }
network = { granted = true, resources = ["*.amazonaws.com"] }

[[packs]]
name = "kubernetes"
source = "file:///home/user/my-skills/kubernetes"
integrity = "` + goodIntegrity + `"
installed = "2025-12-31T09:00:00Z"
`
	l, err := ParseLock("packs.lock", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := l.Entry("cloud-aws")
	if !ok {
		t.Fatal("cloud-aws missing")
	}
	if got := e.Capabilities[capability.TerminalExec].Resources; len(got) != 2 || got[1] != "eksctl" {
		t.Errorf("terminal_exec resources: got %v", got)
	}
	if want := time.Date(2025, 12, 31, 10, 0, 0, 0, time.UTC); !e.Installed.Equal(want) {
		t.Errorf("installed: got %v, want %v", e.Installed, want)
	}
	if k, ok := l.Entry("kubernetes"); !ok || k.Version != "" || k.Capabilities != nil {
		t.Errorf("kubernetes: got %+v, %v", k, ok)
	}
}

func TestLockErrors(t *testing.T) {
	entry := func(extra string) string {
		return "version = 1\n\n[[packs]]\nname = \"p\"\nsource = \"file:///p\"\nintegrity = \"" + goodIntegrity + "\"\ninstalled = \"2026-01-01T00:00:00Z\"\n" + extra
	}
	tests := []struct {
		name string
		doc  string
		rule string
		line int
	}{
		{"toml syntax", "version = 1\n[[packs]\n", "lock-syntax", 2},
		{"unknown top-level key", "version = 1\nfoo = 2\n", "lock-unknown-key", 2},
		{"unknown entry key", entry("color = \"red\"\n"), "lock-unknown-key", 8},
		{"unknown capability field", entry("[packs.capabilities]\nnetwork = { granted = true, hosts = [] }\n"), "lock-unknown-key", 9},
		{"no version", "[[packs]]\n", "lock-version", 0},
		{"future version", "version = 2\n", "lock-version", 1},
		{"wrong type", "version = \"1\"\n", "lock-syntax", 1},
		{"missing name", "version = 1\n\n[[packs]]\nsource = \"x\"\n", "lock-missing-field", 3},
		{"name climbs out", strings.Replace(entry(""), `name = "p"`, `name = "../etc"`, 1), "lock-name", 4},
		{"hidden name", strings.Replace(entry(""), `name = "p"`, `name = ".git"`, 1), "lock-name", 4},
		{"missing source", strings.Replace(entry(""), "source = \"file:///p\"\n", "", 1), "lock-missing-field", 3},
		{"bad integrity", strings.Replace(entry(""), goodIntegrity, "sha256:abc", 1), "lock-integrity", 6},
		{"missing integrity", strings.Replace(entry(""), "integrity = \""+goodIntegrity+"\"\n", "", 1), "lock-missing-field", 3},
		{"bad time", strings.Replace(entry(""), "2026-01-01T00:00:00Z", "yesterday", 1), "lock-installed", 7},
		{"missing time", strings.Replace(entry(""), "installed = \"2026-01-01T00:00:00Z\"\n", "", 1), "lock-missing-field", 3},
		{"unknown capability", entry("[packs.capabilities]\nteleport = { granted = true, resources = [] }\n"), "lock-capability", 9},
		{"capability without granted", entry("[packs.capabilities]\nnetwork = { resources = [\"a.example\"] }\n"), "lock-missing-field", 9},
		{"duplicate", entry("") + strings.TrimPrefix(entry(""), "version = 1\n"), "lock-duplicate", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLock("packs.lock", []byte(tt.doc))
			var le *LockError
			if !errors.As(err, &le) || !errors.Is(err, ErrLockInvalid) {
				t.Fatalf("got %v, want a *LockError wrapping ErrLockInvalid", err)
			}
			if le.Rule != tt.rule || le.Line != tt.line {
				t.Errorf("got rule %s line %d, want %s line %d (%v)", le.Rule, le.Line, tt.rule, tt.line, err)
			}
			if le.File != "packs.lock" || !strings.HasPrefix(err.Error(), "packs: packs.lock") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

func TestReadWriteLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "packs.lock")
	l, err := ReadLock(path)
	if err != nil || len(l.Packs) != 0 {
		t.Fatalf("missing file: got %+v, %v; want an empty lockfile", l, err)
	}
	if err := WriteLock(path, sampleLock()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Packs) != 2 {
		t.Fatalf("got %d entries, want 2", len(got.Packs))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	got.remove("weather")
	got.remove("not-there")
	if err := WriteLock(path, got); err != nil {
		t.Fatal(err)
	}
	if again, _ := ReadLock(path); len(again.Packs) != 1 || again.Packs[0].Name != "aardvark" {
		t.Fatalf("after remove: %+v", again.Packs)
	}
}

// FuzzParseLock: any input either fails with a *LockError or parses into a
// lockfile that survives Marshal and ParseLock unchanged.
func FuzzParseLock(f *testing.F) {
	f.Add(sampleLock().Marshal())
	f.Add([]byte("version = 1\n"))
	f.Add([]byte("version = 1\n[[packs]]\nname = \"x\"\n"))
	f.Add([]byte("version = 1\n[[packs]]\nname = \"p\"\nsource = \"s\"\nintegrity = \"" + goodIntegrity + "\"\ninstalled = \"2026-01-01T00:00:00+02:00\"\n[packs.capabilities]\nnetwork = { granted = false, resources = [\"\\u0001\"] }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLock("packs.lock", data)
		if err != nil {
			var le *LockError
			if !errors.As(err, &le) {
				t.Fatalf("error is not a *LockError: %v", err)
			}
			return
		}
		again, err := ParseLock("packs.lock", l.Marshal())
		if err != nil {
			t.Fatalf("re-parse of our own output failed: %v\n%s", err, l.Marshal())
		}
		if len(again.Packs) != len(l.Packs) {
			t.Fatalf("round trip: %d entries, then %d", len(l.Packs), len(again.Packs))
		}
		for i := range l.Packs {
			if !again.Packs[i].equal(l.Packs[i]) {
				t.Fatalf("round trip changed entry %d: %+v -> %+v", i, l.Packs[i], again.Packs[i])
			}
		}
	})
}
