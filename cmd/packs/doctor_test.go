package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/hostfns/confine"
	"github.com/packs-run/packs/internal/testpg"
)

// TestDoctor: packs doctor says what confinement the machine gives, and
// what native commands do under the policy's [exec] confinement.
func TestDoctor(t *testing.T) {
	home := t.TempDir()
	want := confine.Probe()
	for _, tc := range []struct{ policy, confinement string }{
		{"", "required"},
		{"[exec]\nconfinement = \"best-effort\"\n", "best-effort"},
	} {
		args := []string{"doctor", "--json"}
		if tc.policy != "" {
			pol := filepath.Join(t.TempDir(), "policy.toml")
			if err := os.WriteFile(pol, []byte(tc.policy), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append([]string{"--policy", pol}, args...)
		}
		r := withHome(t, home, args...).mustCode(t, exitOK)
		var got doctorReport
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, r.stdout)
		}
		if got.Confinement.Mode != string(want.Mode()) || got.Confinement.LandlockABI != want.LandlockABI || got.Confinement.Namespaces != want.Namespaces {
			t.Errorf("confinement %+v, want %+v (mode %s)", got.Confinement, want, want.Mode())
		}
		if got.Policy != tc.confinement || got.Native == "" || got.Home != home || got.Store != "sqlite" {
			t.Errorf("policy %q native %q home %q; want %q, a word on native commands, %q", got.Policy, got.Native, got.Home, tc.confinement, home)
		}
	}
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("[exec]\nconfinement = \"sometimes\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := withHome(t, home, "--policy", pol, "doctor"); r.code == exitOK {
		t.Errorf("an unknown [exec] confinement was accepted:\n%s", r.stdout)
	}
	r := withHome(t, t.TempDir(), "--store", testpg.URL(t), "doctor").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "\nstore: postgres\n") {
		t.Errorf("doctor on a PostgreSQL store:\n%s", r.stdout)
	}
}
