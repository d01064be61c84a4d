package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
)

// From protocol 2026-07-28 on (SEP-2322) a server may not send the client a
// request while it handles one: to ask the person, it answers the call with
// "input required", the form(s) to show and an opaque requestState, and the
// client retries the same call with the answers (inputResponses) and that
// state. The gate asks its approver in the middle of a call and waits for a
// verdict, and that contract stays: for such a client the call handler runs
// the call in a goroutine (parked) and answers with whichever comes first,
// the call's result or the approver's form. The retry hands the answer to
// the waiting approver and waits again: a later approval may ask once more.
//
// A requestState is random (130 bits), names one parked call of this
// session, and is good for one retry: an unknown, spent or other session's
// state is a protocol error and decides nothing. A call whose retry never
// comes is denied by the approver when the approval timeout passes (the
// audit records that denial), or when the session ends.

// inputApproval is the approval form's key among a result's inputRequests.
const inputApproval = "approval"

// multiRoundTrip reports whether a client of this protocol version and
// capabilities asks the person through "input required" results (a
// protocol newer than syncProtocol) and can show the approval form.
func multiRoundTrip(version string, caps *mcp.ClientCapabilities) bool {
	return version > syncProtocol && elicitsForms(caps)
}

// parkedCalls are the calls of one session that run while their client
// answers a form.
type parkedCalls struct {
	mu    sync.Mutex
	calls map[string]*parkedCall // by requestState, while the client has the form

	once sync.Once
	gone chan struct{} // closed when the session ends
}

// parkedCall is one call running in its own goroutine.
type parkedCall struct {
	ss      *mcp.ServerSession
	name    string          // the method's subject: a tool, or resources/read
	args    json.RawMessage // its arguments, or the resource's URI
	client  string
	timeout time.Duration

	asks   chan inputAsk      // the approver's form, to the waiting handler
	done   chan roundResult   // the call's end; buffered
	cancel context.CancelFunc // ends the call's context

	// Guarded by parkedCalls.mu: the state the client holds, and where its
	// answer goes.
	state string
	reply chan<- *mcp.ElicitResult
}

type inputAsk struct {
	form  *mcp.ElicitParams
	reply chan *mcp.ElicitResult // buffered: one answer
}

type roundResult struct {
	res mcp.Result
	err error
}

// readMethod names a parked resources/read, promptMethod (with the
// prompt's name) a parked prompts/get.
const (
	readMethod   = "resources/read"
	promptMethod = "prompts/get:"
)

type parkedKey struct{}

// roundTrips wraps a tools/call handler: a client of a multi round-trip
// protocol gets its approval forms as "input required" results; any other
// client is served by h as it is, eliciting in the middle of the call.
func (c *conn) roundTrips(h mcp.ToolHandler) mcp.ToolHandler {
	need := func(in mcp.InputRequestMap, state string) *mcp.CallToolResult {
		return &mcp.CallToolResult{InputRequests: in, RequestState: state}
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !multiRoundTrip(req.ProtocolVersion(), req.ClientCapabilities()) {
			return h(ctx, req)
		}
		q := round{ss: req.Session, name: req.Params.Name, args: req.Params.Arguments, state: req.Params.RequestState, answers: req.Params.InputResponses}
		return parkedRound(ctx, c, q, func(ctx context.Context) (*mcp.CallToolResult, error) { return h(ctx, req) }, need)
	}
}

// readRoundTrips is roundTrips for resources/read (reading a resource is a
// gated read_file call).
func (c *conn) readRoundTrips(h mcp.ResourceHandler) mcp.ResourceHandler {
	need := func(in mcp.InputRequestMap, state string) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{InputRequests: in, RequestState: state}
	}
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if !multiRoundTrip(req.ProtocolVersion(), req.ClientCapabilities()) {
			return h(ctx, req)
		}
		uri, err := json.Marshal(req.Params.URI)
		if err != nil {
			return nil, err
		}
		q := round{ss: req.Session, name: readMethod, args: uri, state: req.Params.RequestState, answers: req.Params.InputResponses}
		return parkedRound(ctx, c, q, func(ctx context.Context) (*mcp.ReadResourceResult, error) { return h(ctx, req) }, need)
	}
}

