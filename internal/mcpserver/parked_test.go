package mcpserver

import (
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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
)

// newestProtocol is the multi round-trip protocol (SEP-2322).
const newestProtocol = "2026-07-28"

// connectVersion is connect for a client asking for protocol version; a
// client with manual set retries input-required calls itself.
func (e *testEnv) connectVersion(t testing.TB, name, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	e.srv.multiRoundTrip = true
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	c := e.srv.newConn()
	done := make(chan error, 1)
	go func() { done <- c.srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

// manualClient declares form elicitation but fulfils no input request
// itself: the test answers them.
func manualClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("test: this client answers no elicitation/create request")
		},
	}
}

var openDocs = map[string]any{"pack_id": "echo-pack"}

// firstRound calls open_docs and wants an input-required result carrying
// the approval form; it returns the requestState.
func firstRound(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_docs", Arguments: openDocs})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	form, ok := res.InputRequests[inputApproval].(*mcp.ElicitParams)
	if !res.NeedsInput() || !ok || res.RequestState == "" {
		t.Fatalf("first round = %+v, want input required with the approval form and a requestState", res)
	}
	if !strings.Contains(form.Message, "open_docs") {
		t.Errorf("approval form %q does not say what will run", form.Message)
	}
	return res.RequestState
}

// retry sends the call again with answer and state.
func retry(cs *mcp.ClientSession, state string, answer *mcp.ElicitResult) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "open_docs", Arguments: openDocs, RequestState: state,
		InputResponses: mcp.InputResponseMap{inputApproval: answer},
	})
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestRoundTripApproves: a 2026-07-28 client (the Go SDK's own retry
// loop) is asked through an input-required result, and its answer approves
// the call, which runs and is audited as approved by the person.
func TestRoundTripApproves(t *testing.T) {
	e := newEnv(t, "")
	e.srv.cfg.ApprovalTimeout = time.Minute
	var asked atomic.Int32
	msgs := make(chan string, 4)
	cs := e.connectVersion(t, "Eliciting Client", newestProtocol, elicitingClient(choiceRunOnce, "accept", &asked, msgs))
	text, isErr := callText(t, cs, "open_docs", openDocs)
	if isErr || !strings.Contains(text, "Call `echo-pack__echo`") {
		t.Fatalf("open_docs = %q (error %v), want the entry doc", text, isErr)
	}
	if asked.Load() != 1 {
		t.Fatalf("approval forms shown = %d, want 1", asked.Load())
	}
	if m := <-msgs; !strings.Contains(m, "open_docs") {
		t.Errorf("approval form %q does not say what will run", m)
	}
	rows := e.auditRows(t)
	if len(rows) != 1 || rows[0]["approver"] != "mcp-elicitation:Eliciting Client" || rows[0]["decision"] != "run_once" {
		t.Errorf("audit rows = %v, want one run_once by mcp-elicitation:Eliciting Client", rows)
	}
	// Allowed for the session: later calls ask no more.
	cs2 := e.connectVersion(t, "trusting", newestProtocol, elicitingClient(choiceAllowChat, "accept", &asked, nil))
	asked.Store(0)
	for range 3 {
		if text, isErr := callText(t, cs2, "read_file", map[string]any{"pack_id": "echo-pack", "path": "references/NOTES.md"}); isErr {
			t.Fatalf("read_file: %s", text)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("approval forms shown = %d, want 1 (allowed for the session)", asked.Load())
	}
}

// TestRoundTripDeclineDenies: a declined, dismissed or "deny" answer in the
// retry denies the call, audited as denied, with no policy hint.
func TestRoundTripDeclineDenies(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer *mcp.ElicitResult
	}{
		{"declined form", &mcp.ElicitResult{Action: "decline", Content: map[string]any{"decision": choiceRunOnce}}},
		{"cancelled form", &mcp.ElicitResult{Action: "cancel"}},
		{"deny chosen", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": choiceDeny}}},
		{"no answer", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.srv.cfg.ApprovalTimeout = time.Minute
			cs := e.connectVersion(t, "careful", newestProtocol, manualClient())
			state := firstRound(t, cs)
			params := &mcp.CallToolParams{Name: "open_docs", Arguments: openDocs, RequestState: state}
			if tt.answer != nil {
				params.InputResponses = mcp.InputResponseMap{inputApproval: tt.answer}
			}
			res, err := cs.CallTool(context.Background(), params)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if text := resultText(res); !res.IsError || !strings.Contains(text, `"denied"`) || strings.Contains(text, "auto_approve") {
				t.Errorf("retry = %q (error %v), want a plain denial", text, res.IsError)
			}
			rows := e.auditRows(t)
			if len(rows) != 1 || rows[0]["decision"] != "deny" || rows[0]["status"] != "denied" {
				t.Errorf("audit rows = %v, want one denied call", rows)
			}
		})
	}
}

// TestRoundTripForgedStateRefused: a retry whose requestState is not the
// one this session holds (forged, another session's, already spent), or
// that carries an answer with no state, is a protocol error and approves
// nothing: the parked call still waits for its own answer.
func TestRoundTripForgedStateRefused(t *testing.T) {
	e := newEnv(t, "")
	e.srv.cfg.ApprovalTimeout = time.Minute
	cs := e.connectVersion(t, "victim", newestProtocol, manualClient())
	other := e.connectVersion(t, "intruder", newestProtocol, manualClient())
	state := firstRound(t, cs)
	accept := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": choiceAllowChat}}
	for _, tt := range []struct {
		name  string
		cs    *mcp.ClientSession
		state string
	}{
		{"forged state", cs, state + "x"},
		{"empty state with an answer", cs, ""},
		{"guessed state", cs, strings.Repeat("A", len(state))},
		{"another session's state", other, state},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := retry(tt.cs, tt.state, accept)
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("retry = %+v, %v; want an invalid-params error", res, err)
			}
		})
	}
	if rows := e.auditRows(t); len(rows) != 0 {
		t.Fatalf("audit rows = %v after forged retries, want none (the call still waits)", rows)
	}
	// The real retry is still the one that decides.
	res, err := retry(cs, state, &mcp.ElicitResult{Action: "decline"})
	if err != nil || !res.IsError {
		t.Fatalf("real retry = %+v, %v; want the denial", res, err)
	}
	if _, err := retry(cs, state, accept); err == nil {
		t.Error("a spent requestState was accepted again")
	}
	rows := e.auditRows(t)
	if len(rows) != 1 || rows[0]["decision"] != "deny" {
		t.Errorf("audit rows = %v, want one denied call", rows)
	}
	// A retry of another call under the state is refused and denies.
	state = firstRound(t, cs)
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "open_docs", Arguments: map[string]any{"pack_id": "other"}, RequestState: state,
		InputResponses: mcp.InputResponseMap{inputApproval: accept},
	})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("retry with other arguments = %v, want an invalid-params error", err)
	}
	waitRows(t, e, 2)
	if rows := e.auditRows(t); rows[1]["decision"] != "deny" || rows[1]["status"] != "denied" {
		t.Errorf("audit row = %v, want the call of the mismatched retry denied", rows[1])
	}
}

