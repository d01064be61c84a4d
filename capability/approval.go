package capability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Pending is a tool call waiting for an approver: what will run, with which
// arguments, touching what.
type Pending struct {
	Invocation string
	Chat       string // empty outside a chat (packs run)
	Pack       string
	Tool       string
	BaseTool   bool // a runtime tool (open_docs, read_file, ...) rather than a pack's own
	// ReadsPack says the call only reads the pack itself (its docs, its
	// own files, its list of tools) and exercises no grant: the calls that
	// attaching the pack to the chat consents to (see Consent).
	ReadsPack    bool
	Arguments    json.RawMessage
	Capabilities []Name   // capabilities the call may exercise
	Touches      []string // resources it names: paths, hosts, commands
	// RiskLevel is what the call declares it can break (a recipe step's
	// risk_level); empty when it declares nothing. The policy's
	// never_auto_approve_risk reads it.
	RiskLevel RiskLevel
	// Grant is the grant the call will run with; the approval binds it.
	// Zero for a base tool that runs under no pack grant.
	Grant Grant
	// Integrity is the pack's content digest from packs.lock; the approval
	// binds it. Empty for a pack run from a folder.
	Integrity string
}

// Call is exactly one tool call, as an approval binds it: the invocation,
// the pack and tool, the digest of the validated arguments (ArgsDigest),
// the digest of the grant it runs with (Grant.Digest) and the pack's
// integrity digest. Change any of them and it is another call.
type Call struct {
	Invocation string
	Pack, Tool string
	Args       string
	Grant      string
	Integrity  string
}

// Call returns the call p describes, as Gate.Decide binds it.
func (p Pending) Call() Call {
	return Call{Invocation: p.Invocation, Pack: p.Pack, Tool: p.Tool, Args: ArgsDigest(p.Arguments), Grant: p.Grant.Digest(), Integrity: p.Integrity}
}