// promptRoundTrips is roundTrips for prompts/get (a prompt may carry pack
// files, each a gated read_file call).
func (c *conn) promptRoundTrips(h mcp.PromptHandler) mcp.PromptHandler {
	need := func(in mcp.InputRequestMap, state string) *mcp.GetPromptResult {
		return &mcp.GetPromptResult{InputRequests: in, RequestState: state}
	}
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if !multiRoundTrip(req.ProtocolVersion(), req.ClientCapabilities()) {
			return h(ctx, req)
		}
		args, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		q := round{ss: req.Session, name: promptMethod + req.Params.Name, args: args, state: req.Params.RequestState, answers: req.Params.InputResponses}
		return parkedRound(ctx, c, q, func(ctx context.Context) (*mcp.GetPromptResult, error) { return h(ctx, req) }, need)
	}
}

// round is one request of a multi round-trip call: its subject, and the
// state and answers of a retry.
type round struct {
	ss      *mcp.ServerSession
	name    string
	args    json.RawMessage
	state   string
	answers mcp.InputResponseMap
}

// parkedRound serves one round: a first request starts the call (run), a
// retry resumes the parked call its state names; need builds the
// input-required result.
func parkedRound[R mcp.Result](ctx context.Context, c *conn, q round, run func(context.Context) (R, error), need func(mcp.InputRequestMap, string) R) (R, error) {
	var p *parkedCall
	if q.state != "" || len(q.answers) > 0 {
		var err error
		if p, err = c.parked.resume(q); err != nil {
			var zero R
			return zero, err
		}
	} else {
		p = c.parked.start(ctx, q, func(ctx context.Context) (mcp.Result, error) { return run(ctx) }, clientName(q.ss), c.s.approvalTimeout())
	}
	res, state, form, err := c.parked.wait(ctx, p)
	if form != nil {
		return need(mcp.InputRequestMap{inputApproval: form}, state), nil
	}
	r, _ := res.(R)
	return r, err
}

// approverIn is the approver of the parked call that ctx carries, if any;
// else approver.
func (pc *parkedCalls) approverIn(ctx context.Context, approver capability.Approver) capability.Approver {
	if p, ok := ctx.Value(parkedKey{}).(*parkedCall); ok {
		return parkedApprover{pc: pc, p: p}
	}
	return approver
}

// start runs h for req in its own goroutine, on a context that outlives
// the request (the call goes on between rounds) and ends with the session.
func (pc *parkedCalls) start(ctx context.Context, q round, run func(context.Context) (mcp.Result, error), client string, timeout time.Duration) *parkedCall {
	pc.once.Do(func() {
		pc.gone = make(chan struct{})
		go func() {
			_ = q.ss.Wait()
			close(pc.gone)
		}()
	})
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &parkedCall{
		ss: q.ss, name: q.name, args: q.args, client: client, timeout: timeout,
		asks: make(chan inputAsk), done: make(chan roundResult, 1), cancel: cancel,
	}
	cctx = context.WithValue(cctx, parkedKey{}, p)
	go func() {
		select {
		case <-pc.gone:
			cancel()
		case <-cctx.Done():
		}
	}()
	go func() {
		defer cancel()
		res, err := run(cctx)
		p.done <- roundResult{res, err}
	}()
	return p
}

