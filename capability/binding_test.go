package capability_test

import (
	"context"
	"errors"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestApprovalCoversExactlyOneCall: an approval covers the call the gate
// was shown and nothing that differs from it in any bound part.
func TestApprovalCoversExactlyOneCall(t *testing.T) {
	req := capability.Request{Network: []string{"example.com"}}
	ref := capability.PackRef{Name: "p"}
	wide, err := capability.Resolve(ref, req, []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopePersistent}}, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := capability.Resolve(ref, req, nil, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if wide.Digest() == narrow.Digest() || wide.Digest() == "" {
		t.Fatalf("two different grants share the digest %q", wide.Digest())
	}
	p := capability.Pending{Invocation: "i", Pack: "p", Tool: "t", Arguments: []byte(`{"a": 1}`), Grant: wide, Integrity: "sha256:aa"}
	a, err := capability.NewGate(yesApprover{}).Decide(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Covers(p.Call()); err != nil {
		t.Fatalf("the approval does not cover its own call: %v", err)
	}
	same := p
	same.Arguments = []byte(" {\"a\":1}\n")
	if err := a.Covers(same.Call()); err != nil {
		t.Fatalf("whitespace changed the arguments' digest: %v", err)
	}
	for name, mutate := range map[string]func(*capability.Pending){
		"invocation": func(p *capability.Pending) { p.Invocation = "j" },
		"pack":       func(p *capability.Pending) { p.Pack = "q" },
		"tool":       func(p *capability.Pending) { p.Tool = "u" },
		"arguments":  func(p *capability.Pending) { p.Arguments = []byte(`{"a": 2}`) },
		"grant":      func(p *capability.Pending) { p.Grant = narrow },
		"integrity":  func(p *capability.Pending) { p.Integrity = "sha256:bb" },
	} {
		other := p
		mutate(&other)
		if err := a.Covers(other.Call()); !errors.Is(err, capability.ErrApprovalMismatch) || !errors.Is(err, capability.ErrDenied) {
			t.Errorf("another %s: Covers = %v, want ErrApprovalMismatch", name, err)
		}
	}
	if !a.Holds("i", "p", "t", wide) || a.Holds("i", "p", "t", narrow) || a.Holds("j", "p", "t", wide) {
		t.Error("Holds does not bind the invocation and the grant")
	}
	var zero capability.Approval
	if zero.Holds("", "", "", capability.Grant{}) || zero.Covers(capability.Call{}) == nil {
		t.Error("the zero Approval holds a call")
	}
}

type yesApprover struct{}

func (yesApprover) Name() string { return "yes" }
func (yesApprover) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

// TestPacksOwnVariablesNeverVisible: a grant that names them ("P*" and
// "PACKS_TOKEN") still does not reach packs' own PACKS_* variables (its
// server tokens among them); other variables it does.
func TestPacksOwnVariablesNeverVisible(t *testing.T) {
	req := capability.Request{EnvRead: []string{"P*", "PACKS_TOKEN"}}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, []capability.UserGrant{{Capability: capability.EnvRead, Scope: capability.ScopePersistent}}, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"PACKS_TOKEN", "PACKS_MCP_TOKEN", "PACKS_HOME", "PACKS_POLICY"} {
		if d := g.Env(name); d.Allowed() || !errors.Is(d.Err(), capability.ErrReserved) {
			t.Errorf("Env(%s) = %v, want a denial wrapping ErrReserved", name, d)
		}
	}
	if d := g.Env("PATH"); !d.Allowed() {
		t.Errorf("Env(PATH) = %v under a grant of P*", d)
	}
}

// TestCompiledRequestResolvesAlike: a request compiled once (as a pack's
// loader does) resolves to the same grant as the plain request.
func TestCompiledRequestResolvesAlike(t *testing.T) {
	req := capability.Request{Network: []string{"api.example.com", "*.example.org:8443"}, EnvRead: []string{"LANG", "LC_*"}, TerminalExec: capability.ExecRequest{Commands: []string{"git"}}}
	compiled, err := req.Compile()
	if err != nil {
		t.Fatal(err)
	}
	user := []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopePersistent}, {Capability: capability.EnvRead, Scope: capability.ScopeOnce}}
	ref := capability.PackRef{Name: "p"}
	a, err := capability.Resolve(ref, req, user, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := capability.Resolve(ref, compiled, user, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() || a.Digest() == "" {
		t.Fatalf("digests %s and %s", a.Digest(), b.Digest())
	}
	if _, err := (capability.Request{Network: []string{"http://x"}}).Compile(); err == nil {
		t.Fatal("a bad pattern compiled")
	}
}

// TestPacksItselfNeverRun: no grant lets a pack run packs itself, by name
// or by path (it could approve its own waiting calls with packs approve).
func TestPacksItselfNeverRun(t *testing.T) {
	req := capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"packs", "/usr/local/bin/packs", "git"}}}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, []capability.UserGrant{{Capability: capability.TerminalExec, Scope: capability.ScopePersistent}}, nil, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"packs", "/usr/local/bin/packs"} {
		if d := g.Command(prog); d.Allowed() || !errors.Is(d.Err(), capability.ErrReserved) {
			t.Errorf("Command(%s) = %v, want a denial wrapping ErrReserved", prog, d)
		}
	}
	if d := g.Command("git"); !d.Allowed() {
		t.Errorf("Command(git) = %v, want allowed", d)
	}
}
