package mcpserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/httpguard"
)

func TestBearerToken(t *testing.T) {
	hosts, err := httpguard.New("127.0.0.1:7777", nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := guard(hosts, ok, "s3cret-token", nil)
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
		{"token with a suffix", "Bearer s3cret-tokenx", http.StatusUnauthorized},
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

// TestListenAllowedHosts: --allow-host values reach the shared guard: a
// malformed one stops Listen, an allowed name is answered.
func TestListenAllowedHosts(t *testing.T) {
	e := newEnv(t, "")
	if _, err := e.srv.Listen(HTTPConfig{Addr: "127.0.0.1:0", AllowedHosts: []string{"http://x"}, Token: testToken}); !errors.Is(err, ErrBadAddr) {
		t.Errorf("allowed host with a scheme: got %v, want ErrBadAddr", err)
	}
	if _, err := e.srv.Listen(HTTPConfig{Addr: "7777", Token: testToken}); !errors.Is(err, ErrBadAddr) {
		t.Errorf("address without a port: got %v, want ErrBadAddr", err)
	}
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", AllowedHosts: []string{"packs.corp.example"}, Token: testToken})
	port := h.URL()[strings.LastIndex(h.URL(), ":")+1 : strings.LastIndex(h.URL(), "/")]
	if code, body := post(t, h.URL(), "packs.corp.example:"+port, "", "Bearer "+testToken); code != http.StatusOK {
		t.Errorf("allowed host: got %d %s", code, body)
	}
	if code, _ := post(t, h.URL(), "other.corp.example:"+port, "", "Bearer "+testToken); code != http.StatusForbidden {
		t.Errorf("other host: got %d, want 403", code)
	}
}
