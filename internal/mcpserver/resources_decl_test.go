package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// autoApproveReads approves reads without a person.
const autoApproveReads = `[approval]
auto_approve = ["read_file"]
`

// declPackDir is the installed copy of testdata/decl-pack.
func declPackDir(t *testing.T, e *testEnv) string {
	t.Helper()
	dir, err := e.app.Home.PackDir("decl-pack")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDeclaredResources: what resources.json declares is listed, and reads
// go through read_file's gate and audit row, as pack:// reads do.
func TestDeclaredResources(t *testing.T) {
	ctx := context.Background()
	e := newEnvPacks(t, autoApproveReads, "testdata/decl-pack")
	cs := e.connect(t, "reader", nil)

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"docs://decl-pack/guide", "img://decl-pack/pixel", "pack://decl-pack/SKILL.md"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list = %v, want %s in it", uris, want)
		}
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tm := range tmpls.ResourceTemplates {
		got = append(got, tm.URITemplate)
	}
	if !slices.Contains(got, "data://decl-pack/{id}") {
		t.Errorf("resources/templates/list = %v, want data://decl-pack/{id}", got)
	}

	for _, c := range []struct {
		uri, mime, text string
		blob            bool
	}{
		{"docs://decl-pack/guide", "text/markdown", "MARKER-GUIDE-5c1d", false},
		{"data://decl-pack/123", "text/plain", "data for id 123", false},
		{"img://decl-pack/pixel", "image/png", "", true},
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
		if err != nil {
			t.Fatalf("resources/read %s: %v", c.uri, err)
		}
		rc := res.Contents[0]
		if rc.URI != c.uri || rc.MIMEType != c.mime || !strings.Contains(rc.Text, c.text) || (len(rc.Blob) > 0) != c.blob {
			t.Errorf("resources/read %s = uri %q mime %q text %q blob %d bytes", c.uri, rc.URI, rc.MIMEType, rc.Text, len(rc.Blob))
		}
		if c.blob && !bytes.HasPrefix(rc.Blob, []byte("\x89PNG")) {
			t.Errorf("resources/read %s: blob is not the PNG", c.uri)
		}
	}
	rows := e.auditRows(t)
	if len(rows) != 3 {
		t.Fatalf("audit rows = %v, want one per read", rows)
	}
	for _, r := range rows {
		if r["tool"] != "read_file" || r["pack"] != "decl-pack" || r["status"] != "ok" {
			t.Errorf("audit row %v: want an approved read_file of decl-pack", r)
		}
	}
}

// TestDeclaredResourcesDenied: a declared resource is no way around the
// gate, a template variable cannot leave the file name it fills in, and a
// declared file swapped for a symlink out of the pack after install is not
// read.
func TestDeclaredResourcesDenied(t *testing.T) {
	ctx := context.Background()
	t.Run("gate", func(t *testing.T) {
		e := newEnvPacks(t, "", "testdata/decl-pack")
		cs := e.connect(t, "no-elicitation", nil)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://decl-pack/guide"})
		if err == nil {
			t.Fatalf("resources/read ran without approval: %q", res.Contents[0].Text)
		}
		rows := e.auditRows(t)
		if len(rows) != 1 || rows[0]["tool"] != "read_file" || rows[0]["status"] != "denied" {
			t.Fatalf("audit rows = %v, want one denied read_file", rows)
		}
	})
	e := newEnvPacks(t, autoApproveReads, "testdata/decl-pack")
	cs := e.connect(t, "reader", nil)
	if _, err := cs.ListResources(ctx, nil); err != nil { // the session's chat opens
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("MARKER-SECRET-9e2b"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := declPackDir(t, e)
	guide := filepath.Join(dir, "docs", "guide.md")
	if err := os.Remove(guide); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, guide); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, "data", "up")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		uri     string
		invalid bool // invalid params, else any error
	}{
		{"docs://decl-pack/guide", false},
		{"data://decl-pack/..", true},
		{"data://decl-pack/.hidden", true},
		{"data://decl-pack/%2e%2e%2fsecret", true},
		{"data://decl-pack/up%2fsecret", true},
		{"data://decl-pack/up/secret", false},
		{"x://not-declared", false},
		{"pack://decl-pack/../secret.txt", true},
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
		if err == nil {
			t.Errorf("resources/read %s = %+v, want an error", c.uri, res.Contents[0])
			continue
		}
		if strings.Contains(err.Error(), "MARKER-SECRET") {
			t.Errorf("resources/read %s leaked the file: %v", c.uri, err)
		}
		var je *jsonrpc.Error
		if c.invalid && (!errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams) {
			t.Errorf("resources/read %s: %v, want invalid params", c.uri, err)
		}
	}
}

