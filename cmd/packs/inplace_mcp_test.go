package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInPlaceMCP: packs mcp serves a public script skill kept in
// ~/.agents/skills beside the installed packs: a real MCP client reads its
// docs and its files (as resources) at once; its script is denied until the person grants python3 (in
// another process: packs grant), then runs; an edit of the folder refuses
// the next call and says what changed, the one after asks for a new
// grant; once added (keeping the grant), a new session runs it installed.
func TestInPlaceMCP(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	t.Setenv("HOME", user)
	dir := filepath.Join(user, ".agents", "skills", "webapp-testing")
	copyTree(t, filepath.Join(publicSkills, "anthropic-skills", "skills", "webapp-testing"), dir)
	policy := filepath.Join(home, "policy.toml")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte("[approval]\nauto_approve = [\"open_docs\", \"read_file\", \"exec_best_effort\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	connect := func() *mcp.ClientSession {
		t.Helper()
		cmd := exec.Command(exe, "--home", home, "--policy", policy, "mcp")
		cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1", "HOME="+user)
		cmd.Stderr = os.Stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "inplace-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	help := map[string]any{"pack_id": "webapp-testing", "command": "python3", "args": []string{"scripts/with_server.py", "--help"}, "cwd_policy": "pack_root"}

	cs := connect()
	defer cs.Close()
	if got := call(cs, "open_docs", map[string]any{"pack_id": "webapp-testing"}); !strings.Contains(got, "Web Application Testing") {
		t.Errorf("open_docs: %s", got)
	}
	if got := call(cs, "exec_best_effort", help); strings.Contains(got, "usage:") || !strings.Contains(got, "denied") {
		t.Errorf("the script without a grant: %s", got)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "pack://webapp-testing/scripts/with_server.py"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "def main") {
		t.Errorf("the script as a resource: %+v, %v", rr, err)
	}
	withHome(t, home, "--policy", policy, "grant", "webapp-testing", "terminal_exec").mustCode(t, exitOK)
	if got := call(cs, "exec_best_effort", help); !strings.Contains(got, "usage: with_server.py") {
		t.Errorf("the granted script: %s", got)
	}
	script := filepath.Join(dir, "scripts", "with_server.py")
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, append(b, "\n# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := call(cs, "exec_best_effort", help); strings.Contains(got, "usage:") || !strings.Contains(got, "scripts/with_server.py") {
		t.Errorf("the call after the edit: %s", got)
	}
	if got := call(cs, "exec_best_effort", help); strings.Contains(got, "usage:") || !strings.Contains(got, "grant it again") {
		t.Errorf("the next call: %s", got)
	}
	cs.Close()

	withHome(t, home, "--policy", policy, "grant", "webapp-testing", "terminal_exec").mustCode(t, exitOK)
	add := withHome(t, home, "--policy", policy, "add", dir, "--yes").mustCode(t, exitOK)
	if !strings.Contains(add.stdout, "keeps the grants") {
		t.Errorf("add:\n%s", add.stdout)
	}
	cs = connect()
	defer cs.Close()
	if got := call(cs, "exec_best_effort", help); !strings.Contains(got, "usage: with_server.py") {
		t.Errorf("installed, in a new session: %s", got)
	}
}
