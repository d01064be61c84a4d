package web

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// tokenCookie holds the token in the browser once /?token=TOKEN was opened.
const tokenCookie = "packs_token"

// listenAddr returns the address to bind, defaulting the host to loopback.
func listenAddr(addr string) (string, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v (want host:port, e.g. %s)", ErrBadAddr, addr, err, DefaultAddr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// isLoopbackHost reports whether host (no port) names the local machine only.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// guard is the front door: Host and Origin allowlist (DNS rebinding), the
// token, and cross-origin protection of state changes (CSRF).
type guard struct {
	hosts []string // lower-case names or IP literals, sorted
	port  string
	token string
	csrf  *http.CrossOriginProtection
}

func newGuard(boundAddr string, extra []string, token string) (*guard, error) {
	host, port, err := net.SplitHostPort(boundAddr)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadAddr, boundAddr, err)
	}
	g := &guard{port: port, token: token, hosts: []string{"localhost", "127.0.0.1", "::1"}, csrf: http.NewCrossOriginProtection()}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsUnspecified() {
		g.hosts = append(g.hosts, strings.ToLower(host))
	}
	for _, h := range extra {
		h = strings.ToLower(strings.TrimSpace(h))
		if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			h = ip.String()
		} else if h == "" || strings.ContainsAny(h, "/:@ ") {
			return nil, fmt.Errorf("%w: allowed host %q must be a bare name or IP, without scheme or port", ErrBadAddr, h)
		}
		g.hosts = append(g.hosts, h)
	}
	slices.Sort(g.hosts)
	g.hosts = slices.Compact(g.hosts)
	return g, nil
}

// allowed reports whether hostport (a Host header or an Origin's host) is on
// the allowlist; a port, when present, must be ours.
func (g *guard) allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port != "" && port != g.port {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	_, ok := slices.BinarySearch(g.hosts, host)
	return ok
}

// hostReason returns "" when r's Host and Origin are allowed, else why not.
func (g *guard) hostReason(r *http.Request) string {
	if !g.allowed(r.Host) {
		return fmt.Sprintf("host %q is not allowed (DNS rebinding protection): add it with --allow-host if it is yours", r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !g.allowed(u.Host) {
		return fmt.Sprintf("origin %q is not allowed (DNS rebinding and CSRF protection)", origin)
	}
	return ""
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
		if reason := g.hostReason(r); reason != "" {
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
