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
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Decision says how the gate decided a call.
type Decision struct {
	Approved   bool
	Approver   string // who approved; empty when refused
	Verdict    capability.Verdict
	Remembered bool   // approved by an earlier "allow for this chat"
	ByAttach   bool   // approved by the person's attaching the pack to the chat
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
	Content string
	// Blocks are the result's content blocks when the tool returns them
	// ("output": "content"; runtime.Outcome.Content): for the front ends
	// that can show them. Content then describes them for the model.
	Blocks    []runtime.Block
	IsError   bool
	ErrorKind string // ErrKind* when IsError
	Artifacts []Artifact
	Duration  time.Duration // the whole call: checks, gate, run, audit
	Waited    time.Duration // the gate's wait for a decision: a person's time to answer
	RunTime   time.Duration // the approved call's run (runtime.Outcome.Ran)
}

// Kinds of error the model can be sent back: the pipeline's (runtime's
// table of endings names them), and the chat's own refusals.
const (
	ErrKindUnknownTool = "unknown_tool"
	ErrKindArguments   = runtime.KindArguments
	ErrKindNotFound    = "not_found"
	ErrKindPath        = runtime.KindPath
	ErrKindDenied      = runtime.KindDenied
	ErrKindTimeout     = runtime.KindTimeout
	ErrKindLimit       = runtime.KindLimit
	ErrKindToolFailed  = runtime.KindToolFailed
	ErrKindStopped     = runtime.KindStopped
	ErrKindToolsJSON   = runtime.KindToolsJSON
	ErrKindBudget      = "too_many_tools"
	ErrKindInternal    = runtime.KindInternal
)

// prepared is a call resolved to a pack's tool or a base tool, ready for
// the pipeline.
type prepared struct {
	req runtime.Request
	// writes says the call may change the workspace, so its artifacts are
	// looked for.
	writes bool
}

// Call runs one tool call: the base tools and the tools of packs whose
// tools are enabled. Everything goes through the one pipeline
// (runtime.Pipeline): the arguments are checked, the gate asks the policy,
// the chat's memory of "allow for this chat", and approver (which may be
// nil: then only the policy can approve); then the call runs, and the audit
// log records it whatever the outcome, before Call returns.
//
// A refusal or a failure of the tool is not an error: it is a ToolResult
// with IsError set, to send back to the model. Call returns an error only
// when the call could not be audited or its artifacts recorded.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage, approver capability.Approver) (ToolResult, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	res := ToolResult{Invocation: newID("inv"), Name: name, Arguments: args}
	s.mu.Lock()
	client := s.client
	s.mu.Unlock()
	var p *prepared
	err := fmt.Errorf("%w: %s: the arguments are not valid JSON", ErrBadArguments, name)
	if json.Valid(args) {
		p, err = s.prepare(name, args, approver)
	} else {
		// Keep what the model wrote, as a JSON string, for the record.
		quoted, _ := json.Marshal(string(args))
		res.Arguments = quoted
	}
	if err != nil {
		// Refused before it could be resolved: the pipeline records it
		// and runs nothing.
		p = &prepared{req: runtime.Request{Builtin: &runtime.Builtin{Name: name}, Invalid: err}}
		if pack, _, ok := strings.Cut(name, packToolSep); ok && s.attachedName(pack) {
			p.req.Ref = capability.PackRef{Name: pack}
		}
	}
	req := p.req
	req.Invocation, req.Chat, req.Client, req.Arguments, req.Workspace = res.Invocation, s.id, client, args, s.workspace
	req.Person, req.Issuer = s.owner.Subject, s.owner.Issuer
	req.Memory, req.Consent = s.memory, consent{s}
	if approver != nil {
		req.Approvers = []capability.Approver{approver}
	}
	if p.writes {
		req.Observe = func() func(runtime.Writes) []capability.Artifact {
			before := takeSnapshot(s.workspace)
			return func(w runtime.Writes) []capability.Artifact {
				res.Artifacts = artifacts(s.workspace, before, takeSnapshot(s.workspace), w.Wrote)
				out := make([]capability.Artifact, 0, len(res.Artifacts))
				for _, a := range res.Artifacts {
					out = append(out, capability.Artifact{Path: a.Path, MIME: a.MIME, Size: a.Size})
				}
				return out
			}
		}
	}
	o, err := s.deps.Pipeline.Call(ctx, req)
	res.Pack = req.Ref.Name
	res.Duration, res.Waited, res.RunTime = o.Finished.Sub(o.Started), o.Waited, o.Ran
	if ap := o.Approval; ap.Verdict() != capability.Deny {
		res.Decision = Decision{Approved: true, Approver: ap.Approver(), Verdict: ap.Verdict(), Remembered: ap.Remembered(), ByAttach: ap.ByAttach()}
	}
	if err != nil {
		return res, err
	}
	if len(res.Artifacts) > 0 {
		if err := s.db.saveArtifacts(context.WithoutCancel(ctx), s.id, res.Invocation, res.Artifacts); err != nil {
			return res, err
		}
	}
	if o.Err != nil {
		o.Err = s.inPlaceRefused(ctx, req.Ref, o.Err)
		res.IsError = true
		res.ErrorKind = errorKind(o.Err)
		res.Content = errorContent(res.ErrorKind, o.Err, o.Output)
		if !res.Decision.Approved {
			res.Decision.Reason = o.Err.Error()
		}
		return res, nil
	}
	out := []byte(o.Output)
	switch {
	case o.Content != nil:
		res.Blocks = o.Content
		out, _ = json.Marshal(map[string]any{"result": map[string]any{"content": forModel(o.Content)}})
	case req.Tool != "":
		out, _ = json.Marshal(map[string]json.RawMessage{"result": resultJSON(o.Output)})
	}
	res.Content = string(withArtifacts(out, res.Artifacts))
	return res, nil
}

