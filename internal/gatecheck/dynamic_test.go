package gatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/mcpserver"
	"github.com/packs-run/packs/internal/testcache"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// notesPack is chat's test pack: its WASI tool "note" writes note.md into
// the workspace, and it may exec sh (terminal_exec, granted at install).
var notesPack = filepath.Join("..", "chat", "testdata", "notes")

// The side effects: what each tool leaves in the workspace when it runs.
const (
	noteFile   = "note.md"   // notes__note
	execMarker = "ran-by-sh" // exec_best_effort: sh -c "touch ran-by-sh"
)

var execArgs = map[string]any{"pack_id": "notes", "command": "sh", "args": []string{"-c", "touch " + execMarker}}

// openingPolicy approves, without a person, only the base tools that lead
// to the pack's tools: the calls under test are left to the person.
const openingPolicy = `[approval]
auto_approve = ["open_docs", "enable_tools"]
`

// env is a real state directory with the notes pack installed and granted
// terminal_exec, a real runtime, audit log and chat components.
type env struct {
	app  *app.App
	rt   *runtime.Runtime
	log  *audit.Log
	deps chat.Deps
	pack *packs.Pack
	ref  capability.PackRef
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: t.TempDir(), ModuleCache: testcache.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := a.Install(ctx, app.InstallRequest{Source: notesPack, Consent: app.Granting(capability.TerminalExec)}); err != nil {
		t.Fatal(err)
	}
	// Granted for good, so that only the approver differs between a
	// denied call and its positive control.
	if err := a.DB.PutGrant(ctx, "notes", "", capability.UserGrant{Capability: capability.TerminalExec, Scope: capability.ScopePersistent}); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	log, err := audit.Open(ctx, a.DB, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	pol, err := capability.ParsePolicy("policy.toml", []byte(openingPolicy))
	if err != nil {
		t.Fatal(err)
	}
	p, ref, err := chat.HomeCatalog{Home: a.Home, DB: a.DB}.Pack(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	a.Policy = pol // as if Open had read it
	pl, err := a.NewPipeline(rt, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &env{app: a, rt: rt, log: log, pack: p, ref: ref, deps: chat.Deps{
		Store: a.DB, Catalog: chat.HomeCatalog{Home: a.Home, DB: a.DB}, Pipeline: pl, Workspaces: a.Home.WorkspacesDir(),
	}}
}

// session opens a chat with the notes pack attached.
func (e *env) session(t *testing.T) *chat.Session {
	t.Helper()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{Attach: []string{"notes"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// row is an audit row with its body decoded.
type row struct {
	audit.Entry
	Status   string `json:"status"`
	Decision string `json:"decision"`
	Allowed  bool   `json:"allowed"`
	Layer    string `json:"layer"`
}

// rows reads the audit rows of kind k for tool.
func (e *env) rows(t *testing.T, k audit.Kind, tool string) []row {
	t.Helper()
	var out []row
	for en, err := range audit.Entries(context.Background(), e.app.DB, audit.Filter{Kind: k}) {
		if err != nil {
			t.Fatal(err)
		}
		if en.Tool != tool {
			continue
		}
		r := row{Entry: en}
		if err := json.Unmarshal(en.Body, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// assertOutcome checks the side effect in workspace and the audit rows of
// tool: with ran, the file exists and the call is recorded ok; without, the
// file is absent and every call of tool is recorded denied.
func (e *env) assertOutcome(t *testing.T, workspace, file, tool string, ran bool) {
	t.Helper()
	_, err := os.Stat(filepath.Join(workspace, file))
	switch {
	case ran && err != nil:
		t.Errorf("%s did not run although approved: %s: %v", tool, file, err)
	case !ran && !errors.Is(err, os.ErrNotExist):
		t.Errorf("%s ran without a decision: %s exists (%v)", tool, file, err)
	}
	rows := e.rows(t, audit.KindInvocation, tool)
	if len(rows) == 0 {
		t.Fatalf("no audit row for %s", tool)
	}
	want, decision := string(audit.StatusDenied), capability.Deny.String()
	if ran {
		want, decision = string(audit.StatusOK), capability.RunOnce.String()
	}
	for _, r := range rows {
		if r.Status != want || r.Decision != decision {
			t.Errorf("audit row of %s: status %q, decision %q, want %q, %q", tool, r.Status, r.Decision, want, decision)
		}
	}
}

// yes approves every call once: the person who is there.
type yes struct{}

func (yes) Name() string { return "test:yes" }
func (yes) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

// approvers are the two sides of every dynamic check: nobody there (the
// tool must not run) and a person who approves (the positive control).
var approvers = []struct {
	name     string
	approver capability.Approver
	ran      bool
}{
	{"no approver", nil, false},
	{"approved", yes{}, true},
}

// TestChatTurn: the model calls notes__note and exec_best_effort in a
// turn of packs chat (the fake model server scripts the calls).
func TestChatTurn(t *testing.T) {
	for _, a := range approvers {
		t.Run(a.name, func(t *testing.T) {
			e := newEnv(t)
			exec, _ := json.Marshal(execArgs)
			srv := llmtest.NewServer(
				llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: chat.ToolEnableTools, Arguments: `{"pack_id":"notes"}`}}},
				llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__note", Arguments: `{}`}, {Name: chat.ToolExec, Arguments: string(exec)}}},
				llmtest.Turn{Text: "done"},
			)
			defer srv.Close()
			p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.OpenAIURL(), Model: "fake", APIKey: "sk-test", MaxTokens: 1000, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			s := e.session(t)
			reply, err := s.Send(context.Background(), p, "write a note", chat.TurnOptions{Approver: a.approver})
			if err != nil {
				t.Fatal(err)
			}
			if len(reply.Calls) != 3 || reply.Calls[0].IsError {
				t.Fatalf("calls %+v: want enable_tools (approved by the policy), notes__note and exec_best_effort", reply.Calls)
			}
			for _, c := range reply.Calls[1:] {
				if c.Decision.Approved != a.ran {
					t.Errorf("%s: approved %v, want %v (%s)", c.Name, c.Decision.Approved, a.ran, c.Content)
				}
			}
			e.assertOutcome(t, s.Workspace(), noteFile, "note", a.ran)
			e.assertOutcome(t, s.Workspace(), execMarker, chat.ToolExec, a.ran)
		})
	}
}

// TestSessionCall: a call put straight to the chat, as the web UI and the
// MCP server do, with the pack's tools enabled.
func TestSessionCall(t *testing.T) {
	for _, a := range approvers {
		t.Run(a.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			ctx := context.Background()
			if r, err := s.Call(ctx, chat.ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), nil); err != nil || r.IsError {
				t.Fatalf("enable_tools: %v %s", err, r.Content)
			}
			exec, _ := json.Marshal(execArgs)
			for _, c := range []struct{ name, args string }{{"notes__note", `{}`}, {chat.ToolExec, string(exec)}} {
				r, err := s.Call(ctx, c.name, json.RawMessage(c.args), a.approver)
				if err != nil {
					t.Fatal(err)
				}
				if r.Decision.Approved != a.ran || r.IsError == a.ran {
					t.Errorf("%s: approved %v, error %v, want approved %v (%s)", c.name, r.Decision.Approved, r.IsError, a.ran, r.Content)
				}
			}
			e.assertOutcome(t, s.Workspace(), noteFile, "note", a.ran)
			e.assertOutcome(t, s.Workspace(), execMarker, chat.ToolExec, a.ran)
		})
	}
}

// TestMCPToolsCall: tools/call from an MCP client over the stdio
// transport. The plain client cannot elicit, so nobody can approve; the
// eliciting client answers "run once" (the positive control).
func TestMCPToolsCall(t *testing.T) {
	clients := []struct {
		name string
		opts *mcp.ClientOptions
		ran  bool
	}{
		{"no elicitation", nil, false},
		{"elicitation accepts", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "run_once"}}, nil
		}}, true},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			// Nobody answers the queue of a client that cannot elicit: a short
			// wait is enough to see the denial (the default is 2 minutes).
			srv, err := mcpserver.New(mcpserver.Config{Chat: e.deps, Attach: []string{"notes"}, Version: "test", ApprovalTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			serverIn, clientOut := io.Pipe()
			clientIn, serverOut := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- srv.ServeStdio(ctx, serverIn, serverOut)
				serverOut.Close()
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "gatecheck", Version: "1"}, c.opts).
				Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				cs.Close()
				clientOut.Close()
				cancel()
				<-done
			}()
			call := func(name string, args any) *mcp.CallToolResult {
				t.Helper()
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return r
			}
			if r := call(chat.ToolEnableTools, map[string]any{"pack_id": "notes"}); r.IsError {
				t.Fatalf("enable_tools was refused: %+v", r.Content)
			}
			for _, name := range []string{"notes__note", chat.ToolExec} {
				args := any(map[string]any{})
				if name == chat.ToolExec {
					args = execArgs
				}
				if r := call(name, args); r.IsError == c.ran {
					t.Errorf("%s: error %v, want %v", name, r.IsError, !c.ran)
				}
			}
			ws := e.workspaces(t)
			if len(ws) != 1 {
				t.Fatalf("workspaces %v: want the one of the MCP session", ws)
			}
			e.assertOutcome(t, ws[0], noteFile, "note", c.ran)
			e.assertOutcome(t, ws[0], execMarker, chat.ToolExec, c.ran)
		})
	}
}

