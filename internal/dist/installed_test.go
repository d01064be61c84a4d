package dist

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/packs-run/packs/packs"
)

// TestInstalledIn reads ids from the installed packs' manifests.
func TestInstalledIn(t *testing.T) {
	home := t.TempDir()
	if got, err := InstalledIn(home); err != nil || len(got) != 0 {
		t.Fatalf("empty home: %v, %v", got, err)
	}
	writePackFiles(t, filepath.Join(home, "packs", "git-flow"), map[string]string{"SKILL.md": skillMD("git-flow"), "skill.toml": "[skill]\nid = \"examples.git-flow\"\nversion = \"0.1.0\"\n"})
	writePackFiles(t, filepath.Join(home, "packs", "bare"), map[string]string{"SKILL.md": skillMD("bare")})
	l := &Lockfile{}
	l.put(LockEntry{Name: "git-flow", Version: "0.1.0", Source: "file:///x", Integrity: "sha256:" + zeros64})
	l.put(LockEntry{Name: "bare", Source: "file:///y", Integrity: "sha256:" + zeros64})
	if err := WriteLock(filepath.Join(home, "packs.lock"), l); err != nil {
		t.Fatal(err)
	}
	got, err := InstalledIn(home)
	if err != nil {
		t.Fatal(err)
	}
	want := []packs.Installed{{Name: "bare"}, {Name: "git-flow", ID: "examples.git-flow", Version: "0.1.0"}}
	if !slices.Equal(got, want) {
		t.Errorf("installed = %+v, want %+v", got, want)
	}
}

const zeros64 = "0000000000000000000000000000000000000000000000000000000000000000"
