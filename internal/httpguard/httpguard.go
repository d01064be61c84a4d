// Package httpguard is the DNS rebinding guard shared by the two HTTP
// servers, packs serve (internal/web) and packs mcp --http
// (internal/mcpserver): where to listen by default (loopback), whether an
// address stays on this machine, the allowlist of Host and Origin values a
// request may carry, and the token both servers require on loopback too
// (NewToken, CheckToken, TokenMatches, BearerToken). How a refusal is
// written stays with each server: the web app also takes the token in a
// cookie, MCP clients send only a bearer token.
package httpguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// ErrBadAddr is returned for a listen address or an allowed host that
// cannot be parsed.
var ErrBadAddr = errors.New("httpguard: bad listen address")

// ListenAddr returns the address to bind for addr (host:port): def when
// addr is empty, and 127.0.0.1 for a missing host, never every interface.
func ListenAddr(addr, def string) (string, error) {
	if addr == "" {
		addr = def
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v (want host:port, e.g. %s)", ErrBadAddr, addr, err, def)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Hosts is the allowlist of a server bound to one address: the loopback
// names, the bound host (unless it is every interface) and the extra hosts
// its operator named, on the bound port. Build it with New; it is read-only
// afterwards, so one value serves concurrent requests.
type Hosts struct {
	names []string // lower case, no trailing dot; IPs in canonical form; sorted
	port  string   // a Host with another port is refused
	reach Reach
}

// Reach says where a server can be opened: OpenAt lists the host:port
// addresses people can put in a browser or a client's config that the
// guard accepts (a loopback address first, then the bound host, then each
// allowed host); Beyond reports whether the server listens beyond this
// machine's loopback, so that others may reach it. Both servers print it
// on start, and the web app shows Beyond in its header.
type Reach struct {
	Bound  string   // the address as bound
	OpenAt []string // host:port
	Beyond bool
}

// New builds the allowlist for a server listening on boundAddr (host:port,
// as the listener reports it). extra are names or IPs without scheme or
// port (the --allow-host flags); a malformed one is an error wrapping
// ErrBadAddr.
func New(boundAddr string, extra []string) (*Hosts, error) {
	host, port, err := net.SplitHostPort(boundAddr)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadAddr, boundAddr, err)
	}
	h := &Hosts{port: port, names: []string{"localhost", "127.0.0.1", "::1"}}
	h.reach.Bound = boundAddr
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	switch {
	case err == nil && ip.IsUnspecified():
		// Every interface (Go listens on both families for either
		// wildcard): opened here through loopback.
		h.reach.OpenAt, h.reach.Beyond = append(h.reach.OpenAt, net.JoinHostPort("127.0.0.1", port)), true
	default:
		h.names = append(h.names, canonical(host))
		h.reach.OpenAt = append(h.reach.OpenAt, net.JoinHostPort(canonical(host), port))
		h.reach.Beyond = err == nil && !ip.IsLoopback() || err != nil && canonical(host) != "localhost"
	}
	for _, x := range extra {
		x = strings.TrimSpace(x)
		if _, err := netip.ParseAddr(strings.Trim(x, "[]")); err != nil && (x == "" || strings.ContainsAny(x, "/:@ []")) {
			return nil, fmt.Errorf("%w: allowed host %q must be a bare name or IP, without scheme or port", ErrBadAddr, x)
		}
		h.names = append(h.names, canonical(x))
		if a := net.JoinHostPort(canonical(x), port); !slices.Contains(h.reach.OpenAt, a) {
			h.reach.OpenAt = append(h.reach.OpenAt, a)
		}
	}
	slices.Sort(h.names)
	h.names = slices.Compact(h.names)
	return h, nil
}

// Reach says where the server can be opened (see Reach).
func (h *Hosts) Reach() Reach {
	r := h.reach
	r.OpenAt = slices.Clone(r.OpenAt)
	return r
}

// canonical is the form names are compared in: lower case, without
// brackets or a trailing dot, an IP as netip prints it.
func canonical(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.String()
	}
	return host
}

// Allowed reports whether hostport (a Host header or an Origin's host) is
// on the allowlist; a port, when present, must be the bound one.
func (h *Hosts) Allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port != "" && port != h.port {
		return false
	}
	_, ok := slices.BinarySearch(h.names, canonical(host))
	return ok
}

// Check returns "" when r's Host and Origin are allowed, else why not, for
// the refusal the server writes. A request without Origin is not from a
// browser page (native clients send none) and is judged by Host alone.
func (h *Hosts) Check(r *http.Request) string {
	if !h.Allowed(r.Host) {
		return fmt.Sprintf("host %q is not allowed (DNS rebinding protection): add it with --allow-host if it is yours", r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !h.Allowed(u.Host) {
		return fmt.Sprintf("origin %q is not allowed (DNS rebinding protection)", origin)
	}
	return ""
}
