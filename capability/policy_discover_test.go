package capability_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestPolicyDiscoverAndInPlace: [discover] switches kinds of skills
// folder off (and shows in the effective policy); a pre-approval by name
// does not reach a pack used in place, one by its exact digest does.
func TestPolicyDiscoverAndInPlace(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	path := filepath.Join(t.TempDir(), "policy.toml")
	body := "[discover]\nuser = false\n\n[[preapprove]]\npack = \"tool\"\ngrants = [\"network\"]\n\n[[preapprove]]\npack = \"tool\"\ndigest = \"" + digest + "\"\ngrants = [\"env_read\"]\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := capability.FindPolicy(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.DiscoverUser() || !p.DiscoverProject() {
		t.Errorf("DiscoverUser %v, DiscoverProject %v", p.DiscoverUser(), p.DiscoverProject())
	}
	if text, err := p.Format(); err != nil || !strings.Contains(text, "[discover]") || !strings.Contains(text, "user = false") {
		t.Errorf("effective policy:\n%s %v", text, err)
	}
	var none *capability.Policy
	if !none.DiscoverUser() || !none.DiscoverProject() {
		t.Error("no policy switches discovery off")
	}
	installed := capability.PackRef{Name: "tool", Digest: digest}
	inPlace := capability.PackRef{Name: "tool", Digest: digest, InPlace: "/home/a/.claude/skills/tool"}
	other := capability.PackRef{Name: "tool", Digest: "sha256:" + strings.Repeat("cd", 32), InPlace: "/home/a/.claude/skills/tool"}
	for _, c := range []struct {
		ref capability.PackRef
		n   capability.Name
		pre bool
	}{
		{installed, capability.Network, true},
		{inPlace, capability.Network, false},
		{inPlace, capability.EnvRead, true},
		{other, capability.EnvRead, false},
	} {
		if got := p.PreApproved(c.ref, c.n); got != c.pre {
			t.Errorf("PreApproved(%+v, %s) = %v, want %v", c.ref, c.n, got, c.pre)
		}
	}
}
