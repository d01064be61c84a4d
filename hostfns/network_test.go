package hostfns

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
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

func hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Probe", "yes")
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, "hello from "+r.Host)
}

// TestNetworkGranted: a granted host answers through the guest's
// http_request, with status and headers, and the request is recorded
// without its query string.
func TestNetworkGranted(t *testing.T) {
	s := newServer(t, hello)
	c, rec := newCall(t, capability.Request{Network: []string{"localhost"}})
	r := mustProbe(t, c, "net", op{"op": "http", "url": s.at("localhost", "/path?token=s3cr3t")})
	if !r.OK || r.Status != http.StatusTeapot || !strings.HasPrefix(r.Data, "hello from localhost") || r.Headers["x-probe"] != "yes" {
		t.Fatalf("http = %+v, want 418, the body and x-probe", r)
	}
	requireRecorded(t, rec, capability.Network, s.at("localhost", "/path"), true)
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

// TestNetworkAttacks: each request goes to a host the grant does not
// cover; each ends in a denial that traps the call, is recorded, and never
// reaches the server.
func TestNetworkAttacks(t *testing.T) {
	target := newServer(t, hello)
	redirect := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.at("127.0.0.1", "/stolen?k=v"), http.StatusFound)
	})
	cases := []struct {
		name     string
		grant    string
		url      string
		resource string
		server   *server // must not be reached
	}{
		{"another host by name", "api.example.com", target.at("localhost", "/"), target.at("localhost", "/"), target},
		{"by IP when only the name is granted", "localhost", target.at("127.0.0.1", "/"), target.at("127.0.0.1", "/"), target},
		{"by name when only the IP is granted", "127.0.0.1", target.at("localhost", "/"), target.at("localhost", "/"), target},
		{"by IPv6 literal when only the name is granted", "localhost", "http://[::1]:" + target.port + "/", "http://[::1]:" + target.port + "/", target},
		{"by redirect to a host not granted", "localhost", redirect.at("localhost", "/go"), target.at("127.0.0.1", "/stolen"), target},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.server.hits.Load()
			c, rec := newCall(t, capability.Request{Network: []string{tc.grant}})
			_, err := runProbe(t, c, "net", op{"op": "http", "url": tc.url})
			if !errors.Is(err, capability.ErrDenied) {
				t.Fatalf("err = %v, want a denial", err)
			}
			requireRecorded(t, rec, capability.Network, tc.resource, false)
			if tc.server.hits.Load() != before {
				t.Fatal("the host that was not granted was contacted")
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
	c, rec := newCall(t, capability.Request{Network: []string{"localhost"}})
	r := mustProbe(t, c, "net", op{"op": "http", "url": redirect.at("localhost", "/go")})
	if r.Status != http.StatusTeapot {
		t.Fatalf("status = %d, want 418", r.Status)
	}
	requireRecorded(t, rec, capability.Network, redirect.at("localhost", "/go"), true)
	requireRecorded(t, rec, capability.Network, target.at("localhost", "/next"), true)
}

// TestNetworkFetch drives the request path directly: refused schemes,
// the response cap, error messages without the query, and the dial check.
func TestNetworkFetch(t *testing.T) {
	big := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, MaxResponseBytes+1))
	})
	n := newNetwork()
	ctx := context.Background()
	c, rec := newCall(t, capability.Request{Network: []string{"localhost"}})
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
	c, rec := newCall(t, capability.Request{Network: []string{"localhost"}})
	tr := newNetwork().client.Transport.(*http.Transport)
	_, err := tr.DialContext(WithCall(context.Background(), c), "tcp", "127.0.0.1:"+s.port)
	if !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("dial 127.0.0.1 with only localhost granted: %v, want a denial", err)
	}
	requireRecorded(t, rec, capability.Network, "127.0.0.1", false)
	conn, err := tr.DialContext(WithCall(context.Background(), c), "tcp", "localhost:"+s.port)
	if err != nil {
		t.Fatalf("dial localhost: %v", err)
	}
	conn.Close()
	if _, err := tr.DialContext(context.Background(), "tcp", "localhost:"+s.port); !errors.Is(err, ErrNoCall) {
		t.Fatalf("dial without a call: %v, want ErrNoCall", err)
	}
}
