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
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0"})
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
			code, body := post(t, h.URL(), tt.host, tt.origin, "")
			if code != tt.want {
				t.Errorf("status = %d (%s), want %d", code, strings.TrimSpace(body), tt.want)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(body, "DNS rebinding") {
				t.Errorf("refusal %q does not say why", body)
			}
		})
	}
}

func TestHTTPTokenRequiredBeyondLoopback(t *testing.T) {
	e := newEnv(t, "")
	if _, err := e.srv.Listen(HTTPConfig{Addr: "0.0.0.0:0"}); !errors.Is(err, ErrTokenRequired) {
		t.Fatalf("Listen(0.0.0.0) without a token: %v, want ErrTokenRequired", err)
	}
	h := e.serveHTTP(t, HTTPConfig{Addr: "0.0.0.0:0", Token: "t0ken"})
	url := h.URL()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("URL of a server on every interface = %s, want the loopback address", url)
	}
	if code, _ := post(t, url, "", "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", code)
	}
	if code, _ := post(t, url, "", "", "Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d, want 401", code)
	}
	if code, body := post(t, url, "", "", "Bearer t0ken"); code != http.StatusOK {
		t.Errorf("right token: status %d (%s), want 200", code, body)
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
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: "s3cret"})
	ctx := context.Background()
	dial := func(name string) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.URL(), HTTPClient: &http.Client{Transport: bearer{"s3cret"}}}, nil)
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
