package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/llm"
)

func TestToolsListStartsWithBaseTools(t *testing.T) {
	e := newEnv(t, "")
	cs := e.connect(t, "lister", nil)
	got := toolNames(t, cs)
	want := []string{"enable_tools", "open_docs", "read_file"}
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v (pack tools only after enable_tools)", got, want)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if lines := strings.Count(tool.Description, "\n") + 1; lines > 4 {
			t.Errorf("%s: description has %d lines, want at most 4 (spec 004)", tool.Name, lines)
		}
	}
}

func TestEnableToolsSendsListChangedAndCallRunsWasm(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	changed := make(chan struct{}, 8)
	cs := e.connect(t, "enabler", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if slices.Contains(toolNames(t, cs), "echo-pack__echo") {
		t.Fatal("echo-pack__echo is listed before enable_tools")
	}
	if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools failed: %s", text)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after enable_tools")
	}
	if names := toolNames(t, cs); !slices.Contains(names, "echo-pack__echo") {
		t.Fatalf("tools after enable_tools = %v, want echo-pack__echo among them", names)
	}
	text, isErr := callText(t, cs, "echo-pack__echo", map[string]any{"message": "héllo"})
	if isErr {
		t.Fatalf("echo failed: %s", text)
	}
	var got struct{ Result map[string]string }
	if err := json.Unmarshal([]byte(text), &got); err != nil || got.Result["message"] != "héllo" {
		t.Errorf("echo returned %q, want the arguments back as the result", text)
	}
	rows := e.auditRows(t)
	if len(rows) != 2 || rows[0]["tool"] != "enable_tools" || rows[1]["tool"] != "echo" || rows[1]["pack"] != "echo-pack" {
		t.Fatalf("audit rows = %v, want enable_tools then echo-pack's echo", rows)
	}
	for _, r := range rows {
		if r["decision"] != "run_once" || !strings.HasPrefix(r["approver"].(string), "policy") || r["status"] != "ok" || r["client"] != "mcp:enabler" {
			t.Errorf("audit row %v: want decision run_once by the policy, status ok, client mcp:enabler", r)
		}
	}
}

func TestInvalidArgumentsAreRefusedBeforeTheGate(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	cs := e.connect(t, "sloppy", nil)
	callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"})
	text, isErr := callText(t, cs, "echo-pack__echo", map[string]any{"message": 42})
	if !isErr || !strings.Contains(text, "invalid_arguments") {
		t.Errorf("echo with a number = %q (error %v), want an invalid_arguments error", text, isErr)
	}
}

// elicitingClient answers every approval form with choice and counts the
// forms it was shown.
func elicitingClient(choice, action string, asked *atomic.Int32, messages chan<- string) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		if messages != nil {
			messages <- req.Params.Message
		}
		return &mcp.ElicitResult{Action: action, Content: map[string]any{"decision": choice}}, nil
	}}
}

func TestElicitationApprovesAndIsAudited(t *testing.T) {
	e := newEnv(t, "")
	var asked atomic.Int32
	msgs := make(chan string, 4)
	cs := e.connect(t, "Eliciting Client", elicitingClient(choiceRunOnce, "accept", &asked, msgs))
	text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
	if isErr || !strings.Contains(text, "Call `echo-pack__echo`") {
		t.Fatalf("open_docs = %q (error %v), want the entry doc", text, isErr)
	}
	if asked.Load() != 1 {
		t.Fatalf("approval forms shown = %d, want 1", asked.Load())
	}
	if m := <-msgs; !strings.Contains(m, "open_docs") || !strings.Contains(m, "echo-pack") {
		t.Errorf("approval form %q does not say what will run", m)
	}
	rows := e.auditRows(t)
	if len(rows) != 1 || rows[0]["approver"] != "mcp-elicitation:Eliciting Client" || rows[0]["decision"] != "run_once" {
		t.Errorf("audit rows = %v, want one run_once by mcp-elicitation:Eliciting Client", rows)
	}
}

func TestElicitationDeclineDenies(t *testing.T) {
	for _, tt := range []struct{ name, choice, action string }{
		{"declined form", choiceRunOnce, "decline"},
		{"cancelled form", choiceRunOnce, "cancel"},
		{"deny chosen", choiceDeny, "accept"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			var asked atomic.Int32
			cs := e.connect(t, "careful", elicitingClient(tt.choice, tt.action, &asked, nil))
			text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
			if !isErr || !strings.Contains(text, `"denied"`) {
				t.Errorf("open_docs = %q (error %v), want a denial", text, isErr)
			}
			if strings.Contains(text, "auto_approve") {
				t.Errorf("denial %q tells an eliciting client to edit the policy; the person said no", text)
			}
			rows := e.auditRows(t)
			if len(rows) != 1 || rows[0]["decision"] != "deny" || rows[0]["status"] != "denied" {
				t.Errorf("audit rows = %v, want one denied call", rows)
			}
		})
	}
}

