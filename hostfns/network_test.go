package hostfns

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/packs-run/packs/capability"
)

// server is a real loopback HTTP server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
	port string
	host atomic.Value // the Host header of the last request
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.host.Store(r.Host)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	s.port = u.Port()
	return s
}

// at returns the server's URL with host in place of its address.
func (s *server) at(host, pathAndQuery string) string {
	return "http://" + host + ":" + s.port + pathAndQuery
}

// addr is the server's loopback address.
func (s *server) addr() netip.AddrPort {
	return netip.MustParseAddrPort("127.0.0.1:" + s.port)
}

func hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Probe", "yes")
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, "hello from "+r.Host)
}

// loopback grants localhost and the loopback address on every port: a
// name that resolves to a special-purpose address needs both.
var loopback = []string{"localhost:*", "127.0.0.1:*"}

// withLookup returns a network whose resolver answers from names (each
// name once per lookup) and counts the lookups.
func withLookup(names map[string][]string, lookups *atomic.Int64) *network {
	n := newNetwork()
	n.lookup = func(ctx context.Context, name string) ([]netip.Addr, error) {
		if lookups != nil {
			lookups.Add(1)
		}
		var out []netip.Addr
		for _, a := range names[name] {
			out = append(out, netip.MustParseAddr(a))
		}
		if out == nil {
			return nil, errors.New("no such host")
		}
		return out, nil
	}
	return n
}

// TestNetworkGranted: a granted host answers through the guest's
// http_request, with status and headers, and the request is recorded
// without its query string, by URL and by the address dialled.
func TestNetworkGranted(t *testing.T) {
	s := newServer(t, hello)
	c, rec := newCall(t, capability.Request{Network: loopback})
	r := mustProbe(t, c, "net", op{"op": "http", "url": s.at("localhost", "/path?token=s3cr3t")})
	if !r.OK || r.Status != http.StatusTeapot || !strings.HasPrefix(r.Data, "hello from localhost") || r.Headers["x-probe"] != "yes" {
		t.Fatalf("http = %+v, want 418, the body and x-probe", r)
	}
	requireRecorded(t, rec, capability.Network, s.at("localhost", "/path"), true)
	requireRecorded(t, rec, capability.Network, "localhost:"+s.port+" (127.0.0.1)", true)
	for _, e := range rec.all() {
		if strings.Contains(e.Resource, "s3cr3t") || strings.Contains(e.Reason, "s3cr3t") {
			t.Fatalf("the query string was recorded: %+v", e)
		}
	}
}

// TestNetworkNotGranted: without the network capability the module's
// http_request import is refused before instantiation, with a recorded
// denial naming the capability.
func TestNetworkNotGranted(t *testing.T) {
	s := newServer(t, hello)
	c, rec := newCall(t, capability.Request{})
	_, err := runProbe(t, c, "net", op{"op": "http", "url": s.at("localhost", "/")})
	var de *capability.DeniedError
	if !errors.As(err, &de) || de.Capability != capability.Network {
		t.Fatalf("err = %v, want a network denial", err)
	}
	requireRecorded(t, rec, capability.Network, NetworkNamespace, false)
	if s.hits.Load() != 0 {
		t.Fatal("the server was contacted")
	}
}

