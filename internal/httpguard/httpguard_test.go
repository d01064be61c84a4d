package httpguard

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestListenAddr(t *testing.T) {
	const def = "127.0.0.1:7777"
	tests := []struct {
		addr, want string
		err        bool
	}{
		{"", def, false},
		{":9000", "127.0.0.1:9000", false},
		{"localhost:9000", "localhost:9000", false},
		{"0.0.0.0:9000", "0.0.0.0:9000", false},
		{"[::]:9000", "[::]:9000", false},
		{"9000", "", true},
		{"nonsense", "", true},
	}
	for _, tt := range tests {
		got, err := ListenAddr(tt.addr, def)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q, error %v", tt.addr, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, ErrBadAddr) {
			t.Errorf("ListenAddr(%q) error %v does not wrap ErrBadAddr", tt.addr, err)
		}
	}
}

func TestNewRejectsBadHosts(t *testing.T) {
	for _, h := range []string{"http://x.example", "x.example:80", "a b", "user@x", "", "  ", "[x.example]", "x/y"} {
		if _, err := New("127.0.0.1:1", []string{h}); !errors.Is(err, ErrBadAddr) {
			t.Errorf("New(allowed %q) error = %v, want ErrBadAddr", h, err)
		}
	}
	if _, err := New("no-port", nil); !errors.Is(err, ErrBadAddr) {
		t.Errorf("New(bound no-port) error = %v, want ErrBadAddr", err)
	}
}

// TestCheck: granted/denied pairs of Host and Origin for a server on
// loopback and one on every interface with extra allowed hosts.
func TestCheck(t *testing.T) {
	loop, err := New("127.0.0.1:7777", nil)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := New("0.0.0.0:7777", []string{"packs.corp.example", "[fd00::1]", "Packs.Example", "[::2]", "proxy.example.", "10.0.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	named, err := New("[::1]:7777", []string{"0:0:0:0:0:0:0:2"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		h      *Hosts
		host   string
		origin string
		want   bool
	}{
		{"loopback ip with port", loop, "127.0.0.1:7777", "", true},
		{"localhost with port", loop, "localhost:7777", "", true},
		{"localhost upper case, trailing dot", loop, "LOCALHOST.:7777", "", true},
		{"ipv6 loopback", loop, "[::1]:7777", "", true},
		{"no port", loop, "localhost", "", true},
		{"forged host", loop, "evil.example.com:7777", "", false},
		{"forged host without port", loop, "evil.example.com", "", false},
		{"right host, wrong port", loop, "127.0.0.1:8080", "", false},
		{"no host", loop, "", "", false},
		{"loopback origin", loop, "127.0.0.1:7777", "http://localhost:7777", true},
		{"https origin", loop, "127.0.0.1:7777", "https://127.0.0.1:7777", true},
		{"forged origin", loop, "127.0.0.1:7777", "http://evil.example.com", false},
		{"origin null", loop, "127.0.0.1:7777", "null", false},
		{"origin with other scheme", loop, "127.0.0.1:7777", "file://localhost:7777", false},
		{"origin on another port", loop, "127.0.0.1:7777", "http://localhost:3000", false},
		{"unspecified bind is not a host name", wide, "0.0.0.0:7777", "", false},
		{"allowed extra host", wide, "packs.corp.example:7777", "https://packs.corp.example:7777", true},
		{"allowed extra host, other case, trailing dot", wide, "PACKS.EXAMPLE.", "", true},
		{"allowed extra host given with trailing dot", wide, "proxy.example:7777", "", true},
		{"allowed extra ipv6", wide, "[fd00::1]:7777", "", true},
		{"allowed extra ipv6, other spelling", wide, "[FD00:0::1]:7777", "", true},
		{"allowed extra ipv6 in brackets", wide, "[::2]:7777", "", true},
		{"allowed extra ipv4", wide, "10.0.0.0:7777", "", true},
		{"extra host, wrong port", wide, "packs.example:7778", "", false},
		{"suffix of an extra host", wide, "example:7777", "", false},
		{"other host on a wide bind", wide, "attacker.example:7777", "", false},
		{"bound ipv6 host", named, "[0::1]:7777", "", true},
		{"extra ipv6 in long form", named, "[::2]:7777", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			reason := tt.h.Check(r)
			if got := reason == ""; got != tt.want {
				t.Errorf("Check(host %q, origin %q) allowed = %v (reason %q), want %v", tt.host, tt.origin, got, reason, tt.want)
			}
			if !tt.want && !strings.Contains(reason, "DNS rebinding") {
				t.Errorf("refusal %q does not say why", reason)
			}
		})
	}
}

// FuzzCheck: no Host or Origin makes Check panic, and whatever it lets
// through names an allowed host on the bound port (or no port).
func FuzzCheck(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:7777", ""}, {"localhost", "http://localhost:7777"}, {"[::1]:7777", "null"},
		{"evil.example:7777", ""}, {"PACKS.EXAMPLE.:7777", "https://packs.example"}, {"[fd00::1", "http://[::1"},
		{":7777", "http://:7777"}, {"[::ffff:127.0.0.1]:7777", "http://user@localhost:7777/x"},
	} {
		f.Add(s[0], s[1])
	}
	h, err := New("127.0.0.1:7777", []string{"packs.example", "fd00::1"})
	if err != nil {
		f.Fatal(err)
	}
	allowed := []string{"localhost", "127.0.0.1", "::1", "packs.example", "fd00::1"}
	f.Fuzz(func(t *testing.T, host, origin string) {
		r := httptest.NewRequest(http.MethodGet, "http://x/", nil)
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if h.Check(r) != "" {
			return
		}
		name, port, err := net.SplitHostPort(host)
		if err != nil {
			name, port = host, ""
		}
		if port != "" && port != "7777" {
			t.Fatalf("host %q passed with another port", host)
		}
		if !slices.Contains(allowed, canonical(name)) {
			t.Fatalf("host %q passed as %q, not on the allowlist", host, canonical(name))
		}
	})
}

// FuzzNew: no allowed-host value makes New panic; an accepted one is a bare
// name or an IP, and a server allows it by name on its own port.
func FuzzNew(f *testing.F) {
	for _, s := range []string{"packs.example", "[fd00::1]", "10.0.0.1", "http://x", "x:80", "a b", "", "EXAMPLE.", "[x]", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, extra string) {
		h, err := New("127.0.0.1:7777", []string{extra})
		if err != nil {
			if !errors.Is(err, ErrBadAddr) {
				t.Fatalf("New(%q): error %v does not wrap ErrBadAddr", extra, err)
			}
			return
		}
		bare := strings.Trim(strings.TrimSpace(extra), "[]")
		if _, err := netip.ParseAddr(bare); err != nil && strings.ContainsAny(bare, "/:@ []") {
			t.Fatalf("New(%q) accepted a value that is neither a bare name nor an IP", extra)
		}
		if hostport := net.JoinHostPort(bare, "7777"); !h.Allowed(hostport) {
			t.Fatalf("New(%q): Host %q is refused", extra, hostport)
		}
	})
}

// BenchmarkCheck is the guard's cost on every request: Host and Origin
// against an allowlist with extra hosts.
func BenchmarkCheck(b *testing.B) {
	h, err := New("0.0.0.0:7777", []string{"packs.corp.example", "[fd00::1]", "proxy.example"})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
	r.Host = "packs.corp.example:7777"
	r.Header.Set("Origin", "https://packs.corp.example:7777")
	b.ReportAllocs()
	for b.Loop() {
		if reason := h.Check(r); reason != "" {
			b.Fatal(reason)
		}
	}
}
