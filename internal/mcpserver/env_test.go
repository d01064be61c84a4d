package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/testcache"
	"github.com/packs-run/packs/runtime"
)

// testEnv is a real state directory with echo-pack installed, a real
// runtime, audit log and chat components, and a Server over them.
type testEnv struct {
	app   *app.App
	audit *audit.Log
	srv   *Server
}

// newEnv builds a testEnv; policy is the enterprise policy's TOML, or "".
func newEnv(t testing.TB, policy string) *testEnv {
	t.Helper()
	return newEnvPacks(t, policy, "testdata/echo-pack")
}

// newEnvPacks is newEnv with these pack folders installed and attached.
func newEnvPacks(t testing.TB, policy string, dirs ...string) *testEnv {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: t.TempDir(), ModuleCache: testcache.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	var attach []string
	for _, dir := range dirs {
		if _, err := a.Install(ctx, app.InstallRequest{Source: dir, Consent: app.Granting()}); err != nil {
			t.Fatal(err)
		}
		attach = append(attach, filepath.Base(dir))
	}
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	var pol *capability.Policy
	if policy != "" {
		if pol, err = capability.ParsePolicy("policy.toml", []byte(policy)); err != nil {
			t.Fatal(err)
		}
	}
	log, err := audit.Open(ctx, a.DB, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	a.Policy = pol // as if Open had read it
	pl, err := a.NewPipeline(rt, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{
		Chat: chat.Deps{
			Store: a.DB, Catalog: chat.HomeCatalog{Home: a.Home, DB: a.DB}, Pipeline: pl, Workspaces: a.Home.WorkspacesDir(),
		},
		Attach:  attach,
		Version: "test",
		// A call of a client that cannot elicit waits in the approval
		// queue; the tests that expect nobody to decide it wait briefly.
		ApprovalTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.poll = 10 * time.Millisecond
	return &testEnv{app: a, audit: log, srv: srv}
}

// autoApproveEcho is a policy that approves every call the tests make
// without a person.
const autoApproveEcho = `[approval]
auto_approve = ["open_docs", "read_file", "enable_tools", "echo-pack__echo"]
`

// connect serves one in-memory session and returns a client on it; opts
// may set the client's elicitation handler.
func (e *testEnv) connect(t testing.TB, name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	c := e.srv.newConn()
	done := make(chan error, 1)
	go func() { done <- c.srv.Run(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// auditRows returns the invocation rows of the audit log, oldest first.
func (e *testEnv) auditRows(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for en, err := range audit.Entries(context.Background(), e.app.DB, audit.Filter{Kind: audit.KindInvocation}) {
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(en.Body, &body); err != nil {
			t.Fatal(err)
		}
		body["tool"], body["pack"], body["invocation"] = en.Tool, en.Pack, en.Invocation
		out = append(out, body)
	}
	return out
}

// toolNames lists the tools a client sees.
func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// callText calls a tool and returns its text and error flag.
func callText(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}
