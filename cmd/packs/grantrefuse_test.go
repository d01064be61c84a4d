package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestGrantModifiedPackRefusedFirst: packs grant on a pack whose files
// changed is refused before anything is recorded: packs.db, packs.lock and
// the decision change together or not at all. Restoring the files does not
// bring a refused grant to life.
func TestGrantModifiedPackRefusedFirst(t *testing.T) {
	home := installedWeather(t, "none")
	doc := filepath.Join(home, "packs", "weather", "docs", "version.md")
	orig, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withHome(t, home, "grant", "weather", "network").mustCode(t, 1)
	if err := os.WriteFile(doc, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := capOf(t, capsJSON(t, home), capability.Network); c.Held {
		t.Fatalf("network is held after a refused grant and restored files: %+v", c)
	}
	if e := lockEntry(t, home); e.Capabilities[capability.Network].Granted {
		t.Fatalf("packs.lock says network is granted: %+v", e.Capabilities)
	}
}