// TestNetworkAttacks: each request goes to a destination the grant does
// not cover; each ends in a denial that traps the call, is recorded, and
// never reaches the server.
func TestNetworkAttacks(t *testing.T) {
	target := newServer(t, hello)
	redirect := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.at("127.0.0.1", "/stolen?k=v"), http.StatusFound)
	})
	cases := []struct {
		name     string
		grant    []string
		url      string
		resource string
		cause    error
	}{
		{"another host by name", []string{"api.example.com:*"}, target.at("localhost", "/"), target.at("localhost", "/"), capability.ErrNotRequested},
		{"by IP when only the name is granted", []string{"localhost:*"}, target.at("127.0.0.1", "/"), target.at("127.0.0.1", "/"), capability.ErrNotRequested},
		{"by name when only the IP is granted", []string{"127.0.0.1:*"}, target.at("localhost", "/"), target.at("localhost", "/"), capability.ErrNotRequested},
		{"by IPv6 literal when only the name is granted", []string{"localhost:*"}, "http://[::1]:" + target.port + "/", "http://[::1]:" + target.port + "/", capability.ErrNotRequested},
		{"by IPv4-mapped literal", []string{"localhost:*", "*:*"}, "http://[::ffff:127.0.0.1]:" + target.port + "/", target.at("127.0.0.1", "/"), capability.ErrSpecialAddress},
		{"a granted name that resolves to loopback", []string{"localhost:*"}, target.at("localhost", "/"), "localhost:" + target.port + " (127.0.0.1)", capability.ErrSpecialAddress},
		{"a granted name and its address on default ports only", []string{"localhost", "127.0.0.1"}, target.at("localhost", "/"), target.at("localhost", "/"), capability.ErrNotRequested},
		{"a granted address on another port", []string{"127.0.0.1:1"}, target.at("127.0.0.1", "/"), target.at("127.0.0.1", "/"), capability.ErrNotRequested},
		{"by redirect to a host not granted", []string{"localhost:" + redirect.port, "127.0.0.1:" + redirect.port}, redirect.at("localhost", "/go"), target.at("127.0.0.1", "/stolen"), capability.ErrNotRequested},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := target.hits.Load()
			c, rec := newCall(t, capability.Request{Network: tc.grant})
			_, err := runProbe(t, c, "net", op{"op": "http", "url": tc.url})
			if !errors.Is(err, capability.ErrDenied) || !errors.Is(err, tc.cause) {
				t.Fatalf("err = %v, want a denial for %v", err, tc.cause)
			}
			requireRecorded(t, rec, capability.Network, tc.resource, false)
			if target.hits.Load() != before {
				t.Fatal("the host that was not granted was contacted")
			}
		})
	}
}

// TestNetworkZonedLiteral is defect 1 of issue 11: an IPv6 literal whose
// zone ID looks like a granted name ([::ffff:127.0.0.1%25.en.wikipedia.org])
// dialled loopback under a *.wikipedia.org grant, and under a policy
// ceiling of names. A zone ID is refused outright; the server is never
// reached.
func TestNetworkZonedLiteral(t *testing.T) {
	s := newServer(t, hello)
	pol, err := capability.ParsePolicy("policy.toml", []byte("[ceilings]\nnetwork = [\"*.corp.example\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		grant []string
		pol   *capability.Policy
		url   string
	}{
		{"grant", []string{"*.wikipedia.org"}, nil, "http://[::ffff:127.0.0.1%25.en.wikipedia.org]:" + s.port + "/"},
		{"grant on every port", []string{"*.wikipedia.org:*"}, nil, "http://[::ffff:127.0.0.1%25.en.wikipedia.org]:" + s.port + "/"},
		{"plain loopback", []string{"*.wikipedia.org:*"}, nil, "http://[::1%25.en.wikipedia.org]:" + s.port + "/"},
		{"ceiling", []string{"*"}, pol, "http://[::ffff:127.0.0.1%25.x.corp.example]:" + s.port + "/"},
		{"ceiling, grant on every port", []string{"*:*"}, pol, "http://[::ffff:127.0.0.1%25.x.corp.example]:" + s.port + "/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newCall(t, capability.Request{})
			req := capability.Request{Network: tc.grant}
			g, err := capability.Resolve(capability.PackRef{Name: "probe"}, req, []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopeOnce}}, tc.pol, capability.Env{Workspace: c.Workspace})
			if err != nil {
				t.Fatal(err)
			}
			c.Grant = g
			approve(t, c)
			_, err = runProbe(t, c, "net", op{"op": "http", "url": tc.url})
			if !errors.Is(err, ErrInvalidRequest) && !errors.Is(err, capability.ErrDenied) {
				t.Fatalf("err = %v, want the URL refused", err)
			}
			if s.hits.Load() != 0 {
				t.Fatal("loopback was reached through a zoned literal")
			}
		})
	}
}