// TestRoundTripTimeoutDenies: a parked call whose retry never comes is
// denied when the approval timeout passes, and audited as denied; its
// state is spent.
func TestRoundTripTimeoutDenies(t *testing.T) {
	e := newEnv(t, "")
	e.srv.cfg.ApprovalTimeout = 50 * time.Millisecond
	cs := e.connectVersion(t, "gone", newestProtocol, manualClient())
	state := firstRound(t, cs)
	waitRows(t, e, 1)
	if rows := e.auditRows(t); rows[0]["decision"] != "deny" || rows[0]["status"] != "denied" || rows[0]["approver"] != "mcp-elicitation:gone" {
		t.Errorf("audit row = %v, want the call denied by mcp-elicitation:gone", rows[0])
	}
	if _, err := retry(cs, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": choiceRunOnce}}); err == nil {
		t.Error("the state of a call denied for want of an answer still approves")
	}
}

// TestSyncElicitationBelowRoundTrip: a 2025-11-25 client is still asked
// with elicitation/create in the middle of the call, and gets the result
// in one round.
func TestSyncElicitationBelowRoundTrip(t *testing.T) {
	e := newEnv(t, "")
	var asked atomic.Int32
	opts := elicitingClient(choiceRunOnce, "accept", &asked, nil)
	opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	cs := e.connectVersion(t, "classic", syncProtocol, opts)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_docs", Arguments: openDocs})
	if err != nil || res.NeedsInput() || res.IsError || asked.Load() != 1 {
		t.Fatalf("open_docs = %+v, %v (forms %d); want the entry doc after one elicitation/create", res, err, asked.Load())
	}
}

