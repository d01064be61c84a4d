package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoPack is the MCP server's test pack: one trivial Extism tool.
const echoPack = "../../internal/mcpserver/testdata/echo-pack"

func TestMCPRefusesWideBindWithoutToken(t *testing.T) {
	home := t.TempDir()
	r := withHome(t, home, "mcp", "--http", "0.0.0.0:0").mustCode(t, exitFailure)
	if line := r.oneLineError(t); !strings.Contains(line, mcpTokenEnv) {
		t.Errorf("error %q does not say how to set a token", line)
	}
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
