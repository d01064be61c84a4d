package mcpserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/httpguard"
	"github.com/packs-run/packs/internal/identity"
)

// methodRoles declares who may send each MCP method the server answers:
// the handshake and its notifications anyone signed in; listing, reading
// and calling an admin or a member (an auditor reads the audit log, not
// tools). A method not listed is refused to everyone, so a method the SDK
// starts to answer is refused until it is given a role here
// (TestMCPMethodRoles).
var methodRoles = map[string]identity.Roles{
	"initialize":                         identity.Everyone,
	"notifications/initialized":          identity.Everyone,
	"notifications/cancelled":            identity.Everyone,
	"notifications/progress":             identity.Everyone,
	"notifications/roots/list_changed":   identity.Everyone,
	"ping":                               identity.Everyone,
	"server/discover":                    identity.Everyone,
	"logging/setLevel":                   identity.Admin | identity.Member,
	"tools/list":                         identity.Admin | identity.Member,
	"tools/call":                         identity.Admin | identity.Member,
	"resources/list":                     identity.Admin | identity.Member,
	"resources/templates/list":           identity.Admin | identity.Member,
	"resources/read":                     identity.Admin | identity.Member,
	"resources/subscribe":                identity.Admin | identity.Member,
	"resources/unsubscribe":              identity.Admin | identity.Member,
	"subscriptions/listen":               identity.Admin | identity.Member,
	"prompts/list":                       identity.Admin | identity.Member,
	"prompts/get":                        identity.Admin | identity.Member,
	"completion/complete":                identity.Admin | identity.Member,
	"notifications/elicitation/complete": identity.Admin | identity.Member,
}

// allowed refuses a method the conn's person holds no role for.
func (c *conn) allowed(method string) error {
	want, ok := methodRoles[method]
	if !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("packs: method %s is not served (it has no role)", method)}
	}
	if !c.person.Roles.Has(want) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("packs: %s needs one of the roles %s; %s holds %s: ask an admin, or have the policy's [roles] give it", method, want, c.person.Name, c.person.Roles)}
	}
	return nil
}

// owner is who the conn's chat belongs to.
func (c *conn) owner() chat.Owner {
	return chat.Owner{Issuer: c.person.Issuer, Subject: c.person.Subject}
}

// personKey is where the bearer check leaves the request's person.
const personKey = "packs.person"

// verifier checks a bearer token: packs' own token is its holder; with
// OIDC, a JWT the issuer signed for packs is its person. The SDK ties each
// session to the UserID, so one person cannot use another's session.
func verifier(secret string, oidc *identity.Provider) auth.TokenVerifier {
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if httpguard.TokenMatches(token, secret) {
			return &auth.TokenInfo{UserID: "bearer", Extra: map[string]any{personKey: identity.TokenHolder}}, nil
		}
		if oidc == nil {
			return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
		}
		p, err := oidc.Verify(ctx, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		return &auth.TokenInfo{UserID: p.Issuer + "#" + p.Subject, Extra: map[string]any{personKey: p}}, nil
	}
}

// personOf is the person the bearer check found for r; the token holder
// when there is none (stdio has no bearer: the person at the terminal).
func personOf(r *http.Request) identity.Person {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		if p, ok := ti.Extra[personKey].(identity.Person); ok {
			return p
		}
	}
	return identity.TokenHolder
}

// metricsRole serves h to an admin or an auditor (the token holder is
// both): /metrics counts every pack's calls and denials, which a member
// does not see of others.
func metricsRole(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := personOf(r); !p.Roles.Has(identity.Admin | identity.Auditor) {
			http.Error(w, fmt.Sprintf("packs: %s needs one of the roles admin, auditor; %s holds %s", MetricsPath, p.Name, p.Roles), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
