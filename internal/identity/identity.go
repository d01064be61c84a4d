// Package identity says who is calling packs serve or packs mcp --http,
// and in which roles. Without an OIDC issuer there is one person: whoever
// holds the printed token, in every role (the Person with an empty
// subject). With --oidc-issuer, people sign in at the issuer: the web app
// through the authorization code flow with PKCE (login.go), API and MCP
// clients with a bearer JWT the issuer signed for packs' client id. Each
// token is verified once against the issuer's keys (github.com/coreos/go-oidc)
// and then served from a cache until it expires, so a signed-in call costs
// a map lookup.
//
// Roles come from a claim of the token, mapped by the policy's [roles]
// (capability.RoleMap): admin installs, grants, reads the policy and sees
// every chat; member has their own chats, approves their own calls and runs
// tools by hand; auditor reads and exports the audit log, nothing else.
package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/packs-run/packs/capability"
)

var (
	// ErrUnauthenticated: the token is not one the issuer signed for this
	// client, or it expired.
	ErrUnauthenticated = errors.New("identity: the token is not valid")
	// ErrNoRole: the token is valid but the policy's [roles] gives its
	// person no role.
	ErrNoRole = errors.New("identity: no role")
	// ErrConfig: the OIDC configuration is incomplete or the issuer
	// cannot be reached.
	ErrConfig = errors.New("identity: OIDC configuration")
)

// Roles is a set of roles.
type Roles uint8

// The roles. A person may hold several; a route names the roles that may
// call it, and a person holding any of them may.
const (
	Admin Roles = 1 << iota
	Member
	Auditor

	// Everyone is every role: the token holder's.
	Everyone = Admin | Member | Auditor
)

// Has reports whether r holds any role of want.
func (r Roles) Has(want Roles) bool { return r&want != 0 }

// String lists the roles by name, "admin,member".
func (r Roles) String() string {
	var names []string
	for i, n := range capability.RoleNames {
		if r&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// Names lists the roles by name.
func (r Roles) Names() []string {
	if r == 0 {
		return []string{}
	}
	return strings.Split(r.String(), ",")
}

func roleNamed(name string) Roles {
	if i := slices.Index(capability.RoleNames, name); i >= 0 {
		return 1 << i
	}
	return 0
}

// Person is who makes a request. The zero Subject is the token holder
// (packs' single-token mode, and the person at the terminal).
type Person struct {
	Subject string // the issuer's "sub"; empty: the token holder
	Issuer  string // the issuer's URL; empty: the token holder
	Name    string // for display: preferred_username, email, else the subject
	Roles   Roles
}

// TokenHolder is the one person of the single-token mode: every role.
var TokenHolder = Person{Name: "the token holder", Roles: Everyone}

// Owns reports whether a thing owned by (issuer, subject) belongs to p:
// the same person, by both fields.
func (p Person) Owns(issuer, subject string) bool {
	return p.Issuer == issuer && p.Subject == subject
}

// Config configures an OIDC Provider.
type Config struct {
	Issuer       string // the issuer URL, as its discovery document names it
	ClientID     string // packs' client at the issuer; bearer tokens must be issued for it (aud)
	ClientSecret string // empty for a public client (PKCE alone)
	Roles        capability.RoleMap
	// HTTPClient reaches the issuer (discovery, keys, the code exchange);
	// nil: http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock tokens are checked against; nil: time.Now.
	Now func() time.Time
}

// Provider verifies the tokens of one issuer. It is safe for concurrent
// use.
type Provider struct {
	cfg      Config
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	cache    tokenCache
}

// New discovers the issuer (its /.well-known/openid-configuration) and
// returns a Provider for it.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	switch {
	case cfg.Issuer == "":
		return nil, fmt.Errorf("%w: no issuer: pass --oidc-issuer URL", ErrConfig)
	case cfg.ClientID == "":
		return nil, fmt.Errorf("%w: no client id for %s: store it with packs secret set oidc-client-id, or name a file with --oidc-client-id-file", ErrConfig, cfg.Issuer)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Roles.Claim == "" {
		cfg.Roles = (*capability.Policy)(nil).Roles()
	}
	if cfg.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, cfg.HTTPClient)
	}
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: the issuer %s: %w", ErrConfig, cfg.Issuer, err)
	}
	var disc struct {
		JWKS string   `json:"jwks_uri"`
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&disc); err != nil || disc.JWKS == "" {
		return nil, fmt.Errorf("%w: the issuer %s names no jwks_uri: %v", ErrConfig, cfg.Issuer, err)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	// Only asymmetric algorithms go-oidc checks: never "none" or an HMAC
	// whose key would be the client secret. None listed: RS256 alone.
	algs := slices.DeleteFunc(disc.Algs, func(a string) bool { return !slices.Contains(signingAlgs, a) })
	keys := &issuerKeys{url: disc.JWKS, client: client, now: cfg.Now}
	verifier := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now, SupportedSigningAlgs: algs})
	return &Provider{cfg: cfg, provider: p, verifier: verifier, cache: tokenCache{m: map[[32]byte]cached{}}}, nil
}