// attachedName reports whether a pack of that name is attached.
func (s *Session) attachedName(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.active[name]
	return ok
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

// errorKind classifies an error for the model: the chat's own refusals,
// then how the pipeline names the call's ending (runtime.EndingOf).
func errorKind(err error) string {
	switch {
	case errors.Is(err, ErrUnknownTool):
		return ErrKindUnknownTool
	case errors.Is(err, ErrBadArguments):
		return ErrKindArguments
	case errors.Is(err, ErrToolBudget):
		return ErrKindBudget
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNotAFile):
		return ErrKindNotFound
	}
	return runtime.EndingOf(err).Kind
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

// ErrorMessage is what a failed call's Content says went wrong (its
// {"error": {"message": ...}}), or Content itself.
func (r ToolResult) ErrorMessage() string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(r.Content), &body) == nil && body.Error.Message != "" {
		return body.Error.Message
	}
	return r.Content
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
// the arguments, before anyone is asked. approver is who will decide the
// call (run_recipe asks it for missing parameters, and runs its steps
// past it).
func (s *Session) prepare(name string, args json.RawMessage, approver capability.Approver) (*prepared, error) {
	switch name {
	case ToolOpenDocs:
		return s.prepareOpenDocs(args)
	case ToolReadFile:
		return s.prepareReadFile(args)
	case ToolEnableTools:
		return s.prepareEnableTools(args)
	case ToolExec:
		return s.prepareExec(args)
	case ToolRunRecipe:
		return s.prepareRunRecipe(args, approver) // recipes.go
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
	return s.preparePackTool(a, t), nil
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

// preparePackTool resolves a call of pack a's tool t. The pipeline checks
// the arguments against its schema, resolves the grant and runs it.
func (s *Session) preparePackTool(a *attached, t *packs.Tool) *prepared {
	return &prepared{writes: true, req: runtime.Request{Pack: a.pack, Ref: a.ref, Tool: t.Name}}
}

// forModel is what the model is told of content blocks: text as it is, a
// text resource's text with its URI, and for anything else (an image, a
// sound, a binary file) what it is and that the person was shown it.
func forModel(blocks []runtime.Block) []map[string]any {
	out := make([]map[string]any, 0, len(blocks))
	for _, b := range blocks {
		m := map[string]any{"type": b.Type}
		switch {
		case b.Type == runtime.BlockText:
			m["text"] = b.Text
		case b.Type == runtime.BlockResource && b.Data == nil:
			m["uri"], m["mimeType"], m["text"] = b.URI, b.MIMEType, b.Text
		default:
			m["description"] = b.Describe() + " (shown to the person, not to you)"
		}
		out = append(out, m)
	}
	return out
}

// resultJSON is a tool's output, null when it wrote nothing.
func resultJSON(out json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(out)) == 0 || !json.Valid(out) {
		return json.RawMessage("null")
	}
	return out
}

// builtin is the request of a base tool: run by the host, under no grant
// unless granted, still through the gate and the audit.
func builtin(a *attached, name string, caps []capability.Name, touches []string, run func(context.Context, runtime.Granted) (json.RawMessage, int, error)) runtime.Request {
	return runtime.Request{Pack: a.pack, Ref: a.ref, Builtin: &runtime.Builtin{Name: name, Capabilities: caps, Touches: touches, Run: run}}
}

// readsPack is the request of a base tool that only reads the pack itself
// (open_docs, read_file, enable_tools): attaching the pack to the chat is
// the person's consent to it (capability.Consent).
func readsPack(a *attached, name string, caps []capability.Name, touches []string, run func(context.Context, runtime.Granted) (json.RawMessage, int, error)) runtime.Request {
	req := builtin(a, name, caps, touches, run)
	req.Builtin.ReadsPack = true
	return req
}
