package chat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestProfile: a chat started from an agent sends the agent's model
// settings and puts its prompt after the pack metadata, in every request,
// also after the chat is resumed; a chat without one sends the provider's.
func TestProfile(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		h := newHarness(t, install{notesPack: nil})
		srv := llmtest.NewServer(llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"}, llmtest.Turn{Text: "c"})
		defer srv.Close()
		p := provider(t, srv, llm.ProviderOpenAI, time.Minute)
		ctx := context.Background()
		prof := Profile{Agent: "agent_1", SystemPrompt: "You are the release captain.\n", Model: "agent-model-7", MaxTokens: 321}
		s := h.open(Options{Profile: prof, Attach: []string{"notes"}})
		if _, err := s.Send(ctx, p, "hello", TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		resumed := h.open(Options{ID: s.ID()})
		if got := resumed.Profile(); got != prof {
			t.Errorf("resumed profile = %+v, want %+v", got, prof)
		}
		if _, err := resumed.Send(ctx, p, "again", TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		plain := h.open(Options{})
		if _, err := plain.Send(ctx, p, "plain", TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		for i, r := range reqs[:2] {
			meta := strings.Index(r.System, "- pack_id: notes")
			own := strings.Index(r.System, "You are the release captain.")
			if r.Model != "agent-model-7" || r.MaxTokens != 321 || meta < 0 || own < meta {
				t.Errorf("request %d: model %q, max_tokens %d, prompt:\n%s", i, r.Model, r.MaxTokens, r.System)
			}
		}
		if r := reqs[2]; r.Model == "agent-model-7" || r.MaxTokens == 321 || strings.Contains(r.System, "release captain") {
			t.Errorf("a chat without an agent: model %q, max_tokens %d, prompt:\n%s", r.Model, r.MaxTokens, r.System)
		}
	})
}
