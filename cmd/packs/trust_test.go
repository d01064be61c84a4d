package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/packs-run/packs/capability"
)

// TestTrustLines: packs policy check says who signed a pack and what the
// policy's [trust] makes of it: trusted, blocked or unknown signer, whether
// its source kind must be signed, and what is pre-approved for it.
func TestTrustLines(t *testing.T) {
	key := func() string {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := ssh.NewPublicKey(pub)
		return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	}
	trusted, blocked, stranger := key(), key(), key()
	pol, err := capability.ParsePolicy("policy.toml", []byte("[trust]\nsigners = [\""+trusted+"\"]\nblocked_signers = [\""+blocked+"\"]\nrequire_signature = [\"git\"]\n\n"+
		"[[preapprove]]\nsigner = \""+trusted+"\"\ngrants = [\"network\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, signer, kind string
		want               []string
	}{
		{"trusted, from git", trusted, "git", []string{"a trusted signer", "requires a signature for git sources", "pre-approved by the policy (by name, digest or signer): network"}},
		{"blocked", blocked, "https", []string{"a BLOCKED signer", "requires no signature for https sources"}},
		{"unknown key", stranger, "", []string{"not among the policy's trusted signers"}},
		{"unsigned", "", "local", []string{"unsigned", "requires no signature for local sources"}},
	} {
		got := strings.Join(trustLines(pol, capability.PackRef{Name: "p", Digest: "sha256:" + strings.Repeat("b", 64), Signer: tt.signer}, tt.kind), "\n")
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
		if tt.signer != trusted && strings.Contains(got, "pre-approved") {
			t.Errorf("%s: %q pre-approves for a pack the trusted key did not sign", tt.name, got)
		}
	}
}
