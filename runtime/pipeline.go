package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// Pipeline is the one way to run a tool, for every front end: packs run,
// the chat orchestrator, the MCP server, the web app. Each call goes
//
//	validate the arguments once → the gate decides → take the grant →
//	verify the pack's integrity → invoke → close the audit row
//
// and the approval the gate gives binds that exact call (invocation, pack,
// tool, the arguments' digest, the grant's digest and the pack's integrity
// digest): the runtime refuses anything else. A front end's own tools
// (open_docs, read_file, exec_best_effort, an MCP resource read) are Builtins
// and take the same path, so the decision, the outcome and the audit record
// are made in one place.
type Pipeline struct {
	rt  *Runtime
	cfg PipelineConfig
}

// PipelineConfig is what a Pipeline needs besides the Runtime.
type PipelineConfig struct {
	// Grants returns what the person granted (required).
	Grants capability.GrantSource
	// Policy is the enterprise policy; nil means none.
	Policy *capability.Policy
	// Audit records every exercise and every call's outcome (required).
	Audit capability.Auditor
	// Home and Getenv expand "~" and "$VAR" in granted paths.
	Home   string
	Getenv func(string) string
	// Reserved, when set, returns packs' own listening addresses (the web
	// app, the MCP HTTP server) at each call: no tool connects to them,
	// whatever its grant (hostfns.WithReserved).
	Reserved func() []netip.AddrPort
	// Secrets supplies the values of the secrets a grant holds (see
	// SecretSource); nil refuses every call whose grant holds one.
	Secrets SecretSource
	// Tracer, when set, traces each call: a span for the call and one for
	// each of its stages (telemetry.go). nil traces nothing, at no cost.
	Tracer trace.Tracer
	// Observer, when set, is told how each call ended (metrics).
	Observer CallObserver
}

