package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Decision says how the gate decided a call.
type Decision struct {
	Approved   bool
	Approver   string // who approved; empty when refused
	Verdict    capability.Verdict
	Remembered bool   // approved by an earlier "allow for this chat"
	Reason     string // why it was refused
}

// ToolResult is the outcome of one call, as the model and the person see it.
type ToolResult struct {
	Invocation string
	Name       string // as the model called it
	Pack       string
	Arguments  json.RawMessage
	Decision   Decision
	// Content is the JSON sent back to the model: the tool's result, or
	// {"error": {"kind": ..., "message": ...}}.
	Content   string
	IsError   bool
	ErrorKind string // ErrKind* when IsError
	Artifacts []Artifact
	Duration  time.Duration
}

// Kinds of error the model can be sent back.
const (
	ErrKindUnknownTool = "unknown_tool"
	ErrKindArguments   = "invalid_arguments"
	ErrKindNotFound    = "not_found"
	ErrKindPath        = "path_denied"
	ErrKindDenied      = "denied"
	ErrKindTimeout     = "timeout"
	ErrKindLimit       = "limit"
	ErrKindToolFailed  = "tool_failed"
	ErrKindStopped     = "stopped"
	ErrKindToolsJSON   = "invalid_tools_json"
	ErrKindBudget      = "too_many_tools"
	ErrKindInternal    = "error"
)

// prepared is a call that passed its checks and waits for the gate.
type prepared struct {
	pending capability.Pending
	// writes says the call may change the workspace, so its artifacts are
	// looked for.
	writes bool
	// run performs the call once the gate approved it. It returns the JSON
	// result for the model and, for tools that have one, the exit status.
	run func(ctx context.Context, ap capability.Approval) (out []byte, exit int, err error)
}

// Call runs one tool call: the base tools and the tools of packs whose
// tools are enabled. The arguments are checked first; then the gate asks the
// policy, the chat's memory of "allow for this chat", and approver (which
// may be nil: then only the policy can approve); then the call runs, and the
// audit log records it whatever the outcome, before Call returns.
//
// A refusal or a failure of the tool is not an error: it is a ToolResult
// with IsError set, to send back to the model. Call returns an error only
// when the call could not be audited or its artifacts recorded.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage, approver capability.Approver) (ToolResult, error) {
	start := time.Now()
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	res := ToolResult{Invocation: newID("inv"), Name: name, Arguments: args}
	s.mu.Lock()
	client := s.client
	s.mu.Unlock()
	rec := audit.Invocation{ID: res.Invocation, Chat: s.id, Client: client, Tool: name, Arguments: args, Started: start}
	var p *prepared
	err := fmt.Errorf("%w: %s: the arguments are not valid JSON", ErrBadArguments, name)
	if !json.Valid(args) {
		// Keep what the model wrote, as a JSON string, for the record.
		quoted, _ := json.Marshal(string(args))
		res.Arguments, rec.Arguments = quoted, quoted
	} else {
		p, err = s.prepare(ctx, res.Invocation, name, args)
	}
	if err != nil {
		return s.finish(ctx, res, rec, nil, err)
	}
	res.Pack, rec.Pack, rec.Tool = p.pending.Pack, p.pending.Pack, p.pending.Tool
	gate := capability.NewGate(s.deps.Policy.Approver(), approver).WithMemory(s.memory)
	ap, err := gate.Decide(ctx, p.pending)
	if err != nil {
		return s.finish(ctx, res, rec, nil, err)
	}
	res.Decision = Decision{Approved: true, Approver: ap.Approver(), Verdict: ap.Verdict(), Remembered: ap.Remembered()}
	rec.Approved(ap)
	var before snapshot
	if p.writes {
		before = takeSnapshot(s.workspace)
	}
	out, exit, err := p.run(ctx, ap)
	rec.ExitCode = exit
	if p.writes {
		res.Artifacts = artifacts(s.workspace, before, takeSnapshot(s.workspace))
		for _, a := range res.Artifacts {
			rec.Artifacts = append(rec.Artifacts, audit.Artifact{Path: a.Path, MIME: a.MIME, Size: a.Size})
		}
		if err := s.db.saveArtifacts(context.WithoutCancel(ctx), s.id, res.Invocation, res.Artifacts); err != nil {
			return res, err
		}
	}
	if err == nil {
		res.Content = string(withArtifacts(out, res.Artifacts))
	}
	return s.finish(ctx, res, rec, out, err)
}

