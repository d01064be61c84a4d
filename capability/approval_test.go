package capability_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/packs-run/packs/capability"
)

// person is a scripted human approver that counts how often it was asked.
type person struct {
	verdict capability.Verdict
	err     error
	asked   atomic.Int32
}

func (p *person) Name() string { return "terminal" }

func (p *person) Approve(ctx context.Context, _ capability.Pending) (capability.Verdict, error) {
	p.asked.Add(1)
	return p.verdict, p.err
}

func call(inv, chat, pack, tool string) capability.Pending {
	return capability.Pending{Invocation: inv, Chat: chat, Pack: pack, Tool: tool}
}

func TestGateDecide(t *testing.T) {
	ctx := context.Background()
	pol := mustPolicy(t, "[approval]\nauto_approve = [\"open_docs\", \"json-tools__*\"]\nnever_approve = [\"exec_best_effort\", \"web-reader__fetch\"]\n")
	strict := mustPolicy(t, "[approval]\nauto_approve = [\"read_file\"]\nunlisted = \"deny\"\n")
	base := func(inv, tool string) capability.Pending {
		return capability.Pending{Invocation: inv, Chat: "c1", Pack: "json-tools", Tool: tool, BaseTool: true}
	}
	tests := []struct {
		name      string
		approvers func(p *person) []capability.Approver
		person    capability.Verdict
		personErr error
		pending   capability.Pending
		wantOK    bool
		wantErr   error
		approver  string
		asked     int32
	}{
		{name: "no approver", approvers: func(*person) []capability.Approver { return nil },
			pending: call("i1", "", "p", "t"), wantErr: capability.ErrNoApprover},
		{name: "nil approver is none", approvers: func(*person) []capability.Approver { return []capability.Approver{nil} },
			pending: call("i1", "", "p", "t"), wantErr: capability.ErrNoApprover},
		{name: "person says yes", approvers: func(p *person) []capability.Approver { return []capability.Approver{p} },
			person: capability.RunOnce, pending: call("i1", "", "p", "t"), wantOK: true, approver: "terminal", asked: 1},
		{name: "person says no", approvers: func(p *person) []capability.Approver { return []capability.Approver{p} },
			person: capability.Deny, pending: call("i1", "", "p", "t"), wantErr: capability.ErrRejected, asked: 1},
		{name: "person fails", approvers: func(p *person) []capability.Approver { return []capability.Approver{p} },
			person: capability.RunOnce, personErr: errors.New("tty closed"), pending: call("i1", "", "p", "t"), wantErr: capability.ErrRejected, asked: 1},
		{name: "unknown verdict", approvers: func(p *person) []capability.Approver { return []capability.Approver{p} },
			person: capability.Verdict(42), pending: call("i1", "", "p", "t"), wantErr: capability.ErrRejected, asked: 1},
		{name: "no invocation id", approvers: func(p *person) []capability.Approver { return []capability.Approver{p} },
			person: capability.RunOnce, pending: call("", "", "p", "t"), wantErr: capability.ErrDenied},
		{name: "policy approves a base tool", approvers: func(p *person) []capability.Approver { return []capability.Approver{p, pol.Approver()} },
			person: capability.Deny, pending: base("i1", "open_docs"), wantOK: true, approver: "policy policy.toml"},
		{name: "policy approves a pack's tools", approvers: func(p *person) []capability.Approver { return []capability.Approver{pol.Approver(), p} },
			person: capability.Deny, pending: call("i1", "", "json-tools", "query"), wantOK: true, approver: "policy policy.toml"},
		{name: "policy defers to the person", approvers: func(p *person) []capability.Approver { return []capability.Approver{pol.Approver(), p} },
			person: capability.RunOnce, pending: call("i1", "", "text-kit", "slug"), wantOK: true, approver: "terminal", asked: 1},
		{name: "policy vetoes before the person", approvers: func(p *person) []capability.Approver { return []capability.Approver{p, pol.Approver()} },
			person: capability.RunOnce, pending: base("i1", "exec_best_effort"), wantErr: capability.ErrRejected},
		{name: "policy vetoes a pack tool", approvers: func(p *person) []capability.Approver { return []capability.Approver{pol.Approver(), p} },
			person: capability.RunOnce, pending: call("i1", "", "web-reader", "fetch"), wantErr: capability.ErrRejected},
		{name: "policy alone defers: deny", approvers: func(*person) []capability.Approver { return []capability.Approver{pol.Approver()} },
			pending: call("i1", "", "text-kit", "slug"), wantErr: capability.ErrNoApprover},
		{name: "strict policy denies unlisted", approvers: func(p *person) []capability.Approver { return []capability.Approver{strict.Approver(), p} },
			person: capability.RunOnce, pending: call("i1", "", "text-kit", "slug"), wantErr: capability.ErrRejected},
		{name: "nil policy defers", approvers: func(p *person) []capability.Approver {
			var none *capability.Policy
			return []capability.Approver{none.Approver(), p}
		}, person: capability.RunOnce, pending: call("i1", "", "p", "t"), wantOK: true, approver: "terminal", asked: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &person{verdict: tt.person, err: tt.personErr}
			g := capability.NewGate(tt.approvers(p)...)
			a, err := g.Decide(ctx, tt.pending)
			if got := p.asked.Load(); got != tt.asked {
				t.Errorf("person asked %d times, want %d", got, tt.asked)
			}
			if !tt.wantOK {
				if !errors.Is(err, capability.ErrDenied) || !errors.Is(err, tt.wantErr) {
					t.Fatalf("Decide error = %v, want ErrDenied and %v", err, tt.wantErr)
				}
				if a.Covers(tt.pending.Call()) == nil {
					t.Fatal("a denial covers the call")
				}
				var de *capability.DeniedError
				if errors.As(err, &de) && errors.Is(err, capability.ErrRejected) && de.Approver == "" {
					t.Errorf("a rejection does not name its approver: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			other := tt.pending
			other.Invocation = "other"
			if a.Covers(tt.pending.Call()) != nil || a.Covers(other.Call()) == nil {
				t.Errorf("approval covers the wrong invocations")
			}
			if a.Approver() != tt.approver {
				t.Errorf("Approver() = %q, want %q", a.Approver(), tt.approver)
			}
			if a.Class() != tt.pending.Class() || a.At().IsZero() {
				t.Errorf("approval class %q at %v", a.Class(), a.At())
			}
		})
	}
}

func TestGateRemembersPerChat(t *testing.T) {
	ctx := context.Background()
	p := &person{verdict: capability.AllowChat}
	pol := mustPolicy(t, "[approval]\nnever_approve = [\"web-reader__fetch\"]\n")
	mem := capability.NewChatMemory()
	g := capability.NewGate(pol.Approver(), p).WithMemory(mem)

	a, err := g.Decide(ctx, call("i1", "chat-1", "text-kit", "slug"))
	if err != nil || a.Verdict() != capability.AllowChat || a.Remembered() {
		t.Fatalf("first call: %v, verdict %v, remembered %v", err, a.Verdict(), a.Remembered())
	}
	a, err = g.Decide(ctx, call("i2", "chat-1", "text-kit", "slug"))
	if err != nil || !a.Remembered() || a.Approver() != "terminal" || a.Covers(call("i2", "chat-1", "text-kit", "slug").Call()) != nil {
		t.Fatalf("same class, same chat: %v, remembered %v, approver %q", err, a.Remembered(), a.Approver())
	}
	if got := p.asked.Load(); got != 1 {
		t.Errorf("person asked %d times, want 1", got)
	}
	if _, err := g.Decide(ctx, call("i3", "chat-2", "text-kit", "slug")); err != nil || p.asked.Load() != 2 {
		t.Errorf("another chat must ask again: asked %d, %v", p.asked.Load(), err)
	}
	if _, err := g.Decide(ctx, call("i4", "chat-1", "text-kit", "diff")); err != nil || p.asked.Load() != 3 {
		t.Errorf("another class must ask again: asked %d, %v", p.asked.Load(), err)
	}
	if _, err := g.Decide(ctx, call("i5", "", "text-kit", "slug")); err != nil || p.asked.Load() != 4 {
		t.Errorf("a call outside a chat must ask: asked %d, %v", p.asked.Load(), err)
	}
	// A class allowed for the chat before the policy vetoed it stays vetoed.
	if err := mem.Remember(ctx, "chat-1", "web-reader__fetch", "terminal"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Decide(ctx, call("i6", "chat-1", "web-reader", "fetch")); !errors.Is(err, capability.ErrRejected) {
		t.Errorf("remembered class vetoed by policy: %v, want ErrRejected", err)
	}
}

// brokenMemory fails to remember; the call must still run, once.
type brokenMemory struct{}

func (brokenMemory) Allowed(context.Context, string, string) (string, bool, error) {
	return "", false, errors.New("disk full")
}
func (brokenMemory) Remember(context.Context, string, string, string) error {
	return errors.New("disk full")
}

func TestGateMemoryFailure(t *testing.T) {
	p := &person{verdict: capability.AllowChat}
	g := capability.NewGate(p).WithMemory(brokenMemory{})
	for i := range 2 {
		a, err := g.Decide(context.Background(), call(fmt.Sprint("i", i), "c", "p", "t"))
		if err != nil || a.Verdict() != capability.RunOnce {
			t.Fatalf("call %d: %v, verdict %v; want run once", i, err, a.Verdict())
		}
	}
	if p.asked.Load() != 2 {
		t.Errorf("person asked %d times, want 2", p.asked.Load())
	}
}

func TestGateConcurrent(t *testing.T) {
	p := &person{verdict: capability.AllowChat}
	g := capability.NewGate(p)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				inv := fmt.Sprintf("w%d-%d", w, i)
				a, err := g.Decide(context.Background(), call(inv, fmt.Sprint("chat", w), "p", "t"))
				if err != nil || a.Covers(call(inv, fmt.Sprint("chat", w), "p", "t").Call()) != nil {
					t.Errorf("%s: %v", inv, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := p.asked.Load(); got < 8 || got > 800 {
		t.Errorf("person asked %d times", got)
	}
}

func TestPendingClass(t *testing.T) {
	tests := []struct {
		p    capability.Pending
		want string
	}{
		{capability.Pending{Pack: "json-tools", Tool: "query"}, "json-tools__query"},
		{capability.Pending{Pack: "json-tools", Tool: "open_docs", BaseTool: true}, "open_docs"},
		{capability.Pending{Tool: "read_file"}, "read_file"},
	}
	for _, tt := range tests {
		if got := tt.p.Class(); got != tt.want {
			t.Errorf("Class() = %q, want %q", got, tt.want)
		}
	}
	for v, want := range map[capability.Verdict]string{capability.Deny: "deny", capability.RunOnce: "run_once", capability.AllowChat: "allow_chat"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q, want %q", v, v.String(), want)
		}
	}
}

// attachedIn is a Consent: the packs the person attached, per chat.
type attachedIn map[[2]string]bool

func (a attachedIn) Attached(_ context.Context, chat, pack string) (bool, error) {
	return a[[2]string{chat, pack}], nil
}

// TestGateConsentByAttach: a call that only reads a pack the person
// attached to the call's chat is approved by that act, without asking,
// and says so; everything else is asked as before.
func TestGateConsentByAttach(t *testing.T) {
	ctx := context.Background()
	consent := attachedIn{{"chat-a", "json-tools"}: true}
	veto := mustPolicy(t, "[approval]\nnever_approve = [\"open_docs\"]\n")
	reads := func(chat, pack, tool string) capability.Pending {
		return capability.Pending{Invocation: "i1", Chat: chat, Pack: pack, Tool: tool, BaseTool: true, ReadsPack: true}
	}
	tests := []struct {
		name     string
		pending  capability.Pending
		policy   *capability.Policy
		byAttach bool
		asked    int32
		wantErr  error
	}{
		{name: "granted: open_docs of an attached pack", pending: reads("chat-a", "json-tools", "open_docs"), byAttach: true},
		{name: "granted: enable_tools of an attached pack", pending: reads("chat-a", "json-tools", "enable_tools"), byAttach: true},
		{name: "denied: attached in another chat", pending: reads("chat-b", "json-tools", "open_docs"), asked: 1},
		{name: "denied: another pack", pending: reads("chat-a", "text-kit", "read_file"), asked: 1},
		{name: "denied: outside a chat", pending: reads("", "json-tools", "open_docs"), asked: 1},
		{name: "denied: a base tool that exercises a grant", pending: capability.Pending{Invocation: "i1", Chat: "chat-a", Pack: "json-tools", Tool: "exec_best_effort", BaseTool: true}, asked: 1},
		{name: "denied: the pack's own tool", pending: capability.Pending{Invocation: "i1", Chat: "chat-a", Pack: "json-tools", Tool: "query", ReadsPack: true}, asked: 1},
		{name: "denied: the policy's veto holds", pending: reads("chat-a", "json-tools", "open_docs"), policy: veto, wantErr: capability.ErrRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &person{verdict: capability.RunOnce}
			ap, err := capability.NewGate(tt.policy.Approver(), p).WithConsent(consent).Decide(ctx, tt.pending)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Decide: got %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if got := p.asked.Load(); got != tt.asked {
				t.Errorf("the person was asked %d times, want %d", got, tt.asked)
			}
			if got := ap.ByAttach(); got != tt.byAttach {
				t.Errorf("ByAttach: got %v, want %v", got, tt.byAttach)
			}
			wantApprover := "terminal"
			if tt.byAttach {
				wantApprover = capability.AttachApprover
			}
			if got := ap.Approver(); got != wantApprover {
				t.Errorf("approver: got %q, want %q", got, wantApprover)
			}
			if err := ap.Covers(tt.pending.Call()); err != nil {
				t.Errorf("the approval does not cover its call: %v", err)
			}
		})
	}
}