// TestNetworkRefusedURLs: URLs that are ambiguous, or not http(s), are
// refused before any decision, however wide the grant.
func TestNetworkRefusedURLs(t *testing.T) {
	s := newServer(t, hello)
	n := newNetwork()
	c, rec := newCall(t, capability.Request{Network: []string{"*:*", "localhost:*", "127.0.0.0/8:*", "[::1]:*"}})
	for _, raw := range []string{
		"file:///etc/passwd", "ftp://localhost/x", "gopher://localhost/", "http:///nohost", "://bad", "http:localhost",
		"http://[::ffff:127.0.0.1%25.en.wikipedia.org]:" + s.port + "/",
		"http://[::1%25lo]:" + s.port + "/",
		"http://[fe80::1%25eth0]:" + s.port + "/",
		"http://user:pass@127.0.0.1:" + s.port + "/",
		"http://localhost:" + s.port + "@127.0.0.1:" + s.port + "/",
		"http://127.1:" + s.port + "/",
		"http://0x7f.0.0.1:" + s.port + "/",
		"http://2130706433:" + s.port + "/",
		"http://0177.0.0.1:" + s.port + "/",
		"http://127.0.0.1.:" + s.port + "/",
		"http://[127.0.0.1]:" + s.port + "/",
		"http://loc%61lhost:" + s.port + "/",
		"http://localhost:0" + s.port + "/",
		"http://localhost:/",
		"http://localhost:99999/",
		"http://a_b.localhost:" + s.port + "/",
		"http://xn--zz.example/",
	} {
		if _, err := n.fetch(context.Background(), c, HTTPRequest{URL: raw}, nil); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("fetch %q: %v, want ErrInvalidRequest", raw, err)
		}
	}
	if s.hits.Load() != 0 || len(rec.all()) != 0 {
		t.Fatalf("a refused URL was decided or reached the server:\n%s", dump(rec.all()))
	}
}

// TestNetworkResolvedAddress is defect 2 of issue 11: the decision is on
// the address a name resolves to, looked up once and dialled exactly. A
// granted name that resolves to a special-purpose address is refused
// unless that address is granted too.
func TestNetworkResolvedAddress(t *testing.T) {
	s := newServer(t, hello)
	var lookups atomic.Int64
	n := withLookup(map[string][]string{
		"evil.example":          {"127.0.0.1"},
		"meta.example":          {"169.254.169.254"},
		"mapped.example":        {"::ffff:127.0.0.1"},
		"nat64.example":         {"64:ff9b::7f00:1"},
		"private.example":       {"10.0.0.1"},
		"v6.example":            {"::1"},
		"both.example":          {"::1", "127.0.0.1"},
		"xn--bcher-kva.example": {"127.0.0.1"},
	}, &lookups)
	cases := []struct {
		name     string
		grant    []string
		url      string
		allowed  bool
		resource string // of the dial
	}{
		{"granted name to loopback", []string{"evil.example:*"}, s.at("evil.example", "/"), false, "evil.example:" + s.port + " (127.0.0.1)"},
		{"wildcard name to loopback", []string{"*.example:*"}, s.at("evil.example", "/"), false, "evil.example:" + s.port + " (127.0.0.1)"},
		{"any host to loopback", []string{"*:*"}, s.at("evil.example", "/"), false, "evil.example:" + s.port + " (127.0.0.1)"},
		{"granted name to metadata", []string{"*.example:*"}, s.at("meta.example", "/"), false, "meta.example:" + s.port + " (169.254.169.254)"},
		{"granted name to a mapped loopback", []string{"*.example:*"}, s.at("mapped.example", "/"), false, "mapped.example:" + s.port + " (127.0.0.1)"},
		{"granted name to NAT64 loopback", []string{"*.example:*"}, s.at("nat64.example", "/"), false, "nat64.example:" + s.port + " (64:ff9b::7f00:1)"},
		{"granted name to a private address", []string{"*.example:*", "127.0.0.1:*"}, s.at("private.example", "/"), false, "private.example:" + s.port + " (10.0.0.1)"},
		{"granted name to IPv6 loopback", []string{"*.example:*", "127.0.0.1:*"}, s.at("v6.example", "/"), false, "v6.example:" + s.port + " (::1)"},
		{"name and address granted", []string{"evil.example:*", "127.0.0.1:" + s.port}, s.at("evil.example", "/"), true, "evil.example:" + s.port + " (127.0.0.1)"},
		{"name and CIDR granted", []string{"evil.example:*", "127.0.0.0/8:*"}, s.at("evil.example", "/"), true, "evil.example:" + s.port + " (127.0.0.1)"},
		{"only the granted one of two addresses", []string{"both.example:*", "127.0.0.1:*"}, s.at("both.example", "/"), true, "both.example:" + s.port + " (127.0.0.1)"},
		{"an internationalized name", []string{"bücher.example:*", "127.0.0.1:*"}, s.at("BÜCHER.example", "/"), true, "xn--bcher-kva.example:" + s.port + " (127.0.0.1)"},
		{"a punycode name under a Unicode grant", []string{"bücher.example:*", "127.0.0.1:*"}, s.at("xn--bcher-kva.example", "/"), true, "xn--bcher-kva.example:" + s.port + " (127.0.0.1)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, looked := s.hits.Load(), lookups.Load()
			c, rec := newCall(t, capability.Request{Network: tc.grant})
			resp, err := n.fetch(context.Background(), c, HTTPRequest{URL: tc.url}, nil)
			if tc.allowed {
				if err != nil || resp.Status != http.StatusTeapot || s.hits.Load() != before+1 {
					t.Fatalf("fetch: %v (status %d), want the server's answer", err, resp.Status)
				}
			} else {
				if !errors.Is(err, capability.ErrSpecialAddress) {
					t.Fatalf("fetch: %v, want ErrSpecialAddress", err)
				}
				if s.hits.Load() != before {
					t.Fatal("the special-purpose address was dialled")
				}
			}
			requireRecorded(t, rec, capability.Network, tc.resource, tc.allowed)
			if got := lookups.Load() - looked; got != 1 {
				t.Fatalf("%d lookups, want exactly 1", got)
			}
		})
	}
	// The server saw the name in its IDNA form, not the address.
	if got, _ := s.host.Load().(string); got != "xn--bcher-kva.example:"+s.port {
		t.Fatalf("Host header = %q, want the punycode name", got)
	}
}

