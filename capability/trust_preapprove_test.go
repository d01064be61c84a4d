package capability_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/packs-run/packs/capability"
)

// sshKey returns a fresh SSH public key as a .pub file line, and its
// normalized form ("TYPE BASE64").
func sshKey(t *testing.T) (line, norm string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	norm = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	return norm + " team@corp", norm
}

// TestPreapproveBySigner: a pre-approval may name a signer: it applies to
// packs whose archive that key signed (any pack when no pack is named), and
// to no unsigned pack or pack signed by another key.
func TestPreapproveBySigner(t *testing.T) {
	corp, corpNorm := sshKey(t)
	_, otherNorm := sshKey(t)
	pol, err := capability.ParsePolicy("policy.toml", []byte("[[preapprove]]\nsigner = \""+corp+"\"\ngrants = [\"network\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		ref  capability.PackRef
		want bool
	}{
		{"signed by the key", capability.PackRef{Name: "weather", Digest: "sha256:" + strings.Repeat("a", 64), Signer: corpNorm}, true},
		{"unsigned", capability.PackRef{Name: "weather", Digest: "sha256:" + strings.Repeat("a", 64)}, false},
		{"signed by another key", capability.PackRef{Name: "weather", Digest: "sha256:" + strings.Repeat("a", 64), Signer: otherNorm}, false},
	} {
		if got := pol.PreApproved(tt.ref, capability.Network); got != tt.want {
			t.Errorf("%s: PreApproved = %v, want %v", tt.name, got, tt.want)
		}
	}
	req := capability.Request{Network: []string{"api.example.com"}}
	g, err := capability.Resolve(capability.PackRef{Name: "weather", Digest: "sha256:" + strings.Repeat("a", 64), Signer: corpNorm}, req, nil, pol, capability.Env{})
	if err != nil || !g.Host("api.example.com").Allowed() {
		t.Fatalf("a pack signed by the key, with no grant of the person: %v, host allowed %v", err, g.Host("api.example.com"))
	}

	named, err := capability.ParsePolicy("policy.toml", []byte("[[preapprove]]\npack = \"weather\"\nsigner = \""+corp+"\"\ngrants = [\"network\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if named.PreApproved(capability.PackRef{Name: "other", Signer: corpNorm}, capability.Network) {
		t.Error("a pre-approval naming a pack applied to another pack the key signed")
	}

	for _, bad := range []string{
		"[[preapprove]]\ngrants = [\"network\"]\n",
		"[[preapprove]]\nsigner = \"not a key\"\ngrants = [\"network\"]\n",
	} {
		_, err := capability.ParsePolicy("policy.toml", []byte(bad))
		var pe *capability.PolicyError
		if err == nil || (errors.As(err, &pe) && pe.Line == 0) {
			t.Errorf("policy %q: %v, want an error at its line", bad, err)
		}
	}
}