// wait returns the call's result, or the form the call's approver waits
// on: then the call is parked under a new requestState until the client's
// retry. If the client gives up on the request, the call ends.
func (pc *parkedCalls) wait(ctx context.Context, p *parkedCall) (res mcp.Result, state string, form *mcp.ElicitParams, err error) {
	select {
	case r := <-p.done:
		return r.res, "", nil, r.err
	case ask := <-p.asks:
		state := rand.Text()
		pc.mu.Lock()
		if pc.calls == nil {
			pc.calls = map[string]*parkedCall{}
		}
		pc.calls[state] = p
		p.state, p.reply = state, ask.reply
		pc.mu.Unlock()
		return nil, state, ask.form, nil
	case <-ctx.Done():
		p.cancel()
		return nil, "", nil, ctx.Err()
	}
}

// errRequestState answers a retry whose requestState names no call of
// this session that waits for input.
const errRequestState = "mcpserver: requestState names no call of this session that waits for input (unknown, already used, expired or another session's): call the tool again without inputResponses and requestState"

// resume takes the parked call q's requestState names and hands the
// client's answer to its approver. The state is spent either way. A retry
// of another tool or resource, or with other arguments, than the parked
// call is refused, and the parked call is denied.
func (pc *parkedCalls) resume(q round) (*parkedCall, error) {
	pc.mu.Lock()
	p, ok := pc.calls[q.state]
	if ok && p.ss == q.ss {
		delete(pc.calls, p.state)
	} else {
		p, ok = nil, false
	}
	var reply chan<- *mcp.ElicitResult
	if ok {
		reply, p.state, p.reply = p.reply, "", nil
	}
	pc.mu.Unlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: errRequestState}
	}
	if q.name != p.name || !sameJSON(q.args, p.args) {
		reply <- nil // denies
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcpserver: the retry is not the call its requestState names (another tool or resource, or other arguments): that call is denied; make the call again"}
	}
	answer, _ := q.answers[inputApproval].(*mcp.ElicitResult)
	reply <- answer // nil (no answer) denies
	return p, nil
}

// forget drops p's requestState, if the client still holds one: its retry
// will find nothing.
func (pc *parkedCalls) forget(p *parkedCall) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if p.state != "" && pc.calls[p.state] == p {
		delete(pc.calls, p.state)
	}
	p.state, p.reply = "", nil
}

// sameJSON reports whether a and b are the same JSON value (a client may
// re-encode the arguments it retries with).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if len(a) == 0 {
		a = json.RawMessage("{}")
	}
	if len(b) == 0 {
		b = json.RawMessage("{}")
	}
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// parkedApprover asks the person through the parked call's client: it hands
// the form to the waiting handler and waits for the retry's answer, up to
// the approval timeout.
type parkedApprover struct {
	pc *parkedCalls
	p  *parkedCall
}

func (a parkedApprover) Name() string { return elicitApprover{client: a.p.client}.Name() }

func (a parkedApprover) Approve(ctx context.Context, pend capability.Pending) (capability.Verdict, error) {
	res, err := a.ask(ctx, approvalRequest(pend))
	return verdictOf(res), err
}

// Ask puts a guest's question (ask_person) to the person the same way, in
// a round of its own. No answer (the retry never came, or carried none)
// declines.
func (a parkedApprover) Ask(ctx context.Context, q capability.Question) (capability.Answer, error) {
	res, err := a.ask(ctx, questionRequest(q))
	if err != nil {
		return capability.Answer{}, err
	}
	if res == nil {
		return capability.Answer{Action: "decline"}, nil
	}
	return capability.Answer{Action: res.Action, Content: res.Content}, nil
}

// ask hands form to the waiting handler and waits for the retry's answer,
// up to the approval timeout: nil when none came.
func (a parkedApprover) ask(ctx context.Context, form *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	reply := make(chan *mcp.ElicitResult, 1)
	select {
	case a.p.asks <- inputAsk{form: form, reply: reply}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	timer := time.NewTimer(a.p.timeout)
	defer timer.Stop()
	select {
	case res := <-reply:
		return res, nil
	case <-timer.C:
		a.pc.forget(a.p)
		return nil, nil
	case <-ctx.Done():
		a.pc.forget(a.p)
		return nil, ctx.Err()
	}
}