// waitRows waits until the audit log holds n invocation rows: a parked
// call is recorded by its own goroutine.
func waitRows(t *testing.T, e *testEnv, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(e.auditRows(t)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("audit rows = %v, want %d", e.auditRows(t), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRoundTripResourceRead: reading a resource is a gated read_file call;
// a 2026-07-28 client is asked through an input-required result, its yes
// reads the file and its no refuses the read.
func TestRoundTripResourceRead(t *testing.T) {
	for _, tt := range []struct {
		choice, action string
		wantRead       bool
	}{
		{choiceRunOnce, "accept", true},
		{choiceRunOnce, "decline", false},
	} {
		t.Run(tt.action, func(t *testing.T) {
			e := newEnv(t, "")
			e.srv.cfg.ApprovalTimeout = time.Minute
			var asked atomic.Int32
			cs := e.connectVersion(t, "reader", newestProtocol, elicitingClient(tt.choice, tt.action, &asked, nil))
			res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pack://echo-pack/SKILL.md"})
			read := err == nil && len(res.Contents) == 1 && strings.Contains(res.Contents[0].Text, "echo-pack__echo")
			if read != tt.wantRead || asked.Load() != 1 {
				t.Fatalf("resources/read = %+v, %v (forms %d); want read %v after one form", res, err, asked.Load(), tt.wantRead)
			}
			rows := e.auditRows(t)
			if want := map[bool]string{true: "run_once", false: "deny"}[tt.wantRead]; len(rows) != 1 || rows[0]["decision"] != want || rows[0]["tool"] != "read_file" {
				t.Errorf("audit rows = %v, want one read_file %s", rows, want)
			}
		})
	}
}

// TestRoundTripLogLevel: at 2026-07-28 a request names its log level in
// _meta (there is no logging/setLevel): a guest's lines at and above it
// reach the client, none without it.
func TestRoundTripLogLevel(t *testing.T) {
	for _, tt := range []struct {
		level string
		want  []string
	}{
		{"", nil},
		{"info", []string{"info work info: step one", "warning work warn: almost done"}},
		{"warning", []string{"warning work warn: almost done"}},
	} {
		t.Run("level="+tt.level, func(t *testing.T) {
			e := newEnv(t, "[approval]\nauto_approve = [\"notify-pack__work\", \"notify-pack__tick\"]\n")
			e.installNotify(t)
			h := &heard{barrier: make(chan struct{}, 1)}
			cs := e.connectVersion(t, "listener", newestProtocol, h.options())
			params := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}}
			if tt.level != "" {
				//lint:ignore SA1019 MCP logging stays in its deprecation window (notify.go)
				params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: tt.level}
			}
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				t.Fatalf("work: %+v %v", res, err)
			}
			h.await(t, cs)
			h.mu.Lock()
			defer h.mu.Unlock()
			if !slices.Equal(h.logs, tt.want) {
				t.Errorf("log notifications %q, want %q", h.logs, tt.want)
			}
		})
	}
}