// withArtifacts adds the artifacts to a JSON object result, so the model
// learns which files the call made (spec 000 §8.3).
func withArtifacts(out []byte, arts []Artifact) []byte {
	if len(arts) == 0 {
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(out, &obj) != nil || obj == nil {
		return out
	}
	b, err := json.Marshal(arts)
	if err != nil {
		return out
	}
	obj["artifacts"] = b
	if merged, err := json.Marshal(obj); err == nil {
		return merged
	}
	return out
}

// finish fills in the result, writes the audit record and returns.
func (s *Session) finish(ctx context.Context, res ToolResult, rec audit.Invocation, out []byte, err error) (ToolResult, error) {
	rec.Finished = time.Now()
	res.Duration = rec.Finished.Sub(rec.Started)
	if err != nil {
		res.IsError = true
		res.ErrorKind = errorKind(err)
		res.Content = errorContent(res.ErrorKind, err, out)
		if !res.Decision.Approved {
			res.Decision.Reason = err.Error()
		}
		rec.Status, rec.Reason = auditStatus(res.ErrorKind), err.Error()
		if rec.Status == audit.StatusDenied {
			rec.Denied(err)
		}
	}
	rec.Output = []byte(res.Content)
	// The record is written even when ctx was cancelled: a stopped call is
	// still a call.
	if _, aerr := s.deps.Audit.RecordInvocation(context.WithoutCancel(ctx), rec); aerr != nil {
		return res, fmt.Errorf("chat: audit of %s: %w", res.Invocation, aerr)
	}
	return res, nil
}

// auditStatus maps an error kind to how the audit log says a call ended.
func auditStatus(kind string) audit.Status {
	switch kind {
	case ErrKindDenied, ErrKindPath:
		return audit.StatusDenied
	case ErrKindArguments, ErrKindUnknownTool:
		return audit.StatusInvalidInput
	case ErrKindTimeout, ErrKindLimit, ErrKindBudget:
		return audit.StatusLimit
	case ErrKindToolFailed, ErrKindNotFound, ErrKindToolsJSON:
		return audit.StatusToolError
	}
	return audit.StatusError
}

// errorKind classifies an error for the model.
func errorKind(err error) string {
	switch {
	case errors.Is(err, ErrUnknownTool):
		return ErrKindUnknownTool
	case errors.Is(err, ErrBadArguments), errors.Is(err, packs.ErrInvalidInput):
		return ErrKindArguments
	case errors.Is(err, packs.ErrPathEscape):
		return ErrKindPath
	case errors.Is(err, ErrToolBudget):
		return ErrKindBudget
	case errors.Is(err, packs.ErrInvalidPack):
		return ErrKindToolsJSON
	case errors.Is(err, capability.ErrDenied), errors.Is(err, packs.ErrModified):
		return ErrKindDenied
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNotAFile):
		return ErrKindNotFound
	case errors.Is(err, runtime.ErrTimeout), errors.Is(err, hostfns.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ErrKindTimeout
	case errors.Is(err, context.Canceled):
		return ErrKindStopped
	case errors.Is(err, runtime.ErrMemoryLimit), errors.Is(err, runtime.ErrOutputLimit), errors.Is(err, runtime.ErrInputLimit):
		return ErrKindLimit
	case errors.Is(err, runtime.ErrToolFailed), errors.Is(err, runtime.ErrTrap):
		return ErrKindToolFailed
	}
	return ErrKindInternal
}

// hints tell the model what it can do about each kind of error.
var hints = map[string]string{
	ErrKindUnknownTool: "call only the tools offered; a pack's tools are offered after enable_tools",
	ErrKindArguments:   "fix the arguments to fit the tool's input schema and call again",
	ErrKindNotFound:    "check the pack_id against the attached packs and the path against the pack's docs",
	ErrKindPath:        "use a path relative to the pack root, without '..'",
	ErrKindDenied:      "the call was refused; do not repeat it unchanged: ask the person, or do without it",
	ErrKindTimeout:     "the call ran out of time; try smaller input, or tell the person",
	ErrKindLimit:       "the call went past a limit; try smaller input, or tell the person",
	ErrKindToolFailed:  "the tool reported a failure; read the message, fix the input or tell the person",
	ErrKindStopped:     "the person stopped this call; ask before trying it again",
	ErrKindToolsJSON:   "this pack's tools.json is invalid: follow its docs without its tools, or use exec_best_effort where they say to run a command",
	ErrKindBudget:      "tell the person which packs to detach, or work with the tools already enabled",
}

// errorContent is the JSON the model gets for a failed call. out, when the
// tool produced any, is included so the model sees partial output.
func errorContent(kind string, err error, out []byte) string {
	e := map[string]any{"kind": kind, "message": err.Error()}
	if h, ok := hints[kind]; ok {
		e["hint"] = h
	}
	var te *runtime.ToolError
	if errors.As(err, &te) {
		e["exit_code"] = te.ExitCode
		if len(te.Stderr) > 0 {
			e["stderr"] = tail(string(te.Stderr), 2000)
		}
	}
	var le *packs.LoadError
	if errors.As(err, &le) {
		var fs []string
		for _, f := range le.Findings {
			if f.Severity == packs.SeverityError {
				fs = append(fs, f.String())
			}
		}
		e["findings"] = fs
	}
	body := map[string]any{"error": e}
	if len(bytes.TrimSpace(out)) > 0 && json.Valid(out) {
		body["output"] = json.RawMessage(out)
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// tail keeps the last n bytes of s, on a character boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return "…" + s[i:]
		}
	}
	return "…" + s
}