func TestElicitationAllowForSessionAsksOnce(t *testing.T) {
	e := newEnv(t, "")
	var asked atomic.Int32
	cs := e.connect(t, "trusting", elicitingClient(choiceAllowChat, "accept", &asked, nil))
	for range 3 {
		if text, isErr := callText(t, cs, "read_file", map[string]any{"pack_id": "echo-pack", "path": "references/NOTES.md"}); isErr {
			t.Fatalf("read_file: %s", text)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("approval forms shown = %d, want 1 (allowed for the session)", asked.Load())
	}
}

func TestNoElicitationDeniesWithHowToApprove(t *testing.T) {
	e := newEnv(t, "")
	cs := e.connect(t, "plain-client", nil)
	text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
	if !isErr {
		t.Fatalf("open_docs ran without anyone approving it: %s", text)
	}
	var v struct {
		Error struct{ Kind, Approve string }
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("denial is not JSON: %q", text)
	}
	if v.Error.Kind != "denied" || !strings.Contains(v.Error.Approve, `auto_approve = ["open_docs"]`) || !strings.Contains(v.Error.Approve, "plain-client") {
		t.Errorf("denial = %q, want kind denied and how to approve open_docs for plain-client", text)
	}
	if rows := e.auditRows(t); len(rows) != 1 || rows[0]["status"] != "denied" || rows[0]["client"] != "mcp:plain-client" {
		t.Errorf("audit rows = %v, want the denied call of mcp:plain-client", rows)
	}
}

func TestPolicyDenialGetsNoApproveHint(t *testing.T) {
	e := newEnv(t, "[approval]\nnever_approve = [\"open_docs\"]\n")
	cs := e.connect(t, "plain-client", nil)
	text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
	if !isErr || !strings.Contains(text, `"denied"`) {
		t.Fatalf("open_docs = %q (error %v), want a denial", text, isErr)
	}
	if strings.Contains(text, "auto_approve") {
		t.Errorf("denial %q suggests auto_approve for a call the policy never approves", text)
	}
}

func TestPolicyNeverApproveBeatsElicitation(t *testing.T) {
	e := newEnv(t, "[approval]\nnever_approve = [\"open_docs\"]\n")
	var asked atomic.Int32
	cs := e.connect(t, "eager", elicitingClient(choiceRunOnce, "accept", &asked, nil))
	if text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"}); !isErr {
		t.Errorf("open_docs ran although the policy never approves it: %s", text)
	}
	if asked.Load() != 0 {
		t.Errorf("the person was asked %d times about a call the policy forbids", asked.Load())
	}
}

func TestResources(t *testing.T) {
	e := newEnv(t, autoApproveEcho) // reads are approved like read_file: here by the policy
	cs := e.connect(t, "reader", nil)
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	want := []string{"pack://echo-pack/SKILL.md", "pack://echo-pack/bin/echo.wasm", "pack://echo-pack/bin/echo.wat", "pack://echo-pack/references/NOTES.md", "pack://echo-pack/tools.json"}
	slices.Sort(uris)
	if !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v", uris, want)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != resourceTemplate {
		t.Errorf("resource templates = %+v, %v; want %s", templates, err, resourceTemplate)
	}

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "pack://echo-pack/references/NOTES.md"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "MARKER-NOTES-7f3a") || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read NOTES.md = %+v, %v; want its text as text/markdown", res, err)
	}
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "pack://echo-pack/bin/echo.wasm"})
	if err != nil {
		t.Fatal(err)
	}
	wasm, _ := os.ReadFile("testdata/echo-pack/bin/echo.wasm")
	if !bytes.Equal(res.Contents[0].Blob, wasm) || res.Contents[0].Text != "" {
		t.Errorf("read echo.wasm: got %d blob bytes, want the %d bytes of the file", len(res.Contents[0].Blob), len(wasm))
	}
}