// TestRoundTripStdioEnds: a 2026-07-28 client over stdio keeps a
// subscriptions/listen request open for list_changed; when it leaves, the
// answer to that cancelled request has nowhere to go, and the session ends
// cleanly all the same.
func TestRoundTripStdioEnds(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	e.srv.multiRoundTrip = true
	cs := e.connectStdio(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	if got := cs.InitializeResult().ProtocolVersion; got != newestProtocol {
		t.Fatalf("negotiated %s, want %s", got, newestProtocol)
	}
	if text, isErr := callText(t, cs, "enable_tools", openDocs); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	// connectStdio's cleanup fails the test if ServeStdio ends with an error.
}

// TestRoundTripSubscriptionDenied: at 2026-07-28 a subscription is a
// subscriptions/listen request (the Go client fires it and never reports
// its answer, so this test speaks JSON-RPC itself): one for a URI that
// names no file of an attached pack is refused with an error, one for a
// declared resource is acknowledged.
func TestRoundTripSubscriptionDenied(t *testing.T) {
	e := newEnvPacks(t, "", "testdata/decl-pack")
	e.srv.multiRoundTrip = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	c := e.srv.newConn()
	done := make(chan error, 1)
	go func() { done <- c.srv.Run(ctx, st) }()
	defer func() { cancel(); <-done }()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    newestProtocol,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	listen := func(n int64, uri string) jsonrpc.Message {
		t.Helper()
		id, _ := jsonrpc.MakeID(float64(n))
		params, _ := json.Marshal(map[string]any{"_meta": meta, "notifications": map[string]any{"resourceSubscriptions": []string{uri}}})
		if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "subscriptions/listen", Params: params}); err != nil {
			t.Fatal(err)
		}
		msg, err := conn.Read(ctx) // the refusal, or the acknowledgment
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	for i, uri := range []string{"x://not-declared", "data://decl-pack/..", "pack://decl-pack/../x.txt", "pack://other-pack/SKILL.md", "pack://decl-pack/data"} {
		resp, ok := listen(int64(i+1), uri).(*jsonrpc.Response)
		if !ok || resp.Error == nil {
			t.Errorf("subscriptions/listen %s = %+v, want an error response", uri, resp)
		}
	}
	if n, ok := listen(100, "docs://decl-pack/guide").(*jsonrpc.Request); !ok || n.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("subscriptions/listen of a declared resource = %+v, want the acknowledgment", n)
	}
	// Acknowledged means subscribed: a change is heard.
	if err := os.WriteFile(filepath.Join(declPackDir(t, e), "docs", "guide.md"), []byte("# Guide v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second) // a hang guard, not a timing assertion
	defer rcancel()
	msg, err := conn.Read(rctx)
	if n, ok := msg.(*jsonrpc.Request); err != nil || !ok || n.Method != "notifications/resources/updated" || !strings.Contains(string(n.Params), "docs://decl-pack/guide") {
		t.Errorf("after a change = %+v, %v; want notifications/resources/updated for docs://decl-pack/guide", msg, err)
	}
}

// TestRoundTripAsk: at 2026-07-28 a guest's question (ask_person) reaches
// the client as an input-required round of its own, and the retry's answer
// comes back to the tool, checked against the tool's schema by the host
// (this client does not check it itself).
func TestRoundTripAsk(t *testing.T) {
	question := map[string]any{"message": "Deploy to which region?", "schema": map[string]any{
		"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string", "enum": []string{"eu", "us"}}}, "required": []string{"region"}}}
	for _, tt := range []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
	}{
		{"accepted", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"region": "eu"}}, "accept"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, "decline"},
		{"off the schema", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"region": "mars"}}, "cancel"},
		{"no answer", nil, "decline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "[approval]\nauto_approve = [\"ask-pack__ask\"]\n")
			e.srv.cfg.ApprovalTimeout = time.Minute
			e.installAsk(t, []capability.Name{capability.AskPerson})
			cs := e.connectVersion(t, "asked", newestProtocol, manualClient())
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: question})
			if err != nil {
				t.Fatal(err)
			}
			form, ok := res.InputRequests[inputApproval].(*mcp.ElicitParams)
			if !res.NeedsInput() || !ok || !strings.Contains(form.Message, "Deploy to which region?") {
				t.Fatalf("first round = %+v, want the tool's question", res)
			}
			params := &mcp.CallToolParams{Name: "ask", Arguments: question, RequestState: res.RequestState}
			if tt.answer != nil {
				params.InputResponses = mcp.InputResponseMap{inputApproval: tt.answer}
			}
			if res, err = cs.CallTool(context.Background(), params); err != nil || res.IsError {
				t.Fatalf("retry = %+v, %v", res, err)
			}
			var got struct {
				Result struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(resultText(res)), &got); err != nil || got.Result.Action != tt.want || (tt.want == "accept") != (got.Result.Content["region"] == "eu") {
				t.Errorf("the tool got %s, want action %s", resultText(res), tt.want)
			}
		})
	}
}

// TestRoundTripPrompt: a prompt that carries a pack file reads it through
// the gate; at 2026-07-28 the person is asked in an input-required round,
// and the prompt comes with the file after a yes, not after a no.
func TestRoundTripPrompt(t *testing.T) {
	for _, tt := range []struct {
		action string
		want   bool
	}{{"accept", true}, {"decline", false}} {
		t.Run(tt.action, func(t *testing.T) {
			e := newEnvPacks(t, "", "testdata/decl-pack")
			e.srv.cfg.ApprovalTimeout = time.Minute
			var asked atomic.Int32
			cs := e.connectVersion(t, "prompter", newestProtocol, elicitingClient(choiceRunOnce, tt.action, &asked, nil))
			res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "embed", Arguments: map[string]string{"uri": "docs://decl-pack/guide"}})
			got := err == nil && len(res.Messages) > 0
			if got {
				er, ok := res.Messages[0].Content.(*mcp.EmbeddedResource)
				got = ok && strings.Contains(er.Resource.Text, "MARKER-GUIDE")
			}
			if got != tt.want || asked.Load() != 1 {
				t.Errorf("prompts/get = %+v, %v (forms %d); want the file %v after one form", res, err, asked.Load(), tt.want)
			}
		})
	}
}