// TestNetworkLocalhostName: with the real resolver, localhost on port 80
// (a default port) under a grant of the name alone is refused: it resolves
// to loopback.
func TestNetworkLocalhostName(t *testing.T) {
	c, rec := newCall(t, capability.Request{Network: []string{"localhost"}})
	_, err := newNetwork().fetch(context.Background(), c, HTTPRequest{URL: "http://localhost/"}, nil)
	if !errors.Is(err, capability.ErrSpecialAddress) {
		t.Fatalf("fetch http://localhost/ = %v, want ErrSpecialAddress", err)
	}
	requireRecorded(t, rec, capability.Network, "http://localhost/", true)
	if len(rec.denials()) != 1 {
		t.Fatalf("want one recorded denial of the address:\n%s", dump(rec.all()))
	}
}

// TestNetworkRebinding: the name is looked up once per connection, and
// the connection goes to that answer, not to a second one.
func TestNetworkRebinding(t *testing.T) {
	s := newServer(t, hello)
	var lookups atomic.Int64
	n := newNetwork()
	n.lookup = func(ctx context.Context, name string) ([]netip.Addr, error) {
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	}
	c, _ := newCall(t, capability.Request{Network: []string{"rebind.example:*", "127.0.0.1:*"}})
	resp, err := n.fetch(context.Background(), c, HTTPRequest{URL: s.at("rebind.example", "/")}, nil)
	if err != nil || resp.Status != http.StatusTeapot || lookups.Load() != 1 {
		t.Fatalf("fetch: %v, %d lookups; want the loopback server's answer after one lookup", err, lookups.Load())
	}
}

