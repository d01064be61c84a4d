package mcpserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGuardCheck(t *testing.T) {
	loop, err := newGuard("127.0.0.1:7777", nil)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := newGuard("0.0.0.0:7777", []string{"packs.corp.example", "[fd00::1]"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		g      *guard
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
		{"loopback origin", loop, "127.0.0.1:7777", "http://localhost:7777", true},
		{"forged origin", loop, "127.0.0.1:7777", "http://evil.example.com", false},
		{"origin null", loop, "127.0.0.1:7777", "null", false},
		{"origin with other scheme", loop, "127.0.0.1:7777", "file://localhost:7777", false},
		{"origin on another port", loop, "127.0.0.1:7777", "http://localhost:3000", false},
		{"unspecified bind is not a host name", wide, "0.0.0.0:7777", "", false},
		{"allowed extra host", wide, "packs.corp.example:7777", "https://packs.corp.example:7777", true},
		{"allowed extra ipv6", wide, "[fd00::1]:7777", "", true},
		{"other host on a wide bind", wide, "attacker.example:7777", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			reason := tt.g.check(r)
			if got := reason == ""; got != tt.want {
				t.Errorf("check(host %q, origin %q) allowed = %v (reason %q), want %v", tt.host, tt.origin, got, reason, tt.want)
			}
		})
	}
}

func TestNewGuardRejectsBadHosts(t *testing.T) {
	for _, h := range []string{"http://x.example", "x.example:80", "a b", "user@x"} {
		if _, err := newGuard("127.0.0.1:1", []string{h}); !errors.Is(err, ErrBadAddr) {
			t.Errorf("newGuard(allowed %q) error = %v, want ErrBadAddr", h, err)
		}
	}
}

func TestListenAddr(t *testing.T) {
	tests := []struct {
		addr, want string
		err        bool
	}{
		{"", DefaultHTTPAddr, false},
		{":9000", "127.0.0.1:9000", false},
		{"localhost:9000", "localhost:9000", false},
		{"0.0.0.0:9000", "0.0.0.0:9000", false},
		{"9000", "", true},
	}
	for _, tt := range tests {
		got, err := HTTPConfig{Addr: tt.addr}.listenAddr()
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("listenAddr(%q) = %q, %v; want %q, error %v", tt.addr, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, ErrBadAddr) {
			t.Errorf("listenAddr(%q) error %v does not wrap ErrBadAddr", tt.addr, err)
		}
	}
}

func TestBearerToken(t *testing.T) {
	g, err := newGuard("127.0.0.1:7777", nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := g.wrap(ok, "s3cret-token")
	tests := []struct {
		name, header string
		want         int
	}{
		{"right token", "Bearer s3cret-token", http.StatusNoContent},
		{"lower-case scheme", "bearer s3cret-token", http.StatusNoContent},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"prefix of the token", "Bearer s3cret", http.StatusUnauthorized},
		{"no token", "", http.StatusUnauthorized},
		{"basic auth", "Basic czNjcmV0LXRva2Vu", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Errorf("status = %d, want %d", w.Code, tt.want)
			}
		})
	}
}
