package llmtest

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/packs-run/packs/internal/llm"
)

// Script is an llm.Provider that answers in process, with no I/O, cycling
// through its turns. Benchmarks use it to measure the orchestrator without
// the model; tests that assert the wire use Server instead.
type Script struct {
	mu    sync.Mutex
	turns []Turn
	n     int
	last  llm.Request
}

// NewScript returns a provider that answers with turns, starting over after
// the last one.
func NewScript(turns ...Turn) *Script { return &Script{turns: turns} }

func (s *Script) Name() string { return "script" }

func (s *Script) Limits() llm.Limits { return llm.Limits{MaxTools: 128, MaxToolBytes: 256 << 10} }

// Complete answers with the next turn. Text arrives through onText in the
// same pieces Server would stream.
func (s *Script) Complete(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	s.mu.Lock()
	if len(s.turns) == 0 {
		s.mu.Unlock()
		return llm.Response{}, &llm.Error{Provider: "script", Status: http.StatusInternalServerError, Message: "llmtest: empty script"}
	}
	t := s.turns[s.n%len(s.turns)]
	s.n++
	n := s.n
	s.last = req
	s.mu.Unlock()
	if t.Status != 0 && t.Status != http.StatusOK {
		return llm.Response{}, &llm.Error{Provider: "script", Status: t.Status, Message: t.Error}
	}
	if onText != nil {
		for _, p := range pieces(t.Text, 7) {
			onText(p)
		}
	}
	out := llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: t.Text}, StopReason: llm.StopEnd}
	for i, tc := range t.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, tc)
		out.StopReason = llm.StopToolCalls
	}
	return out, nil
}

// Calls reports how many requests the script has answered.
func (s *Script) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Last returns the most recent request.
func (s *Script) Last() llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