// TestNetworkPorts: a grant without a port allows 80 and 443 only; one with
// a port allows exactly that port.
func TestNetworkPorts(t *testing.T) {
	s := newServer(t, hello)
	port, _ := strconv.Atoi(s.port)
	cases := []struct {
		grant []string
		url   string
		want  bool
	}{
		{[]string{"127.0.0.1"}, s.at("127.0.0.1", "/"), false},
		{[]string{"localhost", "127.0.0.1"}, s.at("localhost", "/"), false},
		{[]string{"127.0.0.1:" + s.port}, s.at("127.0.0.1", "/"), true},
		{[]string{"127.0.0.1:" + strconv.Itoa(port+1)}, s.at("127.0.0.1", "/"), false},
		{[]string{"127.0.0.1:*"}, s.at("127.0.0.1", "/"), true},
		{[]string{"localhost:" + s.port, "127.0.0.1:" + s.port}, s.at("localhost", "/"), true},
		{[]string{"localhost:" + s.port, "127.0.0.1"}, s.at("localhost", "/"), false},
	}
	for _, tc := range cases {
		c, rec := newCall(t, capability.Request{Network: tc.grant})
		before := s.hits.Load()
		_, err := newNetwork().fetch(context.Background(), c, HTTPRequest{URL: tc.url}, nil)
		if got := err == nil; got != tc.want {
			t.Errorf("%q under %q: err = %v, want allowed %v", tc.url, tc.grant, err, tc.want)
		}
		if !tc.want && (s.hits.Load() != before || !errors.Is(err, capability.ErrDenied) || len(rec.denials()) != 1) {
			t.Errorf("%q under %q: %v, %d hits; want one recorded denial and no contact:\n%s", tc.url, tc.grant, err, s.hits.Load()-before, dump(rec.all()))
		}
	}
}

// TestNetworkRedirectSpecial: each redirect hop is decided by name and its
// dial by address: a hop to a special-purpose literal, or to a granted name
// that resolves to one, is refused and recorded.
func TestNetworkRedirectSpecial(t *testing.T) {
	target := newServer(t, hello)
	to := func(u string) *server {
		return newServer(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, u, http.StatusFound) })
	}
	n := withLookup(map[string][]string{"start.example": {"127.0.0.1"}, "evil.example": {"127.0.0.1"}}, nil)
	cases := []struct {
		name     string
		redirect *server
		grant    []string
		resource string
	}{
		{"to a metadata literal", to("http://169.254.169.254/latest/meta-data/"), []string{"*:*"}, "http://169.254.169.254/latest/meta-data/"},
		{"to a loopback literal", to(target.at("127.0.0.1", "/")), []string{"*:*"}, target.at("127.0.0.1", "/")},
		{"to a name that resolves to loopback", to(target.at("evil.example", "/")), []string{"*:*"}, "evil.example:" + target.port + " (127.0.0.1)"},
		{"to a zoned literal", to("http://[::ffff:127.0.0.1%25.start.example]:" + target.port + "/"), []string{"*:*"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The first hop is granted by name and by its exact address and port.
			grant := append([]string{"127.0.0.1:" + tc.redirect.port}, tc.grant...)
			c, rec := newCall(t, capability.Request{Network: grant})
			_, err := n.fetch(context.Background(), c, HTTPRequest{URL: tc.redirect.at("start.example", "/go")}, nil)
			if !errors.Is(err, capability.ErrDenied) && !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want the hop refused", err)
			}
			requireRecorded(t, rec, capability.Network, tc.redirect.at("start.example", "/go"), true)
			if tc.resource != "" {
				requireRecorded(t, rec, capability.Network, tc.resource, false)
			}
			if target.hits.Load() != 0 {
				t.Fatal("the redirect reached the special-purpose address")
			}
		})
	}
}

// TestNetworkRedirectWithinGrant: a redirect to a granted host is
// followed, and each hop is recorded.
func TestNetworkRedirectWithinGrant(t *testing.T) {
	target := newServer(t, hello)
	redirect := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.at("localhost", "/next"), http.StatusFound)
	})
	c, rec := newCall(t, capability.Request{Network: loopback})
	r := mustProbe(t, c, "net", op{"op": "http", "url": redirect.at("localhost", "/go")})
	if r.Status != http.StatusTeapot {
		t.Fatalf("status = %d, want 418", r.Status)
	}
	requireRecorded(t, rec, capability.Network, redirect.at("localhost", "/go"), true)
	requireRecorded(t, rec, capability.Network, target.at("localhost", "/next"), true)
}

