package identity_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/identity/identitytest"
)

func provider(t testing.TB, op *identitytest.OP, policy string) *identity.Provider {
	t.Helper()
	var roles capability.RoleMap
	if policy != "" {
		p, err := capability.ParsePolicy("policy.toml", []byte(policy))
		if err != nil {
			t.Fatal(err)
		}
		roles = p.Roles()
	}
	p, err := identity.New(context.Background(), op.Config(roles))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerifyBearer: a token the issuer signed for packs' client is taken
// with the roles its claim names; an expired one, one for another
// audience, one from another issuer, one signed by another key and one
// without a role are refused.
func TestVerifyBearer(t *testing.T) {
	op := identitytest.Start(t)
	p := provider(t, op, "")
	per, err := p.Verify(context.Background(), op.Token(t, "alice", map[string]any{"roles": []string{"admin", "auditor"}, "preferred_username": "alice"}))
	if err != nil {
		t.Fatal(err)
	}
	if per.Subject != "alice" || per.Issuer != op.Issuer() || per.Name != "alice" || per.Roles != identity.Admin|identity.Auditor {
		t.Errorf("got %+v", per)
	}
	other := identitytest.Start(t)
	past := time.Now().Add(-time.Hour)
	for name, tok := range map[string]string{
		"expired":        op.Token(t, "alice", map[string]any{"roles": "member", "iat": past.Add(-time.Hour).Unix(), "nbf": past.Add(-time.Hour).Unix(), "exp": past.Unix()}),
		"wrong audience": op.Token(t, "alice", map[string]any{"roles": "member", "aud": "another-client"}),
		"no audience":    op.Token(t, "alice", map[string]any{"roles": "member", "aud": nil}),
		"wrong issuer":   op.Token(t, "alice", map[string]any{"roles": "member", "iss": other.Issuer()}),
		"foreign key":    op.Forged(t, "alice", map[string]any{"roles": "member"}),
		"not a JWT":      "alice",
		"no subject":     op.Token(t, "", map[string]any{"roles": "admin", "sub": nil}),
	} {
		if _, err := p.Verify(context.Background(), tok); !errors.Is(err, identity.ErrUnauthenticated) {
			t.Errorf("%s: got %v, want ErrUnauthenticated", name, err)
		}
	}
	if _, err := p.Verify(context.Background(), op.Token(t, "bob", map[string]any{"roles": []string{"owner"}})); !errors.Is(err, identity.ErrNoRole) {
		t.Errorf("no role: got %v, want ErrNoRole", err)
	}
}

// TestVerifyCachedUntilExpiry: a verified token is served from the cache,
// and not past its expiry.
func TestVerifyCachedUntilExpiry(t *testing.T) {
	op := identitytest.Start(t)
	now := time.Now()
	cfg := op.Config(capability.RoleMap{})
	cfg.Now = func() time.Time { return now }
	p, err := identity.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok := op.Token(t, "alice", map[string]any{"roles": "member", "exp": now.Add(time.Minute).Unix()})
	if _, err := p.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	op.Shutdown() // the keys can no longer be fetched: only the cache answers
	if _, err := p.Verify(context.Background(), tok); err != nil {
		t.Errorf("a cached token: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := p.Verify(context.Background(), tok); !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("a cached token past its expiry: got %v, want ErrUnauthenticated", err)
	}
}

// TestRolesMapping: [roles] lists confer roles by claim value or subject,
// the default covers the rest, and with lists a role's bare name in the
// claim confers nothing.
func TestRolesMapping(t *testing.T) {
	op := identitytest.Start(t)
	p := provider(t, op, "[roles]\nclaim = \"groups\"\nadmin = [\"packs-admins\", \"sub:root\"]\nauditor = [\"security\"]\ndefault = \"member\"\n")
	for _, tt := range []struct {
		sub    string
		groups []string
		want   identity.Roles
	}{
		{"a", []string{"packs-admins"}, identity.Admin},
		{"root", nil, identity.Admin},
		{"s", []string{"security", "engineering"}, identity.Auditor},
		{"m", []string{"engineering"}, identity.Member},
		{"n", []string{"admin"}, identity.Member},
	} {
		per, err := p.Verify(context.Background(), op.Token(t, tt.sub, map[string]any{"groups": tt.groups}))
		if err != nil || per.Roles != tt.want {
			t.Errorf("%s %v: got %v %v, want %v", tt.sub, tt.groups, per.Roles, err, tt.want)
		}
	}
	strict := provider(t, op, "[roles]\nclaim = \"groups\"\nadmin = [\"packs-admins\"]\n")
	if _, err := strict.Verify(context.Background(), op.Token(t, "m", map[string]any{"groups": []string{"engineering"}})); !errors.Is(err, identity.ErrNoRole) {
		t.Errorf("no default: got %v, want ErrNoRole", err)
	}
}

// TestLoginCodePKCE runs the web sign-in against the OP over HTTP, as a
// browser would follow its redirects: the session holds the person, the
// code cannot be exchanged twice, and an unknown state is refused.
func TestLoginCodePKCE(t *testing.T) {
	op := identitytest.Start(t)
	p := provider(t, op, "[roles]\nclaim = \"groups\"\nmember = [\"engineering\"]\n")
	l := p.NewLogin()
	op.SignIn("carol", "carol", "engineering")
	authURL, state, err := l.Start("http://127.0.0.1:1/auth/callback")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	if q := u.Query(); q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") != state {
		t.Fatalf("the authorization request lacks PKCE, nonce or state: %s", authURL)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || back.Query().Get("state") != state {
		t.Fatalf("the OP sent the browser to %q", res.Header.Get("Location"))
	}
	sid, per, err := l.Finish(context.Background(), state, back.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if per.Subject != "carol" || per.Roles != identity.Member || per.Name != "carol" {
		t.Errorf("signed in as %+v", per)
	}
	if got, ok := l.Session(sid); !ok || got != per {
		t.Errorf("the session holds %+v %v", got, ok)
	}
	if _, _, err := l.Finish(context.Background(), state, back.Query().Get("code")); !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("the same sign-in finished twice: %v", err)
	}
	l.End(sid)
	if _, ok := l.Session(sid); ok {
		t.Error("the session outlived sign-out")
	}
	if _, ok := l.Session("forged"); ok {
		t.Error("a forged session id opened a session")
	}
}

// TestLoginFlowsBounded: anyone can start a sign-in, so the sign-ins under
// way are bounded; those past their time make room again.
func TestLoginFlowsBounded(t *testing.T) {
	op := identitytest.Start(t)
	now := time.Now()
	cfg := op.Config(capability.RoleMap{})
	cfg.Now = func() time.Time { return now }
	p, err := identity.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := p.NewLogin()
	var n int
	for ; n < 10000; n++ {
		if _, _, err := l.Start("http://127.0.0.1:1/auth/callback"); err != nil {
			if !errors.Is(err, identity.ErrBusy) {
				t.Fatal(err)
			}
			break
		}
	}
	if n == 10000 {
		t.Fatal("10000 sign-ins were started without a bound")
	}
	now = now.Add(11 * time.Minute)
	if _, _, err := l.Start("http://127.0.0.1:1/auth/callback"); err != nil {
		t.Errorf("after the sign-ins expired: %v", err)
	}
}

// TestKeysFetchedAtMostEvery30s: a token no known key checks makes packs
// fetch the issuer's keys again (they may have rotated), but anyone can
// send one: a flood of forged tokens fetches them at most once per 30
// seconds, and a genuine token still passes meanwhile.
func TestKeysFetchedAtMostEvery30s(t *testing.T) {
	op := identitytest.Start(t)
	var fetches atomic.Int32
	now := time.Now()
	cfg := op.Config(capability.RoleMap{})
	cfg.Now = func() time.Time { return now }
	cfg.HTTPClient = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Path, "/jwks.json") {
			fetches.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, err := identity.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Verify(context.Background(), op.Token(t, "alice", map[string]any{"roles": "member"})); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := p.Verify(context.Background(), op.Forged(t, "mallory", map[string]any{"roles": "admin", "jti": i})); !errors.Is(err, identity.ErrUnauthenticated) {
			t.Fatalf("forged token %d: %v", i, err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the keys were fetched %d times for one genuine and 50 forged tokens, want 1", n)
	}
	if _, err := p.Verify(context.Background(), op.Token(t, "bob", map[string]any{"roles": "member"})); err != nil {
		t.Errorf("a genuine token among the forged: %v", err)
	}
	now = now.Add(31 * time.Second)
	p.Verify(context.Background(), op.Forged(t, "mallory", map[string]any{"roles": "admin"}))
	if n := fetches.Load(); n != 2 {
		t.Errorf("after 30 s the keys were fetched %d times in all, want 2", n)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