// workspaces lists the chat workspaces of the state directory.
func (e *env) workspaces(t *testing.T) []string {
	t.Helper()
	des, err := os.ReadDir(e.deps.Workspaces)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		if d.IsDir() {
			out = append(out, filepath.Join(e.deps.Workspaces, d.Name()))
		}
	}
	return out
}

// TestHostExec: the one exported door to a native command outside the
// pipeline, handed a Call with a zero Approval, an Approval for another
// invocation, and (the positive control) the gate's Approval for this one.
// The runtime's own invoke is unexported: from outside, a pack's tool runs
// only through runtime.Pipeline.Call, which the other tests drive.
func TestHostExec(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var user []capability.UserGrant
	for _, n := range e.pack.Request().Names() {
		user = append(user, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
	}
	grant, err := capability.Resolve(e.ref, e.pack.Request(), user, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	gate := capability.NewGate(yes{})
	other, err := gate.Decide(ctx, capability.Pending{Invocation: "inv-other", Pack: "notes", Tool: chat.ToolExec, Grant: grant})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		id      string
		approve func() capability.Approval
		ran     bool
	}{
		{"zero approval", "inv-zero", func() capability.Approval { return capability.Approval{} }, false},
		{"approval of another call", "inv-stolen", func() capability.Approval { return other }, false},
		{"approved", "inv-approved", func() capability.Approval {
			ap, err := gate.Decide(ctx, capability.Pending{Invocation: "inv-approved", Pack: "notes", Tool: chat.ToolExec, Grant: grant})
			if err != nil {
				t.Fatal(err)
			}
			return ap
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			_, err := hostfns.Exec(ctx, &hostfns.Call{
				Pack: "notes", Tool: chat.ToolExec, Invocation: c.id, Grant: grant, Approval: c.approve(),
				Recorder: e.log, PackRoot: e.pack.Dir, Workspace: ws,
			}, []string{"sh", "-c", "touch " + execMarker}, hostfns.ExecOptions{})
			_, statErr := os.Stat(filepath.Join(ws, execMarker))
			if c.ran {
				if err != nil || statErr != nil {
					t.Fatalf("approved call: %v, %s: %v", err, execMarker, statErr)
				}
				return
			}
			if !errors.Is(err, capability.ErrUnapproved) || !errors.Is(err, capability.ErrDenied) {
				t.Errorf("got %v, want capability.ErrUnapproved wrapping capability.ErrDenied", err)
			}
			if !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("the command ran without an approval: %s: %v", execMarker, statErr)
			}
			var denied bool
			for _, r := range e.rows(t, audit.KindExercise, chat.ToolExec) {
				denied = denied || (r.Invocation == c.id && !r.Allowed && r.Layer == string(capability.LayerGate))
			}
			if !denied {
				t.Errorf("no gate denial in the audit log for %s", c.id)
			}
		})
	}
}
