package capability_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
)

// secretRequest asks to inject GITHUB_TOKEN into api.github.com and to
// reveal NPM_TOKEN.
func secretRequest(t *testing.T) capability.Request {
	t.Helper()
	r, err := capability.Request{
		Network:       []string{"api.github.com", "registry.npmjs.org"},
		SecretsAccess: []string{"GITHUB_TOKEN", capability.RevealPrefix + "NPM_TOKEN"},
		SecretsInject: []capability.SecretInjection{
			{Name: "GITHUB_TOKEN", Host: "api.github.com", Header: "Authorization", Value: "Bearer {{secret.GITHUB_TOKEN}}"},
		},
	}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSecretGrant: granted/denied pairs for injecting and revealing, at the
// person's layer and the policy's. A bare grant never reveals.
func TestSecretGrant(t *testing.T) {
	ref := capability.PackRef{Name: "gh"}
	tests := []struct {
		name              string
		user              []capability.UserGrant
		policy            string
		inject, revealNPM bool // Secret("GITHUB_TOKEN"), SecretReveal("NPM_TOKEN")
		injectNPM         bool // Secret("NPM_TOKEN")
		bindings          int
	}{
		{name: "not granted"},
		{name: "bare grant injects, never reveals", user: []capability.UserGrant{{Capability: capability.SecretsAccess}}, inject: true, injectNPM: true, bindings: 1},
		{name: "named reveal", user: []capability.UserGrant{{Capability: capability.SecretsAccess, Resources: []string{"reveal:NPM_TOKEN"}}}, revealNPM: true, injectNPM: true},
		{name: "one name", user: []capability.UserGrant{{Capability: capability.SecretsAccess, Resources: []string{"GITHUB_TOKEN"}}}, inject: true, bindings: 1},
		{name: "policy never", policy: "version = 1\n[ceilings]\nnever = [\"secrets_access\"]\n",
			user: []capability.UserGrant{{Capability: capability.SecretsAccess, Resources: []string{"GITHUB_TOKEN", "reveal:NPM_TOKEN"}}}},
		{name: "policy ceiling drops reveal", policy: "version = 1\n[ceilings]\nsecrets_access = [\"GITHUB_TOKEN\", \"NPM_TOKEN\"]\n",
			user: []capability.UserGrant{{Capability: capability.SecretsAccess, Resources: []string{"GITHUB_TOKEN", "reveal:NPM_TOKEN"}}}, inject: true, injectNPM: true, bindings: 1},
		{name: "policy pre-approves a name", policy: "version = 1\n[[preapprove]]\npack = \"gh\"\ngrants = [\"secrets_access=GITHUB_TOKEN\"]\n", inject: true, bindings: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := capability.Resolve(ref, secretRequest(t), tt.user, mustPolicy(t, tt.policy), testEnv)
			if err != nil {
				t.Fatal(err)
			}
			d := g.Secret("GITHUB_TOKEN")
			if got := d.Allowed(); got != tt.inject {
				t.Errorf("Secret(GITHUB_TOKEN) = %v (%s), want %v", got, d.Reason(), tt.inject)
			}
			if !d.Allowed() && !errors.Is(d.Err(), capability.ErrDenied) {
				t.Errorf("denial %v does not wrap ErrDenied", d.Err())
			}
			if got := g.Secret("NPM_TOKEN").Allowed(); got != tt.injectNPM {
				t.Errorf("Secret(NPM_TOKEN) = %v, want %v", got, tt.injectNPM)
			}
			if got := g.SecretReveal("NPM_TOKEN").Allowed(); got != tt.revealNPM {
				t.Errorf("SecretReveal(NPM_TOKEN) = %v, want %v", got, tt.revealNPM)
			}
			if got := g.Reveals(); got != tt.revealNPM {
				t.Errorf("Reveals() = %v, want %v", got, tt.revealNPM)
			}
			if got := g.SecretReveal("GITHUB_TOKEN").Allowed(); got {
				t.Errorf("SecretReveal(GITHUB_TOKEN) allowed: the pack asked only to inject it")
			}
			if got := len(g.Injections()); got != tt.bindings {
				t.Errorf("Injections() = %d, want %d", got, tt.bindings)
			}
			if g.Secret("OTHER").Allowed() {
				t.Errorf("Secret(OTHER) allowed: never requested")
			}
		})
	}
}