func TestResourceConfinement(t *testing.T) {
	e := newEnv(t, autoApproveEcho) // approved, so only confinement can refuse
	cs := e.connect(t, "prober", nil)
	ctx := context.Background()
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	dir, err := e.app.Home.PackDir("echo-pack")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "references", "passwd")); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		"pack://echo-pack/../echo-pack/SKILL.md",
		"pack://echo-pack/%2e%2e/%2e%2e/packs.lock",
		"pack://echo-pack//etc/passwd",
		"pack://echo-pack/references/passwd",
		"pack://other-pack/SKILL.md",
		"pack://echo-pack/missing.md",
		"pack://echo-pack/references",
		"file:///etc/passwd",
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil {
			t.Errorf("read %s = %+v, want an error", uri, res)
		} else if strings.Contains(err.Error(), "root:") {
			t.Errorf("read %s leaked file content in its error: %v", uri, err)
		}
	}
}

func TestPrompts(t *testing.T) {
	e := newEnv(t, "")
	cs := e.connect(t, "prompter", nil)
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "echo-pack" || !strings.HasPrefix(list.Prompts[0].Description, "Echoes its input back.") {
		t.Fatalf("prompts = %+v, %v; want the one of echo-pack", list, err)
	}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "echo-pack", Arguments: map[string]string{"request": "say ping"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 {
		t.Fatalf("prompt messages = %d, want 2", len(res.Messages))
	}
	doc, ok := res.Messages[0].Content.(*mcp.EmbeddedResource)
	if !ok || doc.Resource.URI != "pack://echo-pack/SKILL.md" || !strings.Contains(doc.Resource.Text, "Call `echo-pack__echo`") || strings.Contains(doc.Resource.Text, "name: echo-pack") {
		t.Errorf("first message = %+v, want the entry doc's body (without frontmatter) as pack://echo-pack/SKILL.md", res.Messages[0].Content)
	}
	ask, ok := res.Messages[1].Content.(*mcp.TextContent)
	if !ok || !strings.Contains(ask.Text, "say ping") || !strings.Contains(ask.Text, "enable_tools") {
		t.Errorf("second message = %+v, want the request and how to get the tools", res.Messages[1].Content)
	}
	if rows := e.auditRows(t); len(rows) != 0 {
		t.Errorf("a prompt ran %d calls; it must run none", len(rows))
	}
}

func TestMCPTool(t *testing.T) {
	tests := []struct {
		schema string
		want   string // the type of the advertised schema, or "" for an error
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, "object"},
		{`{"properties":{"a":{"type":"string"}}}`, "object"},
		{``, "object"},
		{`{"type":"string"}`, ""},
		{`{"type":["object","null"]}`, ""},
		{`[1,2]`, ""},
	}
	for _, tt := range tests {
		got, err := mcpTool(llm.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)})
		if tt.want == "" {
			if !errors.Is(err, ErrSchema) {
				t.Errorf("mcpTool(%s) error = %v, want ErrSchema", tt.schema, err)
			}
			continue
		}
		if err != nil || got.InputSchema.(map[string]any)["type"] != tt.want {
			t.Errorf("mcpTool(%s) = %+v, %v; want type %s", tt.schema, got, err, tt.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	e := newEnv(t, "")
	cs := e.connect(t, "completer", nil)
	ctx := context.Background()
	complete := func(ref *mcp.CompleteReference, arg, value string, context map[string]string) []string {
		t.Helper()
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if context != nil {
			p.Context = &mcp.CompleteContext{Arguments: context}
		}
		res, err := cs.Complete(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Completion.Values
	}
	tmpl := &mcp.CompleteReference{Type: "ref/resource", URI: resourceTemplate}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"pack names", complete(tmpl, "pack", "ec", nil), []string{"echo-pack"}},
		{"no such pack", complete(tmpl, "pack", "zz", nil), []string{}},
		{"paths of the chosen pack", complete(tmpl, "path", "bin/", map[string]string{"pack": "echo-pack"}), []string{"bin/echo.wasm", "bin/echo.wat"}},
		{"paths without a pack", complete(tmpl, "path", "", nil), []string{}},
		{"other reference", complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "echo-pack"}, "request", "x", nil), []string{}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s: completions = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestOfferedDetectsCollisions(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	tools, problems := offered([]llm.Tool{
		{Name: "open_docs", InputSchema: obj},
		{Name: "a__x", Description: "first", InputSchema: obj},
		{Name: "a__x", Description: "second", InputSchema: obj},
		{Name: "a__bad", InputSchema: json.RawMessage(`{"type":"string"}`)},
		{Name: "a__y", InputSchema: obj},
	})
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name+":"+tool.Description)
	}
	if want := []string{"open_docs:", "a__x:first", "a__y:"}; !slices.Equal(names, want) {
		t.Errorf("offered = %v, want %v", names, want)
	}
	if len(problems) != 2 || !errors.Is(problems[0], ErrCollision) || !errors.Is(problems[1], ErrSchema) {
		t.Errorf("problems = %v, want a collision, then a schema error", problems)
	}
}
