package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
)

// installAsk installs testdata/ask-pack, whose ask tool puts its arguments
// to the person as a question, with grant, and lists its tools flat.
func (e *testEnv) installAsk(t *testing.T, grant []capability.Name) {
	t.Helper()
	if _, err := e.app.Install(context.Background(), app.InstallRequest{Source: "testdata/ask-pack", Consent: app.Granting(grant...)}); err != nil {
		t.Fatal(err)
	}
	e.srv.cfg.Attach = []string{"ask-pack"}
	e.srv.cfg.Tools = []string{"ask-pack"}
}

// answeringClient answers every elicitation with action and content and
// keeps what it was asked.
type answeringClient struct {
	action  string
	content map[string]any
	mu      sync.Mutex
	asked   []*mcp.ElicitParams
}

func (a *answeringClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.asked = append(a.asked, req.Params)
		return &mcp.ElicitResult{Action: a.action, Content: a.content}, nil
	}}
}

// TestAskThroughElicitation: a tool's question reaches an MCP client that
// can elicit, as a form with the tool's own schema, only when the person
// granted ask_person; the answer comes back to the tool, checked against
// the schema; a client that cannot elicit gets no question and the tool
// gets decline. The call itself is approved by the policy, so every form
// the client sees is the tool's question.
func TestAskThroughElicitation(t *testing.T) {
	question := map[string]any{"message": "Deploy to which region?", "schema": map[string]any{
		"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string", "enum": []string{"eu", "us"}}}, "required": []string{"region"}}}
	tests := []struct {
		name      string
		grant     []capability.Name
		client    *answeringClient // nil: a client without elicitation
		want      string           // the answer's action
		wantAsked int
	}{
		{"granted, accepted", []capability.Name{capability.AskPerson}, &answeringClient{action: "accept", content: map[string]any{"region": "eu"}}, "accept", 1},
		{"granted, declined", []capability.Name{capability.AskPerson}, &answeringClient{action: "decline"}, "decline", 1},
		{"not granted", nil, &answeringClient{action: "accept", content: map[string]any{"region": "eu"}}, "denied", 0},
		{"answer off the schema", []capability.Name{capability.AskPerson}, &answeringClient{action: "accept", content: map[string]any{"region": "mars"}}, "cancel", 1},
		{"client cannot elicit", []capability.Name{capability.AskPerson}, nil, "decline", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "[approval]\nauto_approve = [\"ask-pack__ask\"]\n")
			e.installAsk(t, tt.grant)
			var opts *mcp.ClientOptions
			if tt.client != nil {
				opts = tt.client.options()
			}
			// elicitation/create; TestRoundTripAsk covers 2026-07-28.
			cs := e.connectVersion(t, "asked", syncProtocol, opts)
			text, isErr := callText(t, cs, "ask", question) // flat mode: its own name
			if isErr {
				t.Fatalf("ask-pack__ask: %s", text)
			}
			var got struct {
				Result struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("result %q: %v", text, err)
			}
			if got.Result.Action != tt.want {
				t.Fatalf("the tool got %s, want action %q", text, tt.want)
			}
			if tt.want == "accept" && got.Result.Content["region"] != "eu" {
				t.Fatalf("the tool got %s, want region eu", text)
			}
			if tt.client == nil {
				return
			}
			if len(tt.client.asked) != tt.wantAsked {
				t.Fatalf("the client was asked %d times, want %d", len(tt.client.asked), tt.wantAsked)
			}
			if tt.wantAsked > 0 {
				p := tt.client.asked[0]
				schema, _ := json.Marshal(p.RequestedSchema)
				if !strings.Contains(p.Message, "ask-pack__ask") || !strings.Contains(p.Message, "Deploy to which region?") || !strings.Contains(string(schema), `"enum":["eu","us"]`) {
					t.Fatalf("the form said %q with schema %s, want the tool named, its question and its schema", p.Message, schema)
				}
			}
		})
	}
}
