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

// multiRoundTrip reports whether the client of req asks the person through
// "input required" results (a protocol newer than syncProtocol) and can
// show the approval form.
func multiRoundTrip(req *mcp.CallToolRequest) bool {
	return req.ProtocolVersion() > syncProtocol && elicitsForms(req.ClientCapabilities())
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
	name    string
	args    json.RawMessage
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
	res *mcp.CallToolResult
	err error
}

type parkedKey struct{}

// roundTrips wraps a tools/call handler: a client of a multi round-trip
// protocol gets its approval forms as "input required" results; any other
// client is served by h as it is, eliciting in the middle of the call.
func (c *conn) roundTrips(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !multiRoundTrip(req) {
			return h(ctx, req)
		}
		if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
			return c.parked.resume(ctx, req)
		}
		p := c.parked.start(ctx, req, h, clientName(req.Session), c.s.approvalTimeout())
		return c.parked.wait(ctx, p)
	}
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
func (pc *parkedCalls) start(ctx context.Context, req *mcp.CallToolRequest, h mcp.ToolHandler, client string, timeout time.Duration) *parkedCall {
	pc.once.Do(func() {
		pc.gone = make(chan struct{})
		go func() {
			_ = req.Session.Wait()
			close(pc.gone)
		}()
	})
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &parkedCall{
		ss: req.Session, name: req.Params.Name, args: req.Params.Arguments, client: client, timeout: timeout,
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
		res, err := h(cctx, req)
		p.done <- roundResult{res, err}
	}()
	return p
}

// wait answers the client's request with the call's result, or with the
// form the call's approver waits on: then the call is parked under a new
// requestState until the client's retry. If the client gives up on the
// request, the call ends.
func (pc *parkedCalls) wait(ctx context.Context, p *parkedCall) (*mcp.CallToolResult, error) {
	select {
	case r := <-p.done:
		return r.res, r.err
	case ask := <-p.asks:
		state := rand.Text()
		pc.mu.Lock()
		if pc.calls == nil {
			pc.calls = map[string]*parkedCall{}
		}
		pc.calls[state] = p
		p.state, p.reply = state, ask.reply
		pc.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputApproval: ask.form}, RequestState: state}, nil
	case <-ctx.Done():
		p.cancel()
		return nil, ctx.Err()
	}
}

// ErrRequestState answers a retry whose requestState names no call of
// this session that waits for input.
const errRequestState = "mcpserver: requestState names no call of this session that waits for input (unknown, already used, expired or another session's): call the tool again without inputResponses and requestState"

// resume takes the parked call req's requestState names, hands the
// client's answer to its approver and waits for what comes next. The state
// is spent either way. A retry of another tool or with other arguments
// than the parked call is refused, and the parked call is denied.
func (pc *parkedCalls) resume(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	pc.mu.Lock()
	p, ok := pc.calls[req.Params.RequestState]
	if ok && p.ss == req.Session {
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
	if req.Params.Name != p.name || !sameJSON(req.Params.Arguments, p.args) {
		reply <- nil // denies
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcpserver: the retry is not the call its requestState names (another tool or other arguments): that call is denied; call the tool again"}
	}
	answer, _ := req.Params.InputResponses[inputApproval].(*mcp.ElicitResult)
	reply <- answer // nil (no answer) denies
	return pc.wait(ctx, p)
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
	reply := make(chan *mcp.ElicitResult, 1)
	select {
	case a.p.asks <- inputAsk{form: approvalRequest(pend), reply: reply}:
	case <-ctx.Done():
		return capability.Deny, ctx.Err()
	}
	timer := time.NewTimer(a.p.timeout)
	defer timer.Stop()
	select {
	case res := <-reply:
		return verdictOf(res), nil
	case <-timer.C:
		a.pc.forget(a.p)
		return capability.Deny, nil
	case <-ctx.Done():
		a.pc.forget(a.p)
		return capability.Deny, ctx.Err()
	}
}
