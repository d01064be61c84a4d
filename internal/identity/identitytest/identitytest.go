// Package identitytest runs a real OpenID provider for tests
// (github.com/oauth2-proxy/mockoidc on loopback: discovery, keys, the
// authorization code flow with PKCE) and mints the bearer tokens it signs,
// with whatever claims a test needs.
package identitytest

import (
	"maps"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/identity"
)

// OP is a running OpenID provider.
type OP struct {
	*mockoidc.MockOIDC
	foreign *mockoidc.Keypair // Forged's key, made on first use
}

// Start runs an OP on loopback until the test ends.
func Start(t testing.TB) *OP {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return &OP{MockOIDC: m}
}

// Config is the identity configuration of a client of this OP.
func (op *OP) Config(roles capability.RoleMap) identity.Config {
	return identity.Config{Issuer: op.Issuer(), ClientID: op.ClientID, ClientSecret: op.ClientSecret, Roles: roles}
}

// Token is a bearer token the OP signs for subject, issued for its client,
// valid for ten minutes, with extra claims laid over (a nil value removes
// a claim: "aud", "exp").
func (op *OP) Token(t testing.TB, subject string, extra map[string]any) string {
	t.Helper()
	return op.sign(t, op.Keypair, subject, extra)
}

// Forged is Token signed by a key the OP does not hold.
func (op *OP) Forged(t testing.TB, subject string, extra map[string]any) string {
	t.Helper()
	if op.foreign == nil {
		kp, err := mockoidc.RandomKeypair(2048)
		if err != nil {
			t.Fatal(err)
		}
		op.foreign = kp
	}
	return op.sign(t, op.foreign, subject, extra)
}

func (op *OP) sign(t testing.TB, kp *mockoidc.Keypair, subject string, extra map[string]any) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": op.Issuer(), "aud": op.ClientID, "sub": subject, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}
	maps.Copy(c, extra)
	for k, v := range c {
		if v == nil {
			delete(c, k)
		}
	}
	s, err := kp.SignJWT(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// SignIn queues the person the next sign-in at the OP returns (the OP
// signs in whoever is queued, without a form).
func (op *OP) SignIn(subject, name string, groups ...string) {
	op.QueueUser(&mockoidc.MockUser{Subject: subject, PreferredUsername: name, Email: name + "@example.com", EmailVerified: true, Groups: groups})
}
