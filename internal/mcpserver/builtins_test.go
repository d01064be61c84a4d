package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/testcache"
	"github.com/packs-run/packs/runtime"
)

// newBuiltinEnv is a home where the app installed the built-in packs as it
// opened (app.Options.Builtins), served with current-time and
// session-file-system attached, under policy.
func newBuiltinEnv(t *testing.T, policy string) (*testEnv, *app.App) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: t.TempDir(), Builtins: true, ModuleCache: testcache.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	testcache.Builtins(t, rt, a.Home)
	pol, err := capability.ParsePolicy("policy.toml", []byte(policy))
	if err != nil {
		t.Fatal(err)
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
		Chat:    chat.Deps{Store: a.DB, Catalog: chat.HomeCatalog{Home: a.Home, DB: a.DB}, Pipeline: pl, Workspaces: a.Home.WorkspacesDir()},
		Attach:  []string{"current-time", "session-file-system"},
		Version: "test", ApprovalTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.poll = 10 * time.Millisecond
	return &testEnv{app: a, audit: log, srv: srv}, a
}

// The built-ins through MCP, with nothing installed by hand: the policy
// approves these calls (the gate still decides each one) except
// delete_file, which it never approves.
func TestBuiltinsThroughMCP(t *testing.T) {
	e, a := newBuiltinEnv(t, `[approval]
auto_approve = ["enable_tools", "current-time__get_current_time", "session-file-system__write_file", "session-file-system__list_directory"]
never_approve = ["session-file-system__delete_file"]
`)
	cs := e.connect(t, "builtins", nil)
	for _, p := range []string{"current-time", "session-file-system"} {
		if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": p}); isErr {
			t.Fatalf("enable_tools %s: %s", p, text)
		}
	}
	text, isErr := callText(t, cs, "current-time__get_current_time", map[string]any{"timezone": "America/New_York", "format": "unix"})
	if isErr || !strings.Contains(text, `"timezone":"America/New_York"`) || !strings.Contains(text, `"format":"unix"`) {
		t.Errorf("get_current_time = %s (error %v)", text, isErr)
	}
	text, isErr = callText(t, cs, "session-file-system__write_file", map[string]any{"path": "/a/b.txt", "content": "from mcp"})
	if isErr || !strings.Contains(text, `"created":true`) {
		t.Errorf("write_file = %s (error %v)", text, isErr)
	}
	text, isErr = callText(t, cs, "session-file-system__list_directory", map[string]any{"path": "/a"})
	if isErr || !strings.Contains(text, `"name":"b.txt"`) {
		t.Errorf("list_directory = %s (error %v)", text, isErr)
	}
	// Denied by the policy: nothing is deleted.
	text, isErr = callText(t, cs, "session-file-system__delete_file", map[string]any{"path": "/a/b.txt"})
	if !isErr || !strings.Contains(text, "denied") {
		t.Errorf("delete_file = %s (error %v), want a denial", text, isErr)
	}
	// The file is in this session's chat workspace.
	var found []string
	filepath.WalkDir(a.Home.WorkspacesDir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "b.txt" {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("b.txt in the workspaces: %v, want one (delete_file was denied)", found)
	}
	if b, err := os.ReadFile(found[0]); err != nil || string(b) != "from mcp" {
		t.Errorf("b.txt = %q, %v", b, err)
	}
	rows := e.auditRows(t)
	var tools []string
	for _, r := range rows {
		tools = append(tools, r["pack"].(string)+"/"+r["tool"].(string)+"="+r["status"].(string))
	}
	want := "current-time/enable_tools=ok session-file-system/enable_tools=ok current-time/get_current_time=ok session-file-system/write_file=ok session-file-system/list_directory=ok session-file-system/delete_file=denied"
	if got := strings.Join(tools, " "); got != want {
		t.Errorf("audit rows:\n%s\nwant\n%s", got, want)
	}
}