// signingAlgs are the token signatures packs accepts, as the issuer lists
// them: go-oidc's asymmetric algorithms.
var signingAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// Issuer is the issuer's URL.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

// ctx carries the configured HTTP client to go-oidc and oauth2.
func (p *Provider) ctx(ctx context.Context) context.Context {
	if p.cfg.HTTPClient == nil {
		return ctx
	}
	return oidc.ClientContext(ctx, p.cfg.HTTPClient)
}

// Verify checks a bearer token: signed by the issuer's keys, issued by it
// for packs' client id, not expired; and finds its person's roles. A
// token seen before is answered from the cache until it expires.
func (p *Provider) Verify(ctx context.Context, raw string) (Person, error) {
	key := sha256.Sum256([]byte(raw))
	now := p.cfg.Now()
	if per, ok := p.cache.get(key, now); ok {
		return per, nil
	}
	tok, err := p.verifier.Verify(p.ctx(ctx), raw)
	if err != nil {
		return Person{}, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	per, err := p.person(tok)
	if err != nil {
		return Person{}, err
	}
	p.cache.put(key, per, tok.Expiry, now)
	return per, nil
}

// person reads the person and their roles from a verified token.
func (p *Provider) person(tok *oidc.IDToken) (Person, error) {
	if tok.Subject == "" {
		// Chats and audit rows are keyed by the subject: a token without
		// one names nobody.
		return Person{}, fmt.Errorf("%w: the token has no subject (sub)", ErrUnauthenticated)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Person{}, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	per := Person{Subject: tok.Subject, Issuer: tok.Issuer, Name: tok.Subject}
	for _, k := range []string{"preferred_username", "email", "name"} {
		if s, ok := claims[k].(string); ok && s != "" {
			per.Name = s
			break
		}
	}
	per.Roles = rolesOf(p.cfg.Roles, tok.Subject, claims)
	if per.Roles == 0 {
		return Person{}, fmt.Errorf("%w: %s (%s) holds no role of packs: the policy's [roles] names no value of its %q claim, and sets no default", ErrNoRole, per.Name, per.Subject, p.cfg.Roles.Claim)
	}
	return per, nil
}

// rolesOf maps a token's claim to roles. With no lists in m, the claim's
// values that are role names confer those roles; with lists, a role comes
// only from its list (a claim value, or "sub:SUBJECT"). A person no list
// names gets m.Default.
func rolesOf(m capability.RoleMap, subject string, claims map[string]any) Roles {
	var vals []string
	switch v := claims[m.Claim].(type) {
	case string:
		vals = strings.Fields(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				vals = append(vals, s)
			}
		}
	}
	var r Roles
	if len(m.Lists) == 0 {
		for _, v := range vals {
			r |= roleNamed(v)
		}
	}
	for role, list := range m.Lists {
		for _, want := range list {
			if s, ok := strings.CutPrefix(want, "sub:"); ok && s == subject || slices.Contains(vals, want) {
				r |= roleNamed(role)
			}
		}
	}
	if r == 0 {
		r = roleNamed(m.Default)
	}
	return r
}

// OAuth2 is the authorization code configuration for the web app's
// sign-in, returning to redirectURL.
func (p *Provider) OAuth2(redirectURL string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: p.provider.Endpoint(),
		RedirectURL: redirectURL, Scopes: []string{oidc.ScopeOpenID, "profile", "email", "groups"}}
}

// tokenCache holds verified tokens until they expire: a token is verified
// against the issuer's keys once. It is keyed by the token's SHA-256, so
// it holds no token.
type tokenCache struct {
	mu sync.Mutex
	m  map[[32]byte]cached
}

type cached struct {
	person Person
	expiry time.Time
}

// maxCached bounds the cache: past it, expired tokens are dropped, and if
// none had expired, all are (they are verified again on their next use).
const maxCached = 8192

func (c *tokenCache) get(key [32]byte, now time.Time) (Person, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !now.Before(e.expiry) {
		return Person{}, false
	}
	return e.person, true
}

func (c *tokenCache) put(key [32]byte, per Person, expiry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCached {
		for k, e := range c.m {
			if !now.Before(e.expiry) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCached {
			clear(c.m)
		}
	}
	c.m[key] = cached{person: per, expiry: expiry}
}