// TestNetworkReserved: packs' own listening addresses (WithReserved) are
// never dialled, whatever the grant, directly or by redirect; other
// addresses still are.
func TestNetworkReserved(t *testing.T) {
	own := newServer(t, hello)
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, own.at("localhost", "/v1/packs/x/grants"), http.StatusTemporaryRedirect)
	})
	ctx := WithReserved(context.Background(), own.addr())
	n := newNetwork()
	for _, u := range []string{own.at("127.0.0.1", "/v1/packs/x/grants"), own.at("localhost", "/"), other.at("localhost", "/")} {
		c, rec := newCall(t, capability.Request{Network: []string{"*:*", "localhost:*", "127.0.0.0/8:*"}})
		_, err := n.fetch(ctx, c, HTTPRequest{URL: u, Method: "POST"}, []byte(`{"grant":"terminal_exec"}`))
		if !errors.Is(err, capability.ErrReservedAddress) {
			t.Errorf("fetch %s: %v, want ErrReservedAddress", u, err)
		}
		if !slicesContainsReason(rec.denials(), own.port) {
			t.Errorf("fetch %s: no recorded denial of the reserved address:\n%s", u, dump(rec.all()))
		}
	}
	if own.hits.Load() != 0 {
		t.Fatal("packs' own address was reached")
	}
	// Unreserved, the same grant reaches it; an unspecified reserved address
	// reserves its port on every address.
	c, _ := newCall(t, capability.Request{Network: loopback})
	if _, err := n.fetch(context.Background(), c, HTTPRequest{URL: own.at("localhost", "/")}, nil); err != nil {
		t.Fatalf("fetch without reservation: %v", err)
	}
	wild := WithReserved(context.Background(), netip.MustParseAddrPort("[::]:"+own.port))
	if _, err := n.fetch(wild, c, HTTPRequest{URL: own.at("localhost", "/")}, nil); !errors.Is(err, capability.ErrReservedAddress) {
		t.Fatalf("fetch under [::]:%s reserved: %v, want ErrReservedAddress", own.port, err)
	}
	// Reservations add up and do not leak into the parent context.
	both := WithReserved(ctx, other.addr())
	if got := len(reservedFrom(both)); got != 2 || len(reservedFrom(ctx)) != 1 {
		t.Fatalf("reserved = %d and %d, want 2 and 1", got, len(reservedFrom(ctx)))
	}
}

func slicesContainsReason(ex []capability.Exercise, port string) bool {
	for _, e := range ex {
		if strings.Contains(e.Resource, ":"+port) && strings.Contains(e.Reason, "packs' own") {
			return true
		}
	}
	return false
}

// TestNetworkFetch drives the request path directly: refused schemes,
// the response cap and error messages without the query.
func TestNetworkFetch(t *testing.T) {
	big := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, MaxResponseBytes+1))
	})
	n := newNetwork()
	ctx := context.Background()
	c, rec := newCall(t, capability.Request{Network: loopback})
	for _, raw := range []string{"file:///etc/passwd", "ftp://localhost/x", "gopher://localhost/", "http:///nohost", "://bad"} {
		if _, err := n.fetch(ctx, c, HTTPRequest{URL: raw}, nil); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("fetch %q: %v, want ErrInvalidRequest", raw, err)
		}
	}
	if _, err := n.fetch(ctx, c, HTTPRequest{URL: big.at("localhost", "/big?sig=s3cr3t")}, nil); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("fetch of a body over the cap: %v, want ErrResponseTooLarge", err)
	} else if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error holds the query string: %v", err)
	}
	resp, err := n.fetch(ctx, c, HTTPRequest{URL: big.at("localhost", "/"), Method: "post", Headers: map[string]string{"X-A": "1"}}, []byte("body"))
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("POST: %v (%d bytes)", err, len(resp.Body))
	}
	if got := len(rec.denials()); got != 0 {
		t.Fatalf("denials recorded for granted hosts:\n%s", dump(rec.all()))
	}
}

