package runtime

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
)

// grantBook is a GrantSource over grants a test changes between calls,
// with the store's semantics: TakeGrants spends the once grants.
type grantBook struct {
	mu   sync.Mutex
	user []capability.UserGrant
}

func (b *grantBook) PeekGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.user), nil
}

func (b *grantBook) TakeGrants(context.Context, capability.PackRef, string) ([]capability.UserGrant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Clone(b.user)
	b.user = slices.DeleteFunc(b.user, func(u capability.UserGrant) bool { return u.Scope == capability.ScopeOnce && !u.Revoked })
	return out, nil
}

func (b *grantBook) set(user ...capability.UserGrant) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.user = user
}

// changer is a person who, while asked, changes the grants (revokes them,
// say) and then approves.
type changer struct {
	book *grantBook
	to   []capability.UserGrant
}

func (changer) Name() string { return "person" }
func (c changer) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	c.book.set(c.to...)
	return capability.RunOnce, nil
}

// alwaysAllowed is a chat's memory in which every class was allowed.
type alwaysAllowed struct{}

func (alwaysAllowed) Allowed(context.Context, string, string) (string, bool, error) {
	return "person", true, nil
}
func (alwaysAllowed) Remember(context.Context, string, string, string) error { return nil }

// TestGrantReadAtEveryCall: whoever approves, each call runs under the
// grants as they are when it is decided: a grant revoked after one call
// is gone for the very next, a once grant serves one call, and a grant the
// person changes while they are asked refuses the call they approve.
func TestGrantReadAtEveryCall(t *testing.T) {
	wasm := needGoPlugin(t)
	t.Setenv("PROBE_TEST_VISIBLE", "seen")
	h := newHarness(t, Config{})
	p := modulePack(t, "env", "[capabilities]\nenv_read = [\"PROBE_TEST_VISIBLE\"]\n", wasm, map[string]string{"getenv": "getenv"})
	pol, err := capability.ParsePolicy("policy.toml", []byte("[approval]\nauto_approve = [\"env__getenv\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	persistent := capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopePersistent}
	revoked := capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopePersistent, Revoked: true}
	once := capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopeOnce}
	const (
		seen   = `{"set":true,"value":"seen"}`
		unseen = `{"set":false,"value":""}`
	)
	// A call is made with the grants set to before (nil: as the last call
	// left them); who approves it: "policy", "memory" or a person who
	// changes the grants to during.
	type call struct {
		before, during []capability.UserGrant
		by             string
		want           string // the tool's output; "" for a refused call
	}
	cases := []struct {
		name  string
		calls []call
	}{
		{"policy: revoked before the next call", []call{
			{before: []capability.UserGrant{persistent}, by: "policy", want: seen},
			{before: []capability.UserGrant{revoked}, by: "policy", want: unseen},
			{before: []capability.UserGrant{persistent}, by: "policy", want: seen},
		}},
		{"memory: revoked before the next call", []call{
			{before: []capability.UserGrant{persistent}, by: "memory", want: seen},
			{before: []capability.UserGrant{revoked}, by: "memory", want: unseen},
		}},
		{"policy: a once grant serves one call", []call{
			{before: []capability.UserGrant{once}, by: "policy", want: seen},
			{by: "policy", want: unseen},
		}},
		{"memory: a once grant serves one call", []call{
			{before: []capability.UserGrant{once}, by: "memory", want: seen},
			{by: "memory", want: unseen},
		}},
		{"person: grant unchanged while asked", []call{
			{before: []capability.UserGrant{persistent}, during: []capability.UserGrant{persistent}, by: "person", want: seen},
		}},
		{"person: revoked while asked", []call{
			{before: []capability.UserGrant{persistent}, during: []capability.UserGrant{revoked}, by: "person", want: ""},
			{by: "person", during: []capability.UserGrant{revoked}, want: unseen},
		}},
		{"person: granted while asked", []call{
			{before: nil, during: []capability.UserGrant{persistent}, by: "person", want: ""},
			{by: "person", during: []capability.UserGrant{persistent}, want: seen},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			book := &grantBook{}
			for i, cl := range c.calls {
				if cl.before != nil {
					book.set(cl.before...)
				}
				cfg := PipelineConfig{Grants: book, Audit: h.rec, Getenv: os.Getenv}
				req := Request{Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "getenv", Arguments: json.RawMessage(`{"name":"PROBE_TEST_VISIBLE"}`), Workspace: h.ws}
				switch cl.by {
				case "policy":
					cfg.Policy = pol
				case "memory":
					req.Chat, req.Memory = "chat-1", alwaysAllowed{}
				case "person":
					req.Approvers = []capability.Approver{changer{book: book, to: cl.during}}
				}
				pl, err := NewPipeline(h.rt, cfg)
				if err != nil {
					t.Fatal(err)
				}
				o, err := pl.Call(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case cl.want == "" && o.Err == nil:
					t.Errorf("call %d ran (%s), want it refused", i+1, o.Output)
				case cl.want != "" && (o.Err != nil || string(o.Output) != cl.want):
					t.Errorf("call %d: got %s (%v), want %s", i+1, o.Output, o.Err, cl.want)
				}
			}
		})
	}
}