// ArgsDigest is the digest an approval binds a call's arguments by: SHA-256
// of the compacted JSON (insignificant whitespace removed; empty is {}).
// Arguments that are not valid JSON are digested as they are.
func ArgsDigest(args json.RawMessage) string {
	var buf bytes.Buffer
	trimmed := bytes.TrimSpace(args)
	switch {
	case len(trimmed) == 0:
		buf.WriteString("{}")
	case json.Compact(&buf, trimmed) != nil:
		buf.Reset()
		buf.Write(args)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Class names the kind of call, for policy rules and for "allow for this
// chat": a base tool by its name ("read_file"), a pack tool as the model sees
// it ("json-tools__query").
func (p Pending) Class() string {
	if p.BaseTool || p.Pack == "" {
		return p.Tool
	}
	return p.Pack + "__" + p.Tool
}

// Verdict is an approver's answer.
type Verdict int

const (
	Deny      Verdict = iota // the zero Verdict denies
	RunOnce                  // run this call
	AllowChat                // run this call and any of its class in this chat
)

func (v Verdict) String() string {
	switch v {
	case RunOnce:
		return "run_once"
	case AllowChat:
		return "allow_chat"
	}
	return "deny"
}

// Approver decides pending calls: a person at a terminal, the web UI, an MCP
// client through elicitation, or the enterprise policy. An approver with no
// opinion on a call returns ErrDefer so the gate asks the next one.
type Approver interface {
	Name() string
	Approve(ctx context.Context, p Pending) (Verdict, error)
}

// ErrDefer is returned by an approver that leaves the call to the next one.
var ErrDefer = errors.New("capability: approver defers")

// automatic marks the approvers of this package that decide without a
// person (the policy). The gate asks them before a chat's remembered
// approvals, so a policy veto always holds.
type automatic interface{ automatic() }

// Approval is the gate's yes to one invocation. Only Gate.Decide builds one;
// the runtime refuses to run a call without it. The zero Approval approves
// nothing.
type Approval struct {
	a *approval
}

type approval struct {
	call       Call
	class      string
	approver   string
	verdict    Verdict
	remembered bool
	byAttach   bool
	at         time.Time
}

// Covers returns nil when the approval is for exactly call, and otherwise a
// denial wrapping ErrApprovalMismatch that names the first part that
// differs. The zero Approval covers nothing.
func (a Approval) Covers(call Call) error {
	if a.a == nil || a.a.verdict == Deny {
		return mismatch("the call has no approval")
	}
	want := a.a.call
	for _, f := range [...]struct{ what, got, want string }{
		{"invocation", call.Invocation, want.Invocation},
		{"pack", call.Pack, want.Pack},
		{"tool", call.Tool, want.Tool},
		{"arguments", call.Args, want.Args},
		{"grant", call.Grant, want.Grant},
		{"pack content", call.Integrity, want.Integrity},
	} {
		if subtle.ConstantTimeCompare([]byte(f.got), []byte(f.want)) != 1 {
			return mismatch("the approval was given for another " + f.what)
		}
	}
	return nil
}

// Holds reports whether the approval is for this invocation of pack's tool
// under grant g: the part of Covers that a host function can check, since
// the arguments and the pack's content were checked before the guest ran.
func (a Approval) Holds(invocation, pack, tool string, g Grant) bool {
	if a.a == nil || a.a.verdict == Deny {
		return false
	}
	c := a.a.call
	return c.Invocation == invocation && c.Pack == pack && c.Tool == tool && c.Grant == g.Digest()
}

func mismatch(reason string) error {
	return &DeniedError{Layer: LayerGate, Cause: ErrApprovalMismatch, Reason: reason}
}

// Invocation is the invocation id the approval is for.
func (a Approval) Invocation() string {
	if a.a == nil {
		return ""
	}
	return a.a.call.Invocation
}

// Approver names who approved. For a call approved by a chat's memory, it is
// the approver who allowed the class for the chat.
func (a Approval) Approver() string {
	if a.a == nil {
		return ""
	}
	return a.a.approver
}

// Verdict is the approver's answer.
func (a Approval) Verdict() Verdict {
	if a.a == nil {
		return Deny
	}
	return a.a.verdict
}

// Remembered reports whether the call was approved without asking because
// its class was allowed earlier in the same chat.
func (a Approval) Remembered() bool { return a.a != nil && a.a.remembered }

// ByAttach reports whether the call was approved by the person's attaching
// its pack to the chat (see Consent), without asking. Its approver is
// AttachApprover.
func (a Approval) ByAttach() bool { return a.a != nil && a.a.byAttach }

// Class is the class of the approved call.
func (a Approval) Class() string {
	if a.a == nil {
		return ""
	}
	return a.a.class
}

// At is when the gate decided.
func (a Approval) At() time.Time {
	if a.a == nil {
		return time.Time{}
	}
	return a.a.at
}

// ErrNoApprover is returned when no approver is available: the answer is deny.
var ErrNoApprover = errors.New("capability: no approver available")

// ChatMemory remembers, per chat, the call classes a person allowed "for
// this chat". Implementations must be safe for concurrent use.
type ChatMemory interface {
	// Allowed reports whether class was allowed in chat, and by whom.
	Allowed(ctx context.Context, chat, class string) (approver string, ok bool, err error)
	// Remember records that approver allowed class for the rest of chat.
	Remember(ctx context.Context, chat, class, approver string) error
}

// NewChatMemory returns a ChatMemory that lives as long as the process.
func NewChatMemory() ChatMemory { return &memory{m: map[[2]string]string{}} }

type memory struct {
	mu sync.Mutex
	m  map[[2]string]string
}

func (m *memory) Allowed(_ context.Context, chat, class string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	who, ok := m.m[[2]string{chat, class}]
	return who, ok, nil
}

func (m *memory) Remember(_ context.Context, chat, class, approver string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[[2]string{chat, class}] = approver
	return nil
}

// AttachApprover is the approver an approval by attach names (see
// Consent), in the audit log and on the call's card.
const AttachApprover = "attach"

// Consent says which packs the person attached to a chat themselves: in the
// web app's Attach, packs chat --attach, or an agent's capability list.
// That act is the person's approval, given in advance, per pack and per
// chat, of the calls that only read the pack (Pending.ReadsPack): its docs,
// its own files and its list of tools. A pack attached by anyone else (the
// policy's mandate, an MCP server's configuration) is not consented to.
// Implementations must be safe for concurrent use.
type Consent interface {
	// Attached reports whether the person attached pack to chat.
	Attached(ctx context.Context, chat, pack string) (bool, error)
}

// Gate turns every pending call into a decision. It asks, in order: the
// automatic approvers (the policy), the chat's consent by attach (for a
// call that only reads an attached pack), the chat's memory of "allow for
// this chat", then every other approver in the order given. The first that
// does not defer decides. With no approver, or when all defer, the answer
// is deny.
type Gate struct {
	approvers []Approver
	memory    ChatMemory
	consent   Consent
}

// NewGate returns a gate that asks approvers; nil entries are skipped. It
// remembers "allow for this chat" in memory until WithMemory replaces it.
func NewGate(approvers ...Approver) *Gate {
	g := &Gate{memory: NewChatMemory()}
	for _, a := range approvers {
		if a != nil {
			g.approvers = append(g.approvers, a)
		}
	}
	return g
}

// WithMemory returns a copy of the gate that remembers chat approvals in m
// (for example in SQLite, so they survive a resumed chat).
func (g *Gate) WithMemory(m ChatMemory) *Gate {
	c := *g
	c.approvers = append([]Approver(nil), g.approvers...)
	c.memory = m
	return &c
}

// WithConsent returns a copy of the gate that approves, without asking, a
// call that only reads a pack the person attached to the call's chat, as
// c tells it. The policy is asked first, so its veto still holds.
func (g *Gate) WithConsent(c Consent) *Gate {
	n := *g
	n.approvers = append([]Approver(nil), g.approvers...)
	n.consent = c
	return &n
}

// Decide asks the approvers about p. It returns an Approval that covers
// p.Invocation, or an error wrapping ErrDenied (and ErrRejected when an
// approver said no, ErrNoApprover when nobody could answer).
func (g *Gate) Decide(ctx context.Context, p Pending) (Approval, error) {
	if p.Invocation == "" {
		return Approval{}, &DeniedError{Layer: LayerGate, Reason: "the call has no invocation id"}
	}
	if g == nil || len(g.approvers) == 0 {
		return Approval{}, &DeniedError{Layer: LayerGate, Cause: ErrNoApprover, Reason: ErrNoApprover.Error()}
	}
	class := p.Class()
	for _, a := range g.approvers {
		if _, ok := a.(automatic); !ok {
			continue
		}
		if ap, decided, err := g.ask(ctx, a, p, class); decided {
			return ap, err
		}
	}
	if g.attached(ctx, p) {
		ap := g.approve(p, class, AttachApprover, RunOnce, false)
		ap.a.byAttach = true
		return ap, nil
	}
	if p.Chat != "" && g.memory != nil {
		who, ok, err := g.memory.Allowed(ctx, p.Chat, class)
		if err == nil && ok {
			return g.approve(p, class, who, AllowChat, true), nil
		}
	}
	for _, a := range g.approvers {
		if _, ok := a.(automatic); ok {
			continue
		}
		if ap, decided, err := g.ask(ctx, a, p, class); decided {
			return ap, err
		}
	}
	return Approval{}, &DeniedError{Layer: LayerGate, Cause: ErrNoApprover, Reason: "every approver deferred the call " + class}
}

// attached reports whether p is approved by the person's attaching its
// pack to its chat: a base tool that only reads the pack, under no grant,
// in a chat whose consent says the person attached the pack. Anything
// else, or a consent that cannot answer, is asked as usual.
func (g *Gate) attached(ctx context.Context, p Pending) bool {
	if g.consent == nil || !p.BaseTool || !p.ReadsPack || p.Chat == "" || p.Pack == "" || p.Grant.Digest() != "" {
		return false
	}
	ok, err := g.consent.Attached(ctx, p.Chat, p.Pack)
	return err == nil && ok
}

// ask puts p to one approver; decided is false when it deferred.
func (g *Gate) ask(ctx context.Context, a Approver, p Pending, class string) (Approval, bool, error) {
	v, err := a.Approve(ctx, p)
	switch {
	case errors.Is(err, ErrDefer):
		return Approval{}, false, nil
	case err != nil:
		return Approval{}, true, &DeniedError{Layer: LayerGate, Cause: ErrRejected, Approver: a.Name(), Reason: "approver " + a.Name() + " failed: " + err.Error()}
	case v == Deny:
		return Approval{}, true, &DeniedError{Layer: LayerGate, Cause: ErrRejected, Approver: a.Name(), Reason: "denied by " + a.Name()}
	case v != RunOnce && v != AllowChat:
		return Approval{}, true, &DeniedError{Layer: LayerGate, Cause: ErrRejected, Approver: a.Name(), Reason: "approver " + a.Name() + " gave an unknown verdict"}
	}
	if v == AllowChat && p.Chat != "" && g.memory != nil {
		if err := g.memory.Remember(ctx, p.Chat, class, a.Name()); err != nil {
			// The call itself was approved; only the memory failed, so this
			// call runs once and the next one asks again.
			v = RunOnce
		}
	}
	return g.approve(p, class, a.Name(), v, false), true, nil
}

func (g *Gate) approve(p Pending, class, who string, v Verdict, remembered bool) Approval {
	return Approval{a: &approval{call: p.Call(), class: class, approver: who, verdict: v, remembered: remembered, at: time.Now().UTC()}}
}
