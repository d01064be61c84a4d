package web

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/packs-run/packs/internal/httpguard"
	"github.com/packs-run/packs/internal/identity"
)

// tokenCookie is the name of the cookie that holds the token in the
// browser once the printed address (/?token=TOKEN) was opened. It carries
// the port: cookies are shared by every port of a host, and two servers on
// one machine must not overwrite each other's.
func tokenCookie(boundAddr string) string {
	_, port, _ := net.SplitHostPort(boundAddr)
	return "packs_token_" + port
}

// guard is the front door: Host and Origin allowlist (DNS rebinding), the
// token, and cross-origin protection of state changes (CSRF).
//
// The token is required of every request but the public ones: GET and HEAD
// of the page's own files (they hold no data), of GET /v1/status (the
// version and whether a model is set; it names no path) and of GET
// /v1/openapi.json (the API's description). Every other /v1
// request, whatever its method, and /metrics need it, on loopback too: a tool granted
// network to 127.0.0.1 reaches the port like any local process, and must
// neither change grants or approvals nor read chats, files or the audit
// log. The list is of what is public, so a route added later is guarded.
type guard struct {
	hosts  *httpguard.Hosts
	token  string
	cookie string
	csrf   *http.CrossOriginProtection
	// public are the /v1 routes that need no credential, "GET /v1/status":
	// the route table's (route.roles == public).
	public map[string]bool
	// With OIDC: bearer JWTs are verified by oidc, and the web sign-in's
	// sessions are found by login from the cookie named session.
	oidc    *identity.Provider
	login   *identity.Login
	session string
}

func newGuard(boundAddr string, extra []string, token string) (*guard, error) {
	hosts, err := httpguard.New(boundAddr, extra)
	if err != nil {
		return nil, err
	}
	return &guard{hosts: hosts, token: token, cookie: tokenCookie(boundAddr), csrf: http.NewCrossOriginProtection()}, nil
}

// person returns who r comes from: the token holder when it carries the
// token (as a bearer token or in the cookie), else, with OIDC, the person
// of a bearer JWT the issuer signed or of a signed-in session. A bearer
// header, when present, is the only credential looked at. The error is
// identity.ErrNoRole for a valid token whose person holds no role; false
// with a nil error: no credential that holds.
func (g *guard) person(r *http.Request) (identity.Person, bool, error) {
	if r.Header.Get("Authorization") != "" {
		got, ok := httpguard.BearerToken(r)
		switch {
		case !ok:
			return identity.Person{}, false, nil
		case httpguard.TokenMatches(got, g.token):
			return identity.TokenHolder, true, nil
		case g.oidc == nil:
			return identity.Person{}, false, nil
		}
		p, err := g.oidc.Verify(r.Context(), got)
		if errors.Is(err, identity.ErrNoRole) {
			return identity.Person{}, false, err
		}
		return p, err == nil, nil
	}
	if c, err := r.Cookie(g.cookie); err == nil && httpguard.TokenMatches(c.Value, g.token) {
		return identity.TokenHolder, true, nil
	}
	if g.login != nil {
		if c, err := r.Cookie(g.session); err == nil {
			p, ok := g.login.Session(c.Value)
			return p, ok, nil
		}
	}
	return identity.Person{}, false, nil
}

// isPublic reports whether r may be answered without a credential: the
// page's files, the sign-in, and the public routes of the table.
func (g *guard) isPublic(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if r.URL.Path == MetricsPath {
		return false // outside /v1, but not one of the page's files
	}
	if r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/") {
		return true
	}
	return g.public["GET "+r.URL.Path]
}

func (g *guard) wrap(next http.Handler) http.Handler {
	csrf := g.csrf.Handler(next)
	g.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, codeForbidden, "web: cross-origin request refused (CSRF protection): use the app at its own address")
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := g.hosts.Check(r); reason != "" {
			writeError(w, http.StatusForbidden, codeForbidden, "web: forbidden: "+reason)
			return
		}
		if q := r.URL.Query(); q.Has("token") && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasPrefix(r.URL.Path, "/v1") {
			g.exchange(w, r, q)
			return
		}
		p, ok, err := g.person(r)
		switch {
		case ok:
			r = withPerson(r, p)
		case g.isPublic(r):
		case err != nil:
			writeError(w, http.StatusForbidden, codeForbidden, "web: "+err.Error())
			return
		default:
			how := "open the address packs serve printed (it ends in ?token=...), or send Authorization: Bearer TOKEN"
			if g.login != nil {
				how = "sign in at /auth/login, or send Authorization: Bearer with a token the issuer signed for packs (or packs' own token)"
			}
			writeError(w, http.StatusUnauthorized, codeUnauthorized, "web: a token is required: "+how)
			return
		}
		csrf.ServeHTTP(w, r)
	})
}

// exchange answers the printed address, PATH?token=TOKEN: the right token
// goes into an HttpOnly, SameSite=Strict cookie that the page's own
// requests carry, and the browser is sent to the address without it, so
// the token leaves the address bar and the history (as Jupyter does).
func (g *guard) exchange(w http.ResponseWriter, r *http.Request, q url.Values) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	if !httpguard.TokenMatches(q.Get("token"), g.token) {
		writeError(w, http.StatusUnauthorized, codeUnauthorized, "web: the token in the address is not this server's: open the address packs serve printed when it started")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	q.Del("token")
	to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	if strings.HasPrefix(to.Path, "//") || strings.Contains(to.Path, `\`) {
		to.Path = "/" // never a redirect to another host
	}
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}
