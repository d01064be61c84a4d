package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoPack is the MCP server's test pack: one trivial Extism tool.
const echoPack = "../../internal/mcpserver/testdata/echo-pack"

// TestMCPHTTPNeedsTokenOnLoopback: packs mcp --http on loopback, with no
// token configured, makes one and prints it; a request without it (a tool
// allowed to reach 127.0.0.1 opening its own session) is refused, and the
// Go SDK client with it works.
func TestMCPHTTPNeedsTokenOnLoopback(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", echoPack, "--grant", "none", "--yes").mustCode(t, exitOK)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--home", home, "mcp", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1", mcpTokenEnv+"=", tokenEnv+"=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	printed := regexp.MustCompile(`over MCP at (http://\S+/mcp)|header "Authorization: Bearer (\S+)"`)
	var url, token string
	lines := bufio.NewScanner(stderr)
	deadline := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	for (url == "" || token == "") && lines.Scan() {
		if m := printed.FindStringSubmatch(lines.Text()); m != nil {
			url, token = url+m[1], token+m[2]
		}
	}
	deadline.Stop()
	go io.Copy(io.Discard, stderr)
	if url == "" || len(token) != 43 {
		t.Fatalf("packs mcp --http printed the address %q and the token %q: want both, the token of 32 random bytes", url, token)
	}
	initialize := func(authz string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, authz := range []string{"", "Bearer wrong", "Bearer " + token[:42], "Basic " + token} {
		if got := initialize(authz); got != http.StatusUnauthorized {
			t.Errorf("initialize with Authorization %q: got %d, want 401", authz, got)
		}
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "token-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(token)}}, nil)
	if err != nil {
		t.Fatalf("connecting with the printed token: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list with the token: %v", err)
	}
}

// bearer sends every request with "Authorization: Bearer" and the token.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPFlagsAreChecked(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", echoPack, "--grant", "none", "--yes").mustCode(t, exitOK)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp", "--pack", "no-such-pack"}, exitUsage, "no such installed pack"},
		{[]string{"mcp", "extra"}, exitUsage, "mcp"},
		{[]string{"mcp", "--http", "7777"}, exitFailure, "bad listen address"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--allow-host", "http://x"}, exitFailure, "bare name"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--token-file", home + "/missing"}, exitFailure, "--token-file"},
	}
	for _, tt := range tests {
		r := withHome(t, home, tt.args...).mustCode(t, tt.code)
		if line := r.oneLineError(t); !strings.Contains(line, tt.want) {
			t.Errorf("packs %s: error %q, want it to mention %q", strings.Join(tt.args, " "), line, tt.want)
		}
	}
}

// TestMCPOverProcessStdio runs `packs mcp` as a child process (this test
// binary, standing in for packs) and talks to it through its real stdin and
// stdout with the Go SDK's client.
func TestMCPOverProcessStdio(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", echoPack, "--grant", "none", "--yes").mustCode(t, exitOK)
	policy := home + "/policy.toml"
	if err := os.WriteFile(policy, []byte("[approval]\nauto_approve = [\"enable_tools\", \"echo-pack__echo\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--home", home, "--policy", policy, "mcp")
	cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1")
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "process-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"pack_id": "echo-pack"}}); err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "echo-pack__echo" }) {
		t.Fatalf("tools after enable_tools: %v", tools.Tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: map[string]any{"message": "through a process"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, "through a process") {
		t.Errorf("echo = %q (error %v)", text, res.IsError)
	}
}
