package web

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/packs-run/packs/internal/httpguard"
)

// tokenCookie holds the token in the browser once /?token=TOKEN was opened.
const tokenCookie = "packs_token"

// guard is the front door: Host and Origin allowlist (DNS rebinding), the
// token, and cross-origin protection of state changes (CSRF).
type guard struct {
	hosts *httpguard.Hosts
	token string
	csrf  *http.CrossOriginProtection
}

func newGuard(boundAddr string, extra []string, token string) (*guard, error) {
	hosts, err := httpguard.New(boundAddr, extra)
	if err != nil {
		return nil, err
	}
	return &guard{hosts: hosts, token: token, csrf: http.NewCrossOriginProtection()}, nil
}

// hasToken reports whether r carries the token, as a bearer token or in the
// cookie.
func (g *guard) hasToken(r *http.Request) bool {
	got := ""
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		got = strings.TrimPrefix(a, "Bearer ")
	} else if c, err := r.Cookie(tokenCookie); err == nil {
		got = c.Value
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) == 1
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
		if g.token != "" {
			// Opening /?token=TOKEN once puts it in a cookie the page's own
			// requests carry; the address bar then drops it.
			if t := r.URL.Query().Get("token"); r.Method == http.MethodGet && r.URL.Path == "/" && t != "" &&
				subtle.ConstantTimeCompare([]byte(t), []byte(g.token)) == 1 {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
				http.Redirect(w, r, "/", http.StatusSeeOther)
				return
			}
			if !g.hasToken(r) {
				writeError(w, http.StatusUnauthorized, codeUnauthorized, "web: a token is required: open the address packs serve printed (it ends in ?token=...), or send Authorization: Bearer TOKEN")
				return
			}
		}
		csrf.ServeHTTP(w, r)
	})
}