// TestNetworkDialCheck: a dial to an address the grant does not cover is
// refused and recorded, whatever the URL said.
func TestNetworkDialCheck(t *testing.T) {
	s := newServer(t, hello)
	c, rec := newCall(t, capability.Request{Network: []string{"localhost:*"}})
	tr := newNetwork().client.Transport.(*http.Transport)
	for _, addr := range []string{"127.0.0.1:" + s.port, "localhost:" + s.port, "[::ffff:127.0.0.1%25.localhost]:" + s.port} {
		if _, err := tr.DialContext(WithCall(context.Background(), c), "tcp", addr); !errors.Is(err, capability.ErrDenied) && !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("dial %s with only the name localhost granted: %v, want a refusal", addr, err)
		}
	}
	requireRecorded(t, rec, capability.Network, "127.0.0.1:"+s.port, false)
	if got := len(rec.denials()); got != 2 {
		t.Fatalf("%d denials recorded, want 2 (the address, and localhost's address):\n%s", got, dump(rec.all()))
	}
	c, _ = newCall(t, capability.Request{Network: loopback})
	conn, err := tr.DialContext(WithCall(context.Background(), c), "tcp", "localhost:"+s.port)
	if err != nil {
		t.Fatalf("dial localhost: %v", err)
	}
	conn.Close()
	if s.hits.Load() != 0 {
		t.Fatal("a bare dial made a request")
	}
	if _, err := tr.DialContext(context.Background(), "tcp", "localhost:"+s.port); !errors.Is(err, ErrNoCall) {
		t.Fatalf("dial without a call: %v, want ErrNoCall", err)
	}
}

// FuzzNetworkDecision runs a URL through everything but the connection:
// strict parsing, the decision by name, one lookup and the decision by
// address. It never panics, and every address it would dial is one the
// grant allows on that port.
func FuzzNetworkDecision(f *testing.F) {
	for _, s := range []string{
		"http://api.example.com/", "https://a.example.com:8443/x", "http://[::ffff:127.0.0.1%25.en.wikipedia.org]:80/",
		"http://evil.example.com/", "http://10.1.2.3:22/", "http://[::1]:9000/", "http://198.51.100.7/", "http://169.254.169.254/",
		"http://bücher.example.com/", "http://127.1/", "http://user@api.example.com/", "HTTPS://API.EXAMPLE.COM:443/", "http://api.example.org:8443/",
	} {
		f.Add(s)
	}
	n := withLookup(map[string][]string{
		"api.example.com":                     {"93.184.216.34"},
		"a.example.com":                       {"93.184.216.34", "127.0.0.1"},
		"evil.example.com":                    {"127.0.0.1", "169.254.169.254", "::ffff:10.0.0.1", "64:ff9b::7f00:1"},
		"xn--bcher-kva.example.com":           {"10.1.2.3"},
		"api.example.org":                     {"::1", "93.184.216.34"},
		"xn--bcher-kva.xn--bcher-kva.example": {"127.0.0.1"},
	}, nil)
	c, _ := newCall(f, capability.Request{Network: []string{"*.example.com", "api.example.org:8443", "10.0.0.0/8:*", "[::1]:9000", "198.51.100.7"}})
	c.Recorder = &countRecorder{}
	allowed := func(name string, ap netip.AddrPort) bool {
		ip, port := ap.Addr(), ap.Port()
		dflt := port == 80 || port == 443
		switch {
		case netip.MustParsePrefix("10.0.0.0/8").Contains(ip):
			return true
		case ip == netip.MustParseAddr("::1"):
			return port == 9000
		case ip == netip.MustParseAddr("198.51.100.7"):
			return dflt
		case ip == netip.MustParseAddr("93.184.216.34"):
			return strings.HasSuffix(name, ".example.com") && dflt || name == "api.example.org" && port == 8443
		}
		return false
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, port, err := parseURL(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("parseURL(%q) = %v, want ErrInvalidRequest", raw, err)
			}
			return
		}
		if err := c.decideURL(u, port); err != nil {
			return
		}
		targets, err := n.resolve(context.Background(), c, net.JoinHostPort(u.Hostname(), strconv.Itoa(int(port))))
		if err != nil {
			return
		}
		for _, tg := range targets {
			if tg.addr.Port() != port || !allowed(u.Hostname(), tg.addr) {
				t.Fatalf("%q would dial %s", raw, tg.addr)
			}
		}
	})
}