// TestSecretGrantDigest: a grant that reveals differs from one that only
// injects, so an approval of one never covers the other.
func TestSecretGrantDigest(t *testing.T) {
	ref := capability.PackRef{Name: "gh"}
	bare, _ := capability.Resolve(ref, secretRequest(t), []capability.UserGrant{{Capability: capability.SecretsAccess}}, nil, testEnv)
	reveal, _ := capability.Resolve(ref, secretRequest(t), []capability.UserGrant{{Capability: capability.SecretsAccess, Resources: []string{"GITHUB_TOKEN", "reveal:NPM_TOKEN"}}}, nil, testEnv)
	if bare.Digest() == reveal.Digest() {
		t.Fatalf("same digest for an injecting and a revealing grant")
	}
	if got, want := reveal.SecretNames(), []string{"GITHUB_TOKEN", "NPM_TOKEN"}; !slices.Equal(got, want) {
		t.Errorf("SecretNames() = %v, want %v", got, want)
	}
}

// TestSecretInjectionCheck: a binding must name a requested secret, a host
// within the network request, one header or query, and one placeholder.
func TestSecretInjectionCheck(t *testing.T) {
	ok := capability.SecretInjection{Name: "T", Host: "api.example.com", Header: "Authorization", Value: "Bearer {{secret.T}}"}
	tests := []struct {
		name string
		edit func(*capability.SecretInjection)
		ok   bool
	}{
		{"valid", func(*capability.SecretInjection) {}, true},
		{"query", func(in *capability.SecretInjection) { in.Header, in.Query, in.Value = "", "api_key", "" }, true},
		{"host with port", func(in *capability.SecretInjection) { in.Host = "api.example.com:443" }, true},
		{"unrequested secret", func(in *capability.SecretInjection) { in.Name, in.Value = "U", "{{secret.U}}" }, false},
		{"host outside network", func(in *capability.SecretInjection) { in.Host = "evil.example.org" }, false},
		{"subdomain outside network", func(in *capability.SecretInjection) { in.Host = "x.api.example.com" }, false},
		{"both header and query", func(in *capability.SecretInjection) { in.Query = "k" }, false},
		{"neither", func(in *capability.SecretInjection) { in.Header = "" }, false},
		{"client's header", func(in *capability.SecretInjection) { in.Header = "Host" }, false},
		{"bad header name", func(in *capability.SecretInjection) { in.Header = "Auth orization" }, false},
		{"no placeholder", func(in *capability.SecretInjection) { in.Value = "Bearer x" }, false},
		{"two placeholders", func(in *capability.SecretInjection) { in.Value = "{{secret.T}}{{secret.T}}" }, false},
		{"other placeholder", func(in *capability.SecretInjection) { in.Value = "{{secret.T}}{{secret.U}}" }, false},
		{"newline in value", func(in *capability.SecretInjection) { in.Value = "{{secret.T}}\r\nX-Evil: 1" }, false},
		{"query with reserved char", func(in *capability.SecretInjection) { in.Header, in.Query = "", "a&b" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ok
			tt.edit(&in)
			r := capability.Request{Network: []string{"api.example.com"}, SecretsAccess: []string{"T"}, SecretsInject: []capability.SecretInjection{in}}
			err := r.Validate()
			if got := err == nil; got != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			var ie *capability.InjectionError
			if err != nil && !errors.As(err, &ie) {
				t.Errorf("error %T is not an *InjectionError", err)
			}
		})
	}
}

func TestSecretInjectionMatches(t *testing.T) {
	in := capability.SecretInjection{Name: "T", Host: "127.0.0.1:8080", Header: "X-Key"}
	tests := []struct {
		host string
		port uint16
		want bool
	}{{"127.0.0.1", 8080, true}, {"127.0.0.1", 8081, false}, {"127.0.0.2", 8080, false}, {"localhost", 8080, false}}
	for _, tt := range tests {
		if got := in.Matches(tt.host, tt.port); got != tt.want {
			t.Errorf("Matches(%s, %d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
	if got, want := (capability.SecretInjection{Name: "T", Value: "Bearer {{secret.T}}"}).Render("v"), "Bearer v"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

// TestSecretCheckGrant: a person may grant a reveal only where the pack
// asked for one, and may always grant less (injection for a reveal).
func TestSecretCheckGrant(t *testing.T) {
	req := capability.Request{SecretsAccess: []string{"A", "reveal:B"}}
	tests := []struct {
		res []string
		ok  bool
	}{
		{[]string{"A"}, true},
		{[]string{"B"}, true},
		{[]string{"reveal:B"}, true},
		{[]string{"reveal:A"}, false},
		{[]string{"C"}, false},
		{[]string{"reveal:"}, false},
	}
	for _, tt := range tests {
		err := capability.CheckGrant(req, capability.UserGrant{Capability: capability.SecretsAccess, Resources: tt.res})
		if got := err == nil; got != tt.ok {
			t.Errorf("CheckGrant(%v) = %v, want ok=%v", tt.res, err, tt.ok)
		}
	}
}
