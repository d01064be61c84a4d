package web

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/mcpserver"
)

// mcpSession serves one MCP session (packs mcp, on the same state as the
// web app) to a real MCP client named like Claude Desktop, which says
// Run once to every approval form; it returns the client's session.
func mcpSession(t *testing.T, e *env, attach ...string) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Config{Chat: e.srv.cfg.Chat, Attach: attach, Version: "test", ApprovalTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, toServer, fromServer) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Title: "Claude Desktop", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "run_once"}}, nil
		}})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		fromClient.Close()
		cancel()
		<-done
	})
	return cs
}

// TestMCPSessionListed: a chat an MCP client opened is listed as
// "<client>, via MCP", with the packs that session enabled; a pack that
// has become coming_soon since is not shown.
func TestMCPSessionListed(t *testing.T) {
	e := newEnv(t, envOptions{})
	src := filepath.Join(t.TempDir(), "notes")
	if err := os.CopyFS(src, os.DirFS(notesPack)); err != nil {
		t.Fatal(err)
	}
	e.must(201, "POST", "/v1/packs", map[string]any{"path": src, "grant": []string{"terminal_exec"}}, nil)
	cs := mcpSession(t, e, "notes")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"pack_id": "notes"}})
	if err != nil || res.IsError {
		t.Fatalf("enable_tools: %+v %v", res, err)
	}
	list := func() []chatJSON {
		var out struct{ Items []chatJSON }
		e.must(200, "GET", "/v1/chats", nil, &out)
		return out.Items
	}
	items := list()
	if len(items) != 1 {
		t.Fatalf("got %d chats, want the MCP session's", len(items))
	}
	got := items[0]
	if got.Title != "Claude Desktop, via MCP" || got.Via != "mcp" || got.Client != "Claude Desktop" {
		t.Errorf("the MCP session is listed as %q (via %q, client %q), want \"Claude Desktop, via MCP\"", got.Title, got.Via, got.Client)
	}
	if len(got.Packs) != 1 || got.Packs[0].Name != "notes" || !got.Packs[0].Enabled {
		t.Errorf("the MCP session lists packs %+v, want notes enabled", got.Packs)
	}
	var one chatJSON
	e.must(200, "GET", "/v1/chats/"+got.ID, nil, &one)
	if one.Title != "Claude Desktop, via MCP" {
		t.Errorf("GET /v1/chats/%s is titled %q", got.ID, one.Title)
	}

	// The pack is updated to a version that is coming soon: the list no
	// longer shows it for the session that enabled it.
	toml, err := os.ReadFile(filepath.Join(src, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	soon := strings.Replace(string(toml), `version = "1.0.0"`, "version = \"1.1.0\"\nstatus = \"coming_soon\"", 1)
	if err := os.WriteFile(filepath.Join(src, "skill.toml"), []byte(soon), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Update(ctx, "notes", app.InstallRequest{By: "test", Consent: app.ConsentFunc(func(context.Context, app.Offer) ([]capability.UserGrant, error) { return nil, nil })}); err != nil {
		t.Fatal(err)
	}
	if got := list()[0]; len(got.Packs) != 0 {
		t.Errorf("the MCP session lists %+v, a pack that is coming soon", got.Packs)
	}
}

// TestBrowserMCPSession: in the app's list of chats, a session an MCP
// client opened reads "Claude Desktop, via MCP" with the packs it enabled,
// not "New chat".
func TestBrowserMCPSession(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	e.install("terminal_exec")
	cs := mcpSession(t, e, "notes")
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"pack_id": "notes"}}); err != nil || res.IsError {
		t.Fatalf("enable_tools: %+v %v", res, err)
	}
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.poll("the MCP session is listed by its client, with the pack it enabled",
		`[...document.querySelectorAll("#chat-list .chat-item")].some(a => a.querySelector(".chat-name").textContent === "Claude Desktop, via MCP" && a.querySelector(".chat-packs")?.textContent === "notes")`)
	b.poll("no chat is called New chat", `![...document.querySelectorAll("#chat-list .chat-name")].some(n => n.textContent === "New chat")`)
}
