package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// ErrTokenRequired is returned when the HTTP transport would listen beyond
// loopback without a bearer token.
var ErrTokenRequired = errors.New("mcpserver: a bearer token is required to listen beyond loopback")

// ErrBadAddr is returned for an --http address that cannot be parsed.
var ErrBadAddr = errors.New("mcpserver: bad listen address")

// DefaultHTTPAddr is where `packs mcp --http` listens when given an address
// without a host (":7777") or no address at all: loopback only.
const DefaultHTTPAddr = "127.0.0.1:7777"

// HTTPConfig configures the Streamable HTTP transport.
type HTTPConfig struct {
	// Addr is host:port. A missing host means loopback (127.0.0.1), never
	// every interface: listening beyond loopback must be asked for by name.
	Addr string
	// AllowedHosts are extra Host header values (names or IPs, without port)
	// that the server answers to, e.g. the name a reverse proxy forwards. The
	// loopback names and the bound host are always allowed.
	AllowedHosts []string
	// Token, when set, is the bearer token every request must carry. It is
	// required when Addr is not a loopback address.
	Token string
}

// listenAddr returns the address to bind, defaulting the host to loopback.
func (c HTTPConfig) listenAddr() (string, error) {
	addr := c.Addr
	if addr == "" {
		addr = DefaultHTTPAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v (want host:port, e.g. %s)", ErrBadAddr, c.Addr, err, DefaultHTTPAddr)
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

// guard is the HTTP front door: it refuses requests whose Host or Origin is
// not on the allowlist (DNS rebinding) and, when a token is set, requests
// without it.
type guard struct {
	hosts []string // lower-case host names or IP literals, without port
	port  string   // the port we listen on; a Host header with another port is refused
}

// newGuard builds the allowlist for a server listening on boundAddr.
func newGuard(boundAddr string, extra []string) (*guard, error) {
	host, port, err := net.SplitHostPort(boundAddr)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadAddr, boundAddr, err)
	}
	g := &guard{port: port, hosts: []string{"localhost", "127.0.0.1", "::1"}}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsUnspecified() {
		g.hosts = append(g.hosts, strings.ToLower(host))
	}
	for _, h := range extra {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || strings.ContainsAny(h, "/:@ ") && !isIPv6(h) {
			return nil, fmt.Errorf("%w: allowed host %q must be a bare name or IP, without scheme or port", ErrBadAddr, h)
		}
		g.hosts = append(g.hosts, strings.Trim(h, "[]"))
	}
	slices.Sort(g.hosts)
	g.hosts = slices.Compact(g.hosts)
	return g, nil
}

func isIPv6(h string) bool {
	ip, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && ip.Is6()
}

// allowed reports whether hostport (a Host header or an Origin's host) is on
// the allowlist. A port, when present, must be ours.
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

// check returns "" when r may proceed, or the reason it is refused.
func (g *guard) check(r *http.Request) string {
	if !g.allowed(r.Host) {
		return fmt.Sprintf("host %q is not allowed (DNS rebinding protection); add it with --allow-host if it is yours", r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "" // not a browser: a native client sends no Origin
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !g.allowed(u.Host) {
		return fmt.Sprintf("origin %q is not allowed (DNS rebinding protection)", origin)
	}
	return ""
}

// wrap puts the guard, then the bearer check when token is set, in front of next.
func (g *guard) wrap(next http.Handler, token string) http.Handler {
	if token != "" {
		next = auth.RequireBearerToken(staticToken(token), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := g.check(r); reason != "" {
			http.Error(w, "packs: forbidden: "+reason, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// staticToken verifies a bearer token against one secret, in constant time.
func staticToken(secret string) auth.TokenVerifier {
	want := []byte(secret)
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(token), want) != 1 {
			return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: "bearer"}, nil
	}
}
