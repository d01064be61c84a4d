package mcpserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/telemetry"
)

// serveHTTP listens on cfg over real loopback TCP and serves until the test ends.
func (e *testEnv) serveHTTP(t *testing.T, cfg HTTPConfig) *HTTPServer {
	t.Helper()
	h, err := e.srv.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return h
}

// testToken is the bearer token of the test servers.
const testToken = "mcp-test-token-1c9e4b7a2d5f8e0b3a6c9d2e5f8a1b4c"

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends an initialize request with the given Host, Origin and
// Authorization headers and returns the status and body.
func post(t *testing.T, url, host, origin, authz string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHTTPForgedHostIsRefused(t *testing.T) {
	e := newEnv(t, "")
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken})
	port := h.URL()[strings.LastIndex(h.URL(), ":")+1 : strings.LastIndex(h.URL(), "/")]
	tests := []struct {
		name, host, origin string
		want               int
	}{
		{"forged host", "evil.example.com", "", http.StatusForbidden},
		{"forged host with our port", "evil.example.com:" + port, "", http.StatusForbidden},
		{"forged origin", "", "http://evil.example.com", http.StatusForbidden},
		{"rebinding: both forged", "evil.example.com:" + port, "http://evil.example.com:" + port, http.StatusForbidden},
		{"localhost name", "localhost:" + port, "", http.StatusOK},
		{"loopback origin", "", "http://127.0.0.1:" + port, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, h.URL(), tt.host, tt.origin, "Bearer "+testToken)
			if code != tt.want {
				t.Errorf("status = %d (%s), want %d", code, strings.TrimSpace(body), tt.want)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(body, "DNS rebinding") {
				t.Errorf("refusal %q does not say why", body)
			}
		})
	}
}

// TestHTTPTokenRequired: the HTTP transport never listens without a strong
// bearer token, on loopback too (a tool allowed to reach 127.0.0.1 would
// open its own session and approve its own calls), and refuses every
// request without it.
func TestHTTPTokenRequired(t *testing.T) {
	e := newEnv(t, "")
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0", "0.0.0.0:0"} {
		for _, tok := range []string{"", "t0ken", testToken[:31]} {
			if _, err := e.srv.Listen(HTTPConfig{Addr: addr, Token: tok}); !errors.Is(err, ErrTokenRequired) {
				t.Errorf("Listen(%s) with token %q: %v, want ErrTokenRequired", addr, tok, err)
			}
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		h := e.serveHTTP(t, HTTPConfig{Addr: addr, Token: testToken})
		url := h.URL()
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Errorf("URL of a server on %s = %s, want the loopback address", addr, url)
		}
		for _, authz := range []string{"", "Bearer wrong", "Bearer " + testToken[:len(testToken)-1], "Bearer " + testToken + "x", "Basic " + testToken} {
			if code, _ := post(t, url, "", "", authz); code != http.StatusUnauthorized {
				t.Errorf("%s, Authorization %q: status %d, want 401", addr, authz, code)
			}
		}
		if code, body := post(t, url, "", "", "Bearer "+testToken); code != http.StatusOK {
			t.Errorf("%s, right token: status %d (%s), want 200", addr, code, body)
		}
	}
}

// bearer adds a token to every request of a client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPSessionsAreSeparateChats(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken})
	ctx := context.Background()
	dial := func(name string) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.URL(), HTTPClient: &http.Client{Transport: bearer{testToken}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := dial("first"), dial("second")
	if text, isErr := callText(t, a, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	if text, isErr := callText(t, a, "echo-pack__echo", map[string]any{"message": "over http"}); isErr || !strings.Contains(text, "over http") {
		t.Fatalf("echo over HTTP = %q (error %v)", text, isErr)
	}
	if names := toolNames(t, b); slices.Contains(names, "echo-pack__echo") {
		t.Errorf("second session sees %v: enabling tools in one session leaked into another", names)
	}
	rows := e.auditRows(t)
	if len(rows) != 2 || rows[0]["chat"] == "" || rows[0]["chat"] != rows[1]["chat"] {
		t.Errorf("audit rows = %v, want two calls of one chat", rows)
	}
}

// TestHTTPMetricsNeedToken: /metrics on packs mcp --http sits behind the
// same guard as /mcp: the bearer token, and the Host allowlist.
func TestHTTPMetricsNeedToken(t *testing.T) {
	e := newEnv(t, "")
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken, Metrics: telemetry.NewMetrics().Handler()})
	url := strings.TrimSuffix(h.URL(), MCPPath) + MetricsPath
	get := func(host, authz string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		name, host, authz string
		want              int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"wrong token", "", "Bearer " + strings.Repeat("x", len(testToken)), http.StatusUnauthorized},
		{"forged host", "evil.example.com", "Bearer " + testToken, http.StatusForbidden},
		{"the token", "", "Bearer " + testToken, http.StatusOK},
	} {
		code, body := get(tt.host, tt.authz)
		if code != tt.want {
			t.Errorf("%s: GET /metrics = %d, want %d", tt.name, code, tt.want)
		}
		if got := strings.Contains(body, "go_goroutines"); got != (tt.want == http.StatusOK) {
			t.Errorf("%s: the metrics served: %v, want %v", tt.name, got, tt.want == http.StatusOK)
		}
	}
}
