package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
)

// askingPerson approves every call and answers every question with answer.
type askingPerson struct {
	answer capability.Answer
	mu     sync.Mutex
	asked  []capability.Question
}

func (*askingPerson) Name() string { return "person" }
func (*askingPerson) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}
func (a *askingPerson) Ask(_ context.Context, q capability.Question) (capability.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answer, nil
}

// TestAskPipeline: through the real pipeline, a guest's question reaches
// the approver that can ask only when the pack asked for ask_person, the
// person granted it and the policy allows it; otherwise the guest gets
// "denied", the denial is recorded and nobody is asked. With no approver
// that can ask, the answer is decline; an answer off the schema never
// reaches the guest, and no exercise holds an answer's value.
func TestAskPipeline(t *testing.T) {
	const question = `{"message": "Deploy to which region?", "schema": {"type": "object", "properties": {"region": {"type": "string", "enum": ["eu", "us"]}}, "required": ["region"]}}`
	accept := capability.Answer{Action: "accept", Content: map[string]any{"region": "eu"}}
	asks := "[capabilities]\nask_person = true\n"
	tests := []struct {
		name      string
		toml      string
		user      userGrants
		policy    string
		answer    *capability.Answer // nil: the only approver cannot ask
		want      string             // the answer's action
		wantAsked int
	}{
		{"granted", asks, userGrants{{Capability: capability.AskPerson, Scope: capability.ScopePersistent}}, "", &accept, "accept", 1},
		{"not requested", "", userGrants{{Capability: capability.AskPerson, Scope: capability.ScopePersistent}}, "", &accept, "denied", 0},
		{"not granted", asks, nil, "", &accept, "denied", 0},
		{"revoked", asks, userGrants{{Capability: capability.AskPerson, Revoked: true}}, "", &accept, "denied", 0},
		{"policy never", asks, userGrants{{Capability: capability.AskPerson, Scope: capability.ScopePersistent}}, "[ceilings]\nnever = [\"ask_person\"]\n", &accept, "denied", 0},
		{"policy empty ceiling", asks, userGrants{{Capability: capability.AskPerson, Scope: capability.ScopePersistent}}, "[ceilings]\nask_person = []\n", &accept, "denied", 0},
		{"policy pre-approves", asks, nil, "[[preapprove]]\npack = \"asker\"\ngrants = [\"ask_person\"]\n", &accept, "accept", 1},
		{"no approver can ask", asks, userGrants{{Capability: capability.AskPerson, Scope: capability.ScopePersistent}}, "", nil, "decline", 0},
		{"answer off the schema", asks, userGrants{{Capability: capability.AskPerson, Scope: capability.ScopePersistent}}, "",
			&capability.Answer{Action: "accept", Content: map[string]any{"region": "mars"}}, "cancel", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			p := modulePack(t, "asker", tt.toml, "testdata/plugin_ask.wasm", map[string]string{"ask": "ask"})
			cfg := PipelineConfig{Grants: tt.user, Audit: h.rec}
			if tt.policy != "" {
				pol, err := capability.ParsePolicy("test-policy.toml", []byte(tt.policy))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Policy = pol
			}
			pl, err := NewPipeline(h.rt, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var approver capability.Approver = yes{}
			person := &askingPerson{}
			if tt.answer != nil {
				person.answer = *tt.answer
				approver = person
			}
			o, err := pl.Call(context.Background(), Request{Pack: p, Ref: capability.PackRef{Name: p.Name}, Tool: "ask",
				Arguments: json.RawMessage(question), Workspace: h.ws, Approvers: []capability.Approver{approver}})
			if err != nil || o.Err != nil {
				t.Fatalf("call: %v, %v", err, o.Err)
			}
			var got struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			if err := json.Unmarshal(o.Output, &got); err != nil {
				t.Fatalf("output %s: %v", o.Output, err)
			}
			if got.Action != tt.want {
				t.Fatalf("the guest got %s, want action %q", o.Output, tt.want)
			}
			if len(person.asked) != tt.wantAsked {
				t.Fatalf("the person was asked %d times, want %d", len(person.asked), tt.wantAsked)
			}
			ex := h.rec.find(o.Invocation, capability.AskPerson)
			if len(ex) == 0 || ex[0].Resource != "question: Deploy to which region?" || ex[0].Allowed != (tt.want != "denied") {
				t.Fatalf("ask_person exercises %+v, want the question recorded first, allowed=%v", ex, tt.want != "denied")
			}
			for _, e := range ex {
				if strings.Contains(e.Reason+e.Resource, "eu\"") || strings.Contains(e.Reason, "mars") {
					t.Fatalf("an exercise holds an answer's value: %+v", e)
				}
			}
		})
	}
}