// TestDeclaredPrompts: prompts/get fills in arguments, carries images and
// embeds only resources the pack declares.
func TestDeclaredPrompts(t *testing.T) {
	ctx := context.Background()
	e := newEnvPacks(t, autoApproveReads, "testdata/decl-pack")
	cs := e.connect(t, "prompter", nil)
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
		if p.Name == "review" && (len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required) {
			t.Errorf("review's arguments = %+v", p.Arguments)
		}
	}
	for _, want := range []string{"decl-pack", "review", "show-pixel", "embed"} {
		if !slices.Contains(names, want) {
			t.Errorf("prompts/list = %v, want %s", names, want)
		}
	}

	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"topic": "the release", "tone": "kind"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review the release in a kind tone." {
		t.Errorf("review = %+v", res.Messages[0].Content)
	}
	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "show-pixel"})
	if err != nil {
		t.Fatal(err)
	}
	if ic, ok := res.Messages[0].Content.(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || !bytes.HasPrefix(ic.Data, []byte("\x89PNG")) || res.Messages[1].Role != "assistant" {
		t.Errorf("show-pixel = %+v", res.Messages)
	}
	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "embed", Arguments: map[string]string{"uri": "docs://decl-pack/guide"}})
	if err != nil {
		t.Fatal(err)
	}
	if er, ok := res.Messages[0].Content.(*mcp.EmbeddedResource); !ok || !strings.Contains(er.Resource.Text, "MARKER-GUIDE") || er.Resource.URI != "docs://decl-pack/guide" {
		t.Errorf("embed = %+v", res.Messages[0].Content)
	}

	for _, c := range []struct {
		name string
		args map[string]string
	}{
		{"review", map[string]string{"tone": "kind"}},                    // topic is required
		{"embed", map[string]string{"uri": "pack://decl-pack/SKILL.md"}}, // not a declared resource
		{"embed", map[string]string{"uri": "file:///etc/passwd"}},
	} {
		if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: c.name, Arguments: c.args}); err == nil {
			t.Errorf("prompts/get %s %v = %+v, want an error", c.name, c.args, res.Messages)
		}
	}
}

// TestDeclaredPromptsGated: a prompt that carries a pack file (an image, an
// embedded resource) reads it through read_file's gate, as resources/read
// does: with nobody to approve, the prompt is refused and the audit log
// says so; a prompt of text alone needs no read.
func TestDeclaredPromptsGated(t *testing.T) {
	ctx := context.Background()
	e := newEnvPacks(t, "", "testdata/decl-pack")
	cs := e.connect(t, "no-elicitation", nil)
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"topic": "x"}}); err != nil {
		t.Fatalf("a text prompt: %v", err)
	}
	for _, c := range []struct {
		name string
		args map[string]string
	}{
		{"show-pixel", nil},
		{"embed", map[string]string{"uri": "docs://decl-pack/guide"}},
	} {
		if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: c.name, Arguments: c.args}); err == nil {
			t.Errorf("prompts/get %s carried a pack file without approval: %+v", c.name, res.Messages)
		}
	}
	rows := e.auditRows(t)
	if len(rows) != 2 || rows[0]["tool"] != "read_file" || rows[0]["status"] != "denied" || rows[1]["status"] != "denied" {
		t.Fatalf("audit rows = %v, want two denied read_file", rows)
	}
}

