package capability_test

import (
	"errors"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestUnconfined: a native command runs with less than full confinement
// only where the policy says best-effort; the default refuses, and the
// person cannot loosen it.
func TestUnconfined(t *testing.T) {
	req := capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"sh"}}}
	user := []capability.UserGrant{{Capability: capability.TerminalExec, Scope: capability.ScopePersistent}}
	for _, tc := range []struct {
		policy string
		allow  bool
	}{
		{"", false},
		{"[exec]\nconfinement = \"required\"\n", false},
		{"[exec]\nconfinement = \"best-effort\"\n", true},
	} {
		var pol *capability.Policy
		if tc.policy != "" {
			var err error
			if pol, err = capability.ParsePolicy("policy.toml", []byte(tc.policy)); err != nil {
				t.Fatal(err)
			}
		}
		g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, user, pol, capability.Env{Home: t.TempDir(), Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		d := g.Unconfined("sh", "no Landlock")
		if d.Allowed() != tc.allow {
			t.Errorf("policy %q: allowed %v, want %v (%s)", tc.policy, d.Allowed(), tc.allow, d.Reason())
		}
		if !tc.allow && !errors.Is(d.Err(), capability.ErrUnconfined) {
			t.Errorf("policy %q: %v, want ErrUnconfined", tc.policy, d.Err())
		}
	}
	if _, err := capability.ParsePolicy("policy.toml", []byte("[exec]\nconfinement = \"off\"\n")); !errors.Is(err, capability.ErrBadPolicy) {
		t.Errorf("confinement = off: %v, want ErrBadPolicy", err)
	}
}