// prepare resolves name to a base tool or an enabled pack tool and checks
// the arguments, before anyone is asked.
func (s *Session) prepare(ctx context.Context, inv, name string, args json.RawMessage) (*prepared, error) {
	switch name {
	case ToolOpenDocs:
		return s.prepareOpenDocs(inv, args)
	case ToolReadFile:
		return s.prepareReadFile(inv, args)
	case ToolEnableTools:
		return s.prepareEnableTools(inv, args)
	case ToolExec:
		return s.prepareExec(ctx, inv, args)
	}
	pack, tool, ok := strings.Cut(name, packToolSep)
	if !ok {
		return nil, fmt.Errorf("%w: %q: the tools are %s", ErrUnknownTool, name, s.toolNames())
	}
	s.mu.Lock()
	a, attachedOK := s.active[pack]
	s.mu.Unlock()
	if !attachedOK || !a.enabled {
		return nil, fmt.Errorf("%w: %q: its pack %s is not attached or its tools are not enabled: call enable_tools first", ErrUnknownTool, name, pack)
	}
	t, ok := a.pack.Tool(tool)
	if !ok {
		return nil, fmt.Errorf("%w: %q: pack %s has no tool %s", ErrUnknownTool, name, pack, tool)
	}
	return s.preparePackTool(ctx, inv, a, t, args)
}

func (s *Session) toolNames() string {
	var names []string
	for _, t := range s.Tools() {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return "none (no pack is attached)"
	}
	return strings.Join(names, ", ")
}

// preparePackTool checks a pack tool's arguments against its schema and
// resolves the pack's grant for the call.
func (s *Session) preparePackTool(ctx context.Context, inv string, a *attached, t *packs.Tool, args json.RawMessage) (*prepared, error) {
	if err := t.ValidateInput(args); err != nil {
		return nil, err
	}
	preview, err := s.grant(ctx, a, false)
	if err != nil {
		return nil, err
	}
	p := &prepared{
		writes:  true,
		pending: s.pending(inv, a.pack.Name, t.Name, false, args, preview.Names(), touches(a.pack.Request(), preview)),
	}
	p.run = func(ctx context.Context, ap capability.Approval) ([]byte, int, error) {
		if s.deps.Runner == nil {
			return nil, 0, errors.New("chat: no runtime to run pack tools")
		}
		g, err := s.grant(ctx, a, true)
		if err != nil {
			return nil, 0, err
		}
		r, err := s.deps.Runner.Invoke(ctx, runtime.Invocation{
			Pack: a.pack, Tool: t, Input: args, Grant: g, Approval: ap, ID: inv,
			Workspace: s.workspace, Recorder: s.deps.Audit,
		})
		if err != nil {
			return r.Output, r.ExitCode, err
		}
		out, _ := json.Marshal(map[string]json.RawMessage{"result": resultJSON(r.Output)})
		return out, r.ExitCode, nil
	}
	return p, nil
}

// resultJSON is a tool's output, null when it wrote nothing.
func resultJSON(out json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(out)) == 0 || !json.Valid(out) {
		return json.RawMessage("null")
	}
	return out
}

// grant resolves the pack's effective grant for a call in this chat. take
// spends "once" grants: it is for the call the gate approved; without it the
// grant is a preview for the approval card.
func (s *Session) grant(ctx context.Context, a *attached, take bool) (capability.Grant, error) {
	get := s.deps.Grants.PeekGrants
	if take {
		get = s.deps.Grants.TakeGrants
	}
	ug, err := get(ctx, a.ref, s.id)
	if err != nil {
		return capability.Grant{}, err
	}
	return capability.Resolve(a.ref, a.pack.Request(), ug, s.deps.Policy, capability.Env{Home: s.deps.Home, Getenv: s.deps.Getenv, Workspace: s.workspace})
}

// touches lists what a granted pack may reach: "network api.example.com".
func touches(req capability.Request, g capability.Grant) []string {
	var out []string
	for _, n := range g.Names() {
		for _, r := range req.Resources(n) {
			out = append(out, string(n)+" "+r)
		}
	}
	return out
}

func (s *Session) pending(inv, pack, tool string, base bool, args json.RawMessage, caps []capability.Name, touch []string) capability.Pending {
	return capability.Pending{
		Invocation: inv, Chat: s.id, Pack: pack, Tool: tool, BaseTool: base,
		Arguments: args, Capabilities: caps, Touches: touch,
	}
}