// TestResourceSubscription: a client subscribed to a resource hears when
// its file changes, also when an editor replaces the file; after
// unsubscribing it hears nothing more of it.
func TestResourceSubscription(t *testing.T) {
	ctx := context.Background()
	e := newEnvPacks(t, autoApproveReads, "testdata/decl-pack")
	updated := make(chan string, 16)
	// A 2025-11-25 client's Subscribe returns once the subscription holds;
	// TestRoundTripSubscriptionDenied covers 2026-07-28's subscriptions/listen.
	cs := e.connectVersion(t, "subscriber", syncProtocol, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	init := cs.InitializeResult()
	if init.Capabilities.Resources == nil || !init.Capabilities.Resources.Subscribe {
		t.Fatalf("resources capability = %+v, want subscribe", init.Capabilities.Resources)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil { // the session's chat opens
		t.Fatal(err)
	}
	dir := declPackDir(t, e)
	// One write of a file may be heard twice (os.WriteFile truncates, then
	// writes: two events), and the second may come after a drain: next
	// skips repeats of the change it returned last, nothing else.
	prev := ""
	next := func(what string) string {
		t.Helper()
		for {
			select {
			case uri := <-updated:
				if uri == prev {
					continue
				}
				prev = uri
				return uri
			case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
				t.Fatalf("no notifications/resources/updated after %s", what)
			}
		}
	}
	for _, uri := range []string{"docs://decl-pack/guide", "data://decl-pack/123", "pack://decl-pack/SKILL.md"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	// Written in place.
	if err := os.WriteFile(filepath.Join(dir, "docs", "guide.md"), []byte("# Guide v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := next("writing docs/guide.md"); got != "docs://decl-pack/guide" {
		t.Fatalf("updated %s, want docs://decl-pack/guide", got)
	}
	// An installed pack whose files changed no longer matches its lock:
	// the client hears of the change, and reading it is refused.
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://decl-pack/guide"}); err == nil {
		t.Fatalf("resources/read of a modified installed pack = %q, want an error", res.Contents[0].Text)
	}
	// Replaced by a rename, as editors save.
	drainURIs(updated)
	tmp := filepath.Join(dir, "data", ".123.txt.tmp")
	if err := os.WriteFile(tmp, []byte("data v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "data", "123.txt")); err != nil {
		t.Fatal(err)
	}
	if got := next("renaming over data/123.txt"); got != "data://decl-pack/123" {
		t.Fatalf("updated %s, want data://decl-pack/123", got)
	}
	// Unsubscribed: a change of the guide goes unheard, then a change of
	// SKILL.md (same order on one connection) is the next notification.
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "docs://decl-pack/guide"}); err != nil {
		t.Fatal(err)
	}
	drainURIs(updated)
	if err := os.WriteFile(filepath.Join(dir, "docs", "guide.md"), []byte("# Guide v3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := next("writing SKILL.md"); got != "pack://decl-pack/SKILL.md" {
		t.Fatalf("updated %s after unsubscribing the guide, want pack://decl-pack/SKILL.md", got)
	}
}

// TestResourceSubscriptionDenied: only an existing file of a served pack
// can be watched.
func TestResourceSubscriptionDenied(t *testing.T) {
	ctx := context.Background()
	e := newEnvPacks(t, "", "testdata/decl-pack")
	// A 2025-11-25 client's resources/subscribe reports the refusal;
	// TestRoundTripSubscriptionDenied covers 2026-07-28's subscriptions/listen.
	cs := e.connectVersion(t, "subscriber", syncProtocol, nil)
	if _, err := cs.ListResources(ctx, nil); err != nil { // the session's chat opens
		t.Fatal(err)
	}
	outside := t.TempDir()
	dir := declPackDir(t, e)
	if err := os.Symlink(outside, filepath.Join(dir, "data", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		"x://not-declared",
		"data://decl-pack/999",
		"data://decl-pack/..",
		"pack://decl-pack/../x.txt",
		"pack://decl-pack/data/up/x.txt",
		"pack://other-pack/SKILL.md",
		"pack://decl-pack/data",
	} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err == nil {
			t.Errorf("subscribe %s succeeded, want an error", uri)
		}
	}
}

func drainURIs(c chan string) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// TestDeclaredTemplateCompletion: completion/complete suggests the values
// of a declared template's variable that name files of the pack, and none
// through a folder that leads out of it.
func TestDeclaredTemplateCompletion(t *testing.T) {
	ctx := context.Background()
	e := newEnvPacks(t, "", "testdata/decl-pack")
	cs := e.connect(t, "completer", nil)
	complete := func(value string) []string {
		t.Helper()
		res, err := cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "data://decl-pack/{id}"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: value},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.Completion.Values
	}
	if got := complete("1"); !slices.Equal(got, []string{"123"}) {
		t.Errorf("complete id=1 = %v, want [123]", got)
	}
	if got := complete("9"); len(got) != 0 {
		t.Errorf("complete id=9 = %v, want none", got)
	}
	// The folder becomes a symlink out of the pack: nothing is listed.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "777.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(declPackDir(t, e), "data")
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, data); err != nil {
		t.Fatal(err)
	}
	if got := complete(""); len(got) != 0 {
		t.Errorf("complete through a symlink out of the pack = %v, want none", got)
	}
}
