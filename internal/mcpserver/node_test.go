package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/testcache"
)

// TestNodeClients runs the real MCP clients in test/mcp (the official
// TypeScript SDK, the Inspector CLI and the conformance suite) against the
// packs binary: `npm test` there builds bin/packs, installs an example pack in
// a temporary PACKS_HOME and drives `packs mcp` over stdio and HTTP.
func TestNodeClients(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "mcp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the MCP client packages are not installed: run npm ci --prefix test/mcp (%v)", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is not on PATH: install Node.js 20 or later, then run npm ci --prefix test/mcp")
	}
	// A hung client must fail this test with its output, not stall the run
	// until go test's own deadline kills everything without it.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "test", "--silent")
	cmd.Dir = dir
	// Every packs process the clients start keeps compiled modules in the
	// cache this package's tests share, not once per fresh home.
	cmd.Env = append(os.Environ(), "PACKS_CACHE="+testcache.Dir())
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test in test/mcp: %v\n%s", err, out)
	}
	for _, m := range regexp.MustCompile(`(?m)^# (conformance checks: .*|pass \d+|fail \d+)$`).FindAllSubmatch(out, -1) {
		t.Log(string(m[1]))
	}
}
