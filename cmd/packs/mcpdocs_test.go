package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDocsMCPConfigs: every client configuration in docs/mcp.md and
// README.md works as written. Each stdio server (command "packs") is started with its own
// arguments, with the json-tools example pack installed, and a client lists
// its tools (flat mode's among them when the arguments ask for it); each
// HTTP server names the /mcp endpoint and a bearer token header.
func TestDocsMCPConfigs(t *testing.T) {
	var doc []byte
	for _, f := range []string{"../../docs/mcp.md", "../../README.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc = append(doc, b...)
	}
	jsonTools, err := filepath.Abs("../../wasm-examples/json-tools")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-s", "-C", filepath.Dir(jsonTools), "json-tools/bin/json-tools.wasm", "json-tools/bin/json-schema.wasm").CombinedOutput(); err != nil {
		t.Fatalf("building the json-tools example: %v\n%s", err, out)
	}
	home := t.TempDir()
	withHome(t, home, "add", jsonTools, "--grant", "none", "--yes").mustCode(t, exitOK)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	stdio, http := 0, 0
	for i, b := range blocks {
		var cfg struct {
			MCPServers map[string]docServer `json:"mcpServers"`
			Servers    map[string]docServer `json:"servers"` // VS Code
		}
		if err := json.Unmarshal(b[1], &cfg); err != nil {
			continue // another kind of JSON example (resources.json)
		}
		for name, srv := range mergeServers(cfg.MCPServers, cfg.Servers) {
			switch {
			case srv.Command != "":
				stdio++
				if srv.Command != "packs" || len(srv.Args) == 0 || srv.Args[0] != "mcp" {
					t.Errorf("block %d, server %q: command %q %v, want packs mcp ...", i+1, name, srv.Command, srv.Args)
					continue
				}
				t.Run(strings.Join(srv.Args, " "), func(t *testing.T) {
					cmd := exec.Command(exe, srv.Args...)
					cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1", "PACKS_HOME="+home, "PACKS_POLICY=")
					for k := range srv.Env {
						if k != "PACKS_HOME" && k != "PACKS_POLICY" {
							t.Errorf("env %s is not a variable packs reads", k)
						}
					}
					ctx := context.Background()
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "docs-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
					if err != nil {
						t.Fatalf("connecting to %v: %v", srv.Args, err)
					}
					defer cs.Close()
					res, err := cs.ListTools(ctx, nil)
					if err != nil {
						t.Fatal(err)
					}
					var names []string
					for _, tool := range res.Tools {
						names = append(names, tool.Name)
					}
					want := []string{"open_docs", "read_file", "enable_tools"}
					if slices.Contains(srv.Args, "--tools") {
						want = append(want, "query")
					}
					for _, w := range want {
						if !slices.Contains(names, w) {
							t.Errorf("tools/list = %v, want %s", names, w)
						}
					}
				})
			case srv.URL != "":
				http++
				u, err := url.Parse(srv.URL)
				if err != nil || u.Path != "/mcp" || !strings.HasPrefix(srv.Headers["Authorization"], "Bearer ") {
					t.Errorf("block %d, server %q: url %q headers %v, want http://HOST:PORT/mcp with a bearer token", i+1, name, srv.URL, srv.Headers)
				}
			}
		}
	}
	if stdio < 4 || http < 1 {
		t.Errorf("found %d stdio and %d HTTP configurations in docs/mcp.md and README.md, want at least 4 and 1", stdio, http)
	}
}

// docServer is one server entry of an MCP client's configuration.
type docServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func mergeServers(a, b map[string]docServer) map[string]docServer {
	out := map[string]docServer{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out["vscode:"+k] = v
	}
	return out
}
