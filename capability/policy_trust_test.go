package capability

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const (
	trustKeyA = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOb4d5BXv8k6ZT6xgwWqZBr9ThY3SlXfSd9wg7k+eMmn"
	trustKeyB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ2x8ZY2hV3RrJfu5Tm9c1oB1Pxa0l+1nN5ZK6CwKQ8u"
)

func TestPolicyTrust(t *testing.T) {
	doc := "version = 1\n\n[trust]\nsigners = [\"" + trustKeyA + " alice@example.com\", \"" + trustKeyB + "\"]\nblocked_signers = [\"" + trustKeyB + "\"]\nrequire_signature = [\"https\", \"local\"]\n"
	p, err := ParsePolicy("policy.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.TrustedSigners(); !slices.Equal(got, []string{trustKeyA, trustKeyB}) {
		t.Errorf("TrustedSigners = %q", got)
	}
	if got := p.BlockedSigners(); !slices.Equal(got, []string{trustKeyB}) {
		t.Errorf("BlockedSigners = %q", got)
	}
	for kind, want := range map[string]bool{"https": true, "local": true, "git": false} {
		if got := p.SignatureRequired(kind); got != want {
			t.Errorf("SignatureRequired(%s) = %t, want %t", kind, got, want)
		}
	}
	all, err := ParsePolicy("p", []byte("[trust]\nrequire_signature = [\"all\"]\n"))
	if err != nil || !all.SignatureRequired("git") {
		t.Errorf("require_signature = [\"all\"]: %v", err)
	}
	var none *Policy
	if none.SignatureRequired("https") || none.TrustedSigners() != nil {
		t.Error("a nil policy requires or trusts something")
	}
	text, err := p.Format()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParsePolicy("again", []byte(text))
	if err != nil || !slices.Equal(again.TrustedSigners(), p.TrustedSigners()) || !again.SignatureRequired("local") {
		t.Errorf("Format does not round-trip [trust]: %v\n%s", err, text)
	}
}

func TestPolicyTrustErrors(t *testing.T) {
	tests := []struct {
		doc  string
		line int
		says string
	}{
		{"version = 1\n[trust]\nsigners = [\"not a key\"]\n", 3, "not one SSH public key"},
		{"[trust]\nsigners = [\"" + trustKeyA + "\"]\nblocked_signers = [\"ssh-ed25519 AAAA\"]\n", 3, "not one SSH public key"},
		{"[trust]\n\nrequire_signature = [\"ftp\"]\n", 3, `"ftp" is not a source kind`},
		{"[trust]\nsigners = [\"" + trustKeyA + "\\n" + trustKeyB + "\"]\n", 2, "not one SSH public key"},
		{"[trust]\nunknown = 1\n", 2, "unknown"},
	}
	for _, tt := range tests {
		_, err := ParsePolicy("policy.toml", []byte(tt.doc))
		var pe *PolicyError
		if !errors.As(err, &pe) || !errors.Is(err, ErrBadPolicy) || pe.Line != tt.line || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%q: err = %v, want line %d saying %q", tt.doc, err, tt.line, tt.says)
		}
	}
}
