package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/identity/identitytest"
)

// TestServeOIDC starts packs serve with --oidc-issuer against a real
// OpenID provider, the client id from a file and the secret from the
// secret store: a member's JWT reaches their chats and is refused the
// audit, a forged one is refused, and the printed token still works.
func TestServeOIDC(t *testing.T) {
	op := identitytest.Start(t)
	home := filepath.Join(t.TempDir(), "home")
	policy := filepath.Join(t.TempDir(), "policy.toml")
	idFile := filepath.Join(t.TempDir(), "client-id")
	for p, body := range map[string]string{policy: "[roles]\nclaim = \"groups\"\nmember = [\"engineering\"]\n", idFile: op.ClientID + "\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	secretCLI(t, home, op.ClientSecret+"\n", "secret", "set", oidcClientSecretSecret).mustCode(t, exitOK)
	s, stderr := startServeArgs(t, home, []string{"--addr", "127.0.0.1:0", "--policy", policy, "--oidc-issuer", op.Issuer(), "--oidc-client-id-file", idFile})
	if !strings.Contains(stderr(), "people sign in at "+op.Issuer()) {
		t.Errorf("packs serve did not say where people sign in:\n%s", stderr())
	}
	mia := "Bearer " + op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}})
	if code, out := s.call(t, mia, "POST", "/v1/chats", "{}"); code != http.StatusCreated {
		t.Errorf("mia starts a chat: %d %v", code, out)
	}
	if code, _ := s.call(t, mia, "GET", "/v1/audit", ""); code != http.StatusForbidden {
		t.Errorf("a member reads the audit: %d, want 403", code)
	}
	if code, _ := s.call(t, "Bearer "+op.Forged(t, "mia", map[string]any{"groups": []string{"engineering"}}), "GET", "/v1/chats", ""); code != http.StatusUnauthorized {
		t.Errorf("a forged token: %d, want 401", code)
	}
	s.must(t, "GET", "/v1/audit", "")
}