// NewPipeline returns the pipeline that runs tools on rt.
func NewPipeline(rt *Runtime, cfg PipelineConfig) (*Pipeline, error) {
	switch {
	case rt == nil:
		return nil, errors.New("runtime: pipeline without a runtime")
	case cfg.Grants == nil:
		return nil, errors.New("runtime: pipeline without a grant source")
	case cfg.Audit == nil:
		return nil, errors.New("runtime: pipeline without an audit log: every call must be audited")
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	return &Pipeline{rt: rt, cfg: cfg}, nil
}

// Policy is the enterprise policy the pipeline enforces (nil for none):
// front ends read it from here for what it mandates and blocks, so they and
// the gate never follow two policies.
func (p *Pipeline) Policy() *capability.Policy { return p.cfg.Policy }

// Grants is the person's grants every call of p runs with. A front end
// that shows what a call would hold (MCP's tool annotations) reads them
// here, so it can never disagree with the calls.
func (p *Pipeline) Grants() capability.GrantSource { return p.cfg.Grants }

// Env is what expanding a grant's paths needs, for a call in workspace: the
// same expansion the pipeline makes, for showing a grant (capability.Explain).
func (p *Pipeline) Env(workspace string) capability.Env {
	return capability.Env{Home: p.cfg.Home, Getenv: p.cfg.Getenv, Workspace: workspace}
}

// Request is one call to make.
type Request struct {
	// Invocation is the call's id; empty gets a fresh one.
	Invocation string
	// Chat is the chat the call belongs to (for "allow for this chat" and
	// chat-scoped grants); empty outside a chat.
	Chat string
	// Client names who made the call, for the audit log (an MCP client).
	Client string
	// Person and Issuer name the person who made the call (an OIDC
	// subject and its issuer), for the audit log; empty for the token
	// holder and the person at the terminal.
	Person, Issuer string
	// Pack is the pack whose tool runs, or under whose grant a Builtin
	// runs; Ref names it for grants and policy, with Ref.Digest its
	// packs.lock integrity (empty for a pack run from a folder).
	Pack *packs.Pack
	Ref  capability.PackRef
	// Tool is the pack's tool to run. Exactly one of Tool and Builtin.
	Tool    string
	Builtin *Builtin
	// Arguments are the call's JSON arguments; empty means {}.
	Arguments json.RawMessage
	// Workspace is the call's workspace, an existing absolute directory.
	Workspace string
	// Approvers decide the call after the policy (and the chat's memory,
	// when Memory is set). None means only the policy can approve.
	Approvers []capability.Approver
	Memory    capability.ChatMemory
	// Consent, when set, says which packs the person attached to the
	// chat: a Builtin that ReadsPack of such a pack is approved by that
	// act, without asking (capability.Consent).
	Consent capability.Consent
	// Observe, when set, is called just before the tool runs; the function
	// it returns is called after with what the call's own exercises wrote
	// in the workspace, and what that returns is recorded as the call's
	// artifacts.
	Observe func() func(Writes) []capability.Artifact
	// RiskLevel is what the call declares it can break (a recipe step's
	// risk_level): the approver is shown it, and the policy's
	// never_auto_approve_risk reads it. Empty declares nothing.
	RiskLevel capability.RiskLevel
	// Invalid, when set, is why the front end could not even resolve the
	// call (an unknown tool, arguments that are not JSON): the pipeline
	// records it as the call's outcome and runs nothing.
	Invalid error
}

// who is who made the call, as each of its exercises records it.
func (r Request) who() capability.Exercise {
	return capability.Exercise{Person: r.Person, Issuer: r.Issuer, Client: r.Client}
}

// Builtin is a front end's own tool, run by the host: it still goes through
// the gate, and is audited like a pack's tool. Run is called only once the
// call is approved; it gets the approval and, when the builtin runs under
// the pack's grant (Granted), the grant, which a hostfns.Call it builds must
// carry (hostfns.Exec refuses without an approval that holds).
type Builtin struct {
	Name         string
	Capabilities []capability.Name // what the call may exercise, for the approver
	Touches      []string          // what it names: paths, commands
	Granted      bool              // it runs under Request.Pack's grant
	// ReadsPack says the call only reads Request.Pack itself (its docs,
	// its own files, its list of tools) and exercises no grant: attaching
	// the pack is consent to it (Request.Consent).
	ReadsPack bool
	// Check, when set, decides what the call would exercise under the
	// grant, before the gate: a denial is recorded and refuses the call
	// without asking anyone to approve what could not run.
	Check func(g capability.Grant) []capability.Decision
	// Run performs the call. It returns the JSON result and, for a command,
	// its exit status.
	Run func(ctx context.Context, g Granted) (json.RawMessage, int, error)
}

// Granted is what an approved Builtin runs with.
type Granted struct {
	Invocation string
	Approval   capability.Approval
	Grant      capability.Grant // zero unless Builtin.Granted
	Recorder   capability.Recorder
}

// Outcome is how a call ended. A refusal or a failure of the tool is an
// Outcome with Err set, not an error of Call.
type Outcome struct {
	Invocation string
	Approval   capability.Approval // the zero Approval when the call was refused
	Result     Result
	Output     json.RawMessage // the tool's JSON result, or a Builtin's
	// Content is the result's blocks when the tool declares "output":
	// "content" (docs/abi.md §1.4), checked by ParseContent: never empty
	// then. Nil for every other tool and Builtin, whose result is Output,
	// plain text. Output still holds the JSON the blocks came from.
	Content   []Block
	Err       error // why it was refused or failed
	Status    capability.Status
	Artifacts []capability.Artifact
	Started   time.Time
	Finished  time.Time
	// Waited is how long the gate took to decide: the time a person took
	// to answer, or next to nothing when the policy, the chat's memory or
	// an attach decided. Ran is how long the approved call ran (zero when
	// it never did). The rest of Finished - Started is the checks and the
	// audit.
	Waited, Ran time.Duration
}

// Call runs one call through the pipeline. The audit record is written
// before Call returns, whatever the outcome, even when ctx was cancelled;
// Call returns an error only when it could not be written.
func (p *Pipeline) Call(ctx context.Context, req Request) (Outcome, error) {
	o := Outcome{Invocation: req.Invocation, Started: time.Now()}
	if o.Invocation == "" {
		o.Invocation = newInvocationID()
	}
	args := req.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	ctx, span := p.startCall(ctx, req, o.Invocation)
	rec := capability.CallRecord{Invocation: o.Invocation, Chat: req.Chat, Client: req.Client, Person: req.Person, Issuer: req.Issuer, Pack: req.Ref.Name, Arguments: args, Started: o.Started}
	o.Output, o.Result, o.Err = p.call(ctx, req, args, &o, &rec)
	o.Finished = time.Now()
	o.Status = StatusOf(o.Err)
	rec.Finished, rec.Status, rec.ExitCode, rec.Output, rec.Artifacts = o.Finished, o.Status, o.Result.ExitCode, o.Output, o.Artifacts
	rec.Waited, rec.Ran = o.Waited, o.Ran
	if o.Err != nil {
		rec.Reason = o.Err.Error()
		// A call the gate refused names the approver who said no; one it
		// approved keeps its approver, whatever refused it later.
		var de *capability.DeniedError
		if rec.Approver == "" && errors.As(o.Err, &de) {
			rec.Approver = de.Approver
		}
	}
	end := stage(ctx, SpanAudit)
	err := p.cfg.Audit.RecordCall(context.WithoutCancel(ctx), rec)
	end(err)
	endCall(span, o, rec)
	if err != nil {
		return o, fmt.Errorf("runtime: audit of %s: %w", o.Invocation, err)
	}
	if p.cfg.Observer != nil {
		p.cfg.Observer.CallEnded(rec.Pack, rec.Tool, o)
	}
	return o, nil
}

// call is the pipeline proper; Call wraps it with the audit record. It
// reads as the steps of the Pipeline's doc comment.
func (p *Pipeline) call(ctx context.Context, req Request, args json.RawMessage, o *Outcome, rec *capability.CallRecord) (json.RawMessage, Result, error) {
	end := stage(ctx, SpanValidate)
	tool, err := validate(req, args, rec)
	if end(err); err != nil {
		return nil, Result{}, err
	}
	end = stage(ctx, SpanGate)
	pending, preview, once, err := p.pending(ctx, req, tool, args, o.Invocation, rec.Tool)
	if err != nil {
		end(err)
		return nil, Result{}, err
	}
	asked := time.Now()
	ap, err := p.decide(ctx, req, pending)
	o.Waited = time.Since(asked)
	if end(err); err != nil {
		return nil, Result{}, err
	}
	o.Approval = ap
	rec.Approver, rec.Verdict, rec.Remembered, rec.ByAttach = ap.Approver(), ap.Verdict(), ap.Remembered(), ap.ByAttach()
	end = stage(ctx, SpanGrant)
	g, err := p.take(ctx, req, tool, ap, preview, once)
	if err != nil {
		end(err)
		return nil, Result{}, err
	}
	ctx, sec, err := p.callContext(ctx, req, g)
	if end(err); err != nil {
		return nil, Result{}, err
	}
	out, res, err := p.run(ctx, req, tool, args, ap, g, o)
	out, res, err = mask(sec, out, res, err)
	if err == nil && tool != nil {
		o.Content, err = checkResult(req.Pack.Name, tool, out)
	}
	return out, res, err
}

// validate is the first step: it checks the request and, once, the
// arguments against the tool's input schema, and names the call's tool in
// rec. It returns the pack's tool, nil for a Builtin. Arguments that are
// not JSON are recorded as a JSON string, whoever refuses the call.
func validate(req Request, args json.RawMessage, rec *capability.CallRecord) (*packs.Tool, error) {
	valid := json.Valid(args)
	if !valid {
		quoted, _ := json.Marshal(string(args))
		rec.Arguments = quoted
	}
	if req.Invalid != nil {
		if req.Builtin != nil {
			rec.Tool = req.Builtin.Name
		}
		return nil, req.Invalid
	}
	if !valid {
		return nil, fmt.Errorf("%w: the arguments are not valid JSON: %s", packs.ErrInvalidInput, jsonSyntaxWhere(args))
	}
	var tool *packs.Tool
	switch {
	case (req.Tool == "") == (req.Builtin == nil):
		return nil, errors.New("runtime: a request names a pack's tool or a builtin, exactly one")
	case req.Builtin != nil:
		rec.Tool = req.Builtin.Name
		if req.Builtin.Granted && req.Pack == nil {
			return nil, fmt.Errorf("runtime: builtin %s runs under a pack's grant, and the request names no pack", req.Builtin.Name)
		}
	default:
		rec.Tool = req.Tool
		if req.Pack == nil {
			return nil, errors.New("runtime: a tool call without its pack")
		}
		t, ok := req.Pack.Tool(req.Tool)
		if !ok {
			return nil, fmt.Errorf("%w: pack %s has no tool %q", packs.ErrInvalidInput, req.Pack.Name, req.Tool)
		}
		tool = t
		if err := t.ValidateInput(args); err != nil {
			return nil, err
		}
	}
	if req.Pack != nil && req.Ref.Name != req.Pack.Name {
		return nil, fmt.Errorf("runtime: the request's pack reference %q is not pack %s", req.Ref.Name, req.Pack.Name)
	}
	return tool, nil
}

// pending builds what the gate decides: the call, and the grant it would
// run with (preview, shown to the approver and bound by the approval; zero
// for a Builtin that runs under no grant). once says whether the person's
// grants hold a once grant for the call to spend. A Builtin's Check that
// finds a denial is recorded and refuses the call before anyone is asked.
func (p *Pipeline) pending(ctx context.Context, req Request, tool *packs.Tool, args json.RawMessage, id, name string) (pending capability.Pending, preview capability.Grant, once bool, err error) {
	if tool != nil || req.Builtin.Granted {
		if preview, once, err = p.grant(ctx, req, false); err != nil {
			return capability.Pending{}, capability.Grant{}, false, err
		}
	}
	pending = capability.Pending{
		Invocation: id, Chat: req.Chat, Pack: req.Ref.Name, Tool: name, BaseTool: req.Builtin != nil,
		Arguments: args, Grant: preview, Integrity: req.Ref.Digest, RiskLevel: req.RiskLevel,
	}
	if req.Builtin != nil {
		pending.Capabilities, pending.Touches = req.Builtin.Capabilities, req.Builtin.Touches
		pending.ReadsPack = req.Builtin.ReadsPack && !req.Builtin.Granted
		if err := p.checkBuiltin(req, preview, id); err != nil {
			return capability.Pending{}, capability.Grant{}, false, err
		}
	} else {
		pending.Capabilities, pending.Touches = preview.Names(), touches(req.Pack.Request(), preview)
	}
	if slices.Contains(pending.Capabilities, capability.TerminalExec) && preview.Has(capability.TerminalExec) {
		// What a native command of this call may touch, as the kernel will
		// enforce it (hostfns.Exec confines every one): the card says so.
		root := ""
		if req.Pack != nil {
			root = req.Pack.Dir
		}
		pending.Touches = append(pending.Touches, hostfns.Confinement(preview, root, req.Workspace))
	}
	return pending, preview, once, nil
}

// checkBuiltin runs a Builtin's Check under the grant it would run with:
// the first denial is recorded and refuses the call.
func (p *Pipeline) checkBuiltin(req Request, preview capability.Grant, id string) error {
	if req.Builtin.Check == nil {
		return nil
	}
	for _, d := range req.Builtin.Check(preview) {
		if d.Allowed() {
			continue
		}
		e := d.Record(req.Ref.Name, req.Builtin.Name, id)
		e.Person, e.Issuer, e.Client = req.Person, req.Issuer, req.Client
		if err := p.cfg.Audit.RecordExercise(e); err != nil {
			return fmt.Errorf("runtime: audit: %w", err)
		}
		return d.Err()
	}
	return nil
}

// decide is the gate: the policy first, then the chat's consent by attach
// and its memory (when the request has them), then the request's
// approvers.
func (p *Pipeline) decide(ctx context.Context, req Request, pending capability.Pending) (capability.Approval, error) {
	gate := capability.NewGate(append([]capability.Approver{p.cfg.Policy.Approver()}, req.Approvers...)...)
	if req.Memory != nil {
		gate = gate.WithMemory(req.Memory)
	}
	if req.Consent != nil {
		gate = gate.WithConsent(req.Consent)
	}
	return gate.Decide(ctx, pending)
}

// take takes the grant the approved call runs with: it spends the person's
// "once" grants. It must be the grant the person was shown, so one they
// changed while they were asked refuses the call. When there is nothing to
// spend and nobody was asked (the policy, the chat's memory or an attach
// approved, at once), the grant just read is the call's: reading it again could only
// see what a change a moment later would, and that is the next call's.
func (p *Pipeline) take(ctx context.Context, req Request, tool *packs.Tool, ap capability.Approval, preview capability.Grant, once bool) (capability.Grant, error) {
	granted := tool != nil || req.Builtin.Granted
	if !granted || (!once && p.decidedAtOnce(ap, req)) {
		return preview, nil
	}
	g, _, err := p.grant(ctx, req, true)
	return g, err
}

// callContext is the context the call runs in: packs' own listeners out of
// reach, the first approver that can ask (ask_person) to put the guest's
// questions to the person (with none, they are declined), and the values
// of the granted secrets only, for the host functions to inject. Every
// output is masked of sec (secrets.go).
func (p *Pipeline) callContext(ctx context.Context, req Request, g capability.Grant) (context.Context, *hostfns.Secrets, error) {
	if p.cfg.Reserved != nil {
		ctx = hostfns.WithReserved(ctx, p.cfg.Reserved()...)
	}
	for _, a := range req.Approvers {
		if as, ok := a.(capability.Asker); ok {
			ctx = capability.WithAsker(ctx, as)
			break
		}
	}
	sec, err := p.secrets(g)
	if err != nil {
		return ctx, nil, err
	}
	return hostfns.WithSecrets(ctx, sec), sec, nil
}

// run invokes the approved call (a pack's tool, or a Builtin) and records
// what it wrote in the workspace as the call's artifacts, when the request
// observes them. Integrity and the approval's binding are checked by
// invoke (and builtin), on what is about to run.
func (p *Pipeline) run(ctx context.Context, req Request, tool *packs.Tool, args json.RawMessage, ap capability.Approval, g capability.Grant, o *Outcome) (out json.RawMessage, res Result, err error) {
	var done func(Writes) []capability.Artifact
	wrote := &writeLog{Recorder: p.cfg.Audit, who: req.who(), workspace: workspaceRoots(req.Workspace), w: Writes{any: tool == nil}}
	if req.Observe != nil {
		done = req.Observe()
	}
	began := time.Now()
	if tool != nil {
		res, err = p.rt.invoke(ctx, Invocation{
			Pack: req.Pack, Tool: tool, Input: args, Grant: g, Approval: ap, ID: o.Invocation,
			Integrity: req.Ref.Digest, Workspace: req.Workspace, Recorder: wrote,
		})
		out = res.Output
	} else {
		out, res.ExitCode, err = p.builtin(ctx, req, args, ap, g, o.Invocation, wrote)
	}
	o.Ran = time.Since(began)
	if done != nil {
		o.Artifacts = done(wrote.writes())
	}
	return out, res, err
}

// checkResult holds a tool's result to what its tools.json entry declares:
// content blocks (read after masking, so no block carries a granted
// secret's value in text), or a JSON result that follows output_schema. A
// result that does not is the tool's failure (ErrToolFailed).
func checkResult(pack string, tool *packs.Tool, out json.RawMessage) ([]Block, error) {
	if tool.Output == packs.OutputContent {
		blocks, err := ParseContent(out)
		var ce *ContentError
		if errors.As(err, &ce) {
			ce.Pack, ce.Tool = pack, tool.Name
		}
		return blocks, err
	}
	if err := tool.ValidateOutput(out); err != nil {
		return nil, fmt.Errorf("runtime: tool %s__%s: %w (its output_schema in tools.json): %w", pack, tool.Name, err, ErrToolFailed)
	}
	return nil, nil
}

// builtin runs an approved Builtin, after the same binding and integrity
// checks invoke makes for a pack's tool.
func (p *Pipeline) builtin(ctx context.Context, req Request, args json.RawMessage, ap capability.Approval, g capability.Grant, id string, rec capability.Recorder) (json.RawMessage, int, error) {
	if err := ap.Covers(capability.Call{Invocation: id, Pack: req.Ref.Name, Tool: req.Builtin.Name, Args: capability.ArgsDigest(args), Grant: g.Digest(), Integrity: req.Ref.Digest}); err != nil {
		return nil, 0, &stopError{msg: ErrNotApproved.Error() + ": " + err.Error(), errs: []error{ErrNotApproved, err}}
	}
	if req.Ref.Digest != "" && req.Pack != nil {
		end := stage(ctx, SpanIntegrity)
		_, err := p.rt.content.Verify(req.Pack.Name, req.Pack.Dir, req.Ref.Digest)
		if end(err); err != nil {
			return nil, 0, err
		}
	}
	end := stage(ctx, SpanInvoke)
	out, code, err := req.Builtin.Run(ctx, Granted{Invocation: id, Approval: ap, Grant: g, Recorder: rec})
	end(err)
	return out, code, err
}

// grant resolves the pack's effective grant for req; take spends "once"
// grants, for the approved call. once says whether the person's grants
// hold a once grant not revoked.
func (p *Pipeline) grant(ctx context.Context, req Request, take bool) (g capability.Grant, once bool, err error) {
	get := p.cfg.Grants.PeekGrants
	if take {
		get = p.cfg.Grants.TakeGrants
	}
	user, err := get(ctx, req.Ref, req.Chat)
	if err != nil {
		return capability.Grant{}, false, err
	}
	once = slices.ContainsFunc(user, func(u capability.UserGrant) bool { return u.Scope == capability.ScopeOnce && !u.Revoked })
	g, err = capability.Resolve(req.Ref, req.Pack.Request(), user, p.cfg.Policy, p.Env(req.Workspace))
	return g, once, err
}

// decidedAtOnce reports whether ap was given without asking anyone: by the
// policy, or by the chat's memory of "allow for this chat" (the gate
// consults both before any approver of the request, so no person was
// waited for). An approver of the request named like the policy is
// counted as a person.
func (p *Pipeline) decidedAtOnce(ap capability.Approval, req Request) bool {
	if ap.Remembered() || ap.ByAttach() {
		return true
	}
	policy := p.cfg.Policy.Approver().Name()
	return ap.Approver() == policy && !slices.ContainsFunc(req.Approvers, func(a capability.Approver) bool { return a.Name() == policy })
}

// touches lists what a granted pack may reach: "network api.example.com".
func touches(req capability.Request, g capability.Grant) []string {
	var out []string
	for _, n := range g.Names() {
		if n == capability.SecretsAccess {
			// What the grant holds, in plain words: a reveal says so.
			for _, r := range g.Resources(n) {
				out = append(out, string(n)+" "+r+": "+capability.DescribeSecret(r))
			}
			continue
		}
		for _, r := range req.Resources(n) {
			out = append(out, string(n)+" "+r)
		}
	}
	return out
}

// newInvocationID returns a fresh id for one call.
func newInvocationID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "inv_" + hex.EncodeToString(b[:])
}

// HostCall is the approved hostfns.Call of a Builtin that runs a native
// command under its grant (hostfns.Exec refuses any other).
func (g Granted) HostCall(pack *packs.Pack, tool, workspace string) *hostfns.Call {
	return &hostfns.Call{Pack: pack.Name, Tool: tool, Invocation: g.Invocation, Grant: g.Grant, Approval: g.Approval, Recorder: g.Recorder, PackRoot: pack.Dir, Workspace: workspace}
}

// jsonSyntaxWhere says where data stops being JSON, as "line L, column C:
// what", counting from 1 in bytes.
func jsonSyntaxWhere(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Sprint(err)
	}
	// Offset counts the bytes read up to and including the bad one; at
	// the end of the input the place is just past the last byte.
	idx := min(max(int(se.Offset)-1, 0), len(data))
	if strings.Contains(se.Error(), "unexpected end") {
		idx = len(data)
	}
	line := bytes.Count(data[:idx], []byte("\n")) + 1
	col := idx - (bytes.LastIndexByte(data[:idx], '\n') + 1) + 1
	return fmt.Sprintf("line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))
}
