package capability

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Pending is a tool call waiting for an approver: what will run, with which
// arguments, touching what.
type Pending struct {
	Invocation   string
	Chat         string
	Pack         string
	Tool         string
	Arguments    json.RawMessage
	Capabilities []Name   // capabilities the call may exercise
	Touches      []string // resources it names: paths, hosts, commands
}

// Verdict is an approver's answer.
type Verdict int

const (
	Deny      Verdict = iota // the zero Verdict denies
	RunOnce                  // run this call
	AllowChat                // run this call and any like it in this chat
)

// Approver decides pending calls: a person at a terminal, the web UI, an MCP
// client through elicitation, or the enterprise policy.
type Approver interface {
	Name() string
	Approve(ctx context.Context, p Pending) (Verdict, error)
}

// Approval is the gate's yes to one invocation. Only Gate.Decide builds one;
// the runtime refuses to run a call without it. The zero Approval approves
// nothing.
type Approval struct {
	a *approval
}

type approval struct {
	invocation string
	approver   string
	verdict    Verdict
	at         time.Time
}

// Covers reports whether the approval is for invocation.
func (a Approval) Covers(invocation string) bool {
	return a.a != nil && a.a.invocation == invocation && a.a.verdict != Deny
}

// Approver names who approved.
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

// ErrNoApprover is returned when no approver is available: the answer is deny.
var ErrNoApprover = errors.New("capability: no approver available")

// Gate turns every pending call into a decision. With no approver the
// answer is deny.
type Gate struct {
	approver Approver
}

// NewGate returns a gate that asks approver. approver may be nil.
func NewGate(approver Approver) *Gate { return &Gate{approver: approver} }

// Decide asks the approver about p. It returns an Approval that covers
// p.Invocation, or an error wrapping ErrDenied.
func (g *Gate) Decide(ctx context.Context, p Pending) (Approval, error) {
	if g == nil || g.approver == nil {
		return Approval{}, &DeniedError{Layer: LayerGate, Reason: ErrNoApprover.Error() + "; pass --yes or approve in the UI"}
	}
	v, err := g.approver.Approve(ctx, p)
	if err != nil {
		return Approval{}, &DeniedError{Layer: LayerGate, Reason: "approver " + g.approver.Name() + " failed: " + err.Error()}
	}
	if v == Deny {
		return Approval{}, &DeniedError{Layer: LayerGate, Reason: "denied by " + g.approver.Name()}
	}
	return Approval{a: &approval{invocation: p.Invocation, approver: g.approver.Name(), verdict: v, at: time.Now().UTC()}}, nil
}
