package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// providers runs f once per wire protocol, each against its own fake server.
func providers(t *testing.T, f func(t *testing.T, srv *llmtest.Server, p llm.Provider)) {
	for _, name := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer()
			t.Cleanup(srv.Close)
			p := newProvider(t, srv, name, "sk-test-key", time.Minute)
			f(t, srv, p)
		})
	}
}

func newProvider(t *testing.T, srv *llmtest.Server, name, key string, timeout time.Duration) llm.Provider {
	t.Helper()
	c := llm.Config{Provider: name, BaseURL: srv.OpenAIURL(), Model: "test-model", APIKey: key, MaxTokens: 321, Timeout: timeout}
	if name == llm.ProviderAnthropic {
		c.BaseURL = srv.AnthropicURL()
	}
	p, err := llm.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)

func TestStreamsTextInPieces(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		want := "Hello there — streaming works, ünïcode too."
		srv.Push(llmtest.Turn{Text: want})
		var pieces []string
		got, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, func(s string) { pieces = append(pieces, s) })
		if err != nil {
			t.Fatal(err)
		}
		if got.Message.Content != want || got.Message.Role != llm.RoleAssistant {
			t.Errorf("got %+v, want text %q", got.Message, want)
		}
		if got.StopReason != llm.StopEnd {
			t.Errorf("got stop %q, want %q", got.StopReason, llm.StopEnd)
		}
		if len(pieces) < 3 || strings.Join(pieces, "") != want {
			t.Errorf("got %d pieces %q, want several that join to the text", len(pieces), pieces)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || !reqs[0].Stream || reqs[0].Model != "test-model" || reqs[0].MaxTokens != 321 {
			t.Errorf("got request %+v, want one streaming request for test-model with max tokens 321", reqs)
		}
	})
}

func TestStreamsToolCalls(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		calls := []llm.ToolCall{
			{ID: "c1", Name: "open_docs", Arguments: `{"pack_id":"incident-triage"}`},
			{ID: "c2", Name: "weather__forecast", Arguments: `{"city":"Zürich, a long name to split"}`},
		}
		srv.Push(llmtest.Turn{Text: "Let me look.", ToolCalls: calls})
		got, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.StopReason != llm.StopToolCalls {
			t.Errorf("got stop %q, want %q", got.StopReason, llm.StopToolCalls)
		}
		if got.Message.Content != "Let me look." {
			t.Errorf("got text %q", got.Message.Content)
		}
		if len(got.Message.ToolCalls) != len(calls) {
			t.Fatalf("got %d calls, want %d", len(got.Message.ToolCalls), len(calls))
		}
		for i, c := range got.Message.ToolCalls {
			if c.ID != calls[i].ID || c.Name != calls[i].Name {
				t.Errorf("call %d: got %+v, want %+v", i, c, calls[i])
			}
			if !jsonEqual(t, c.Arguments, calls[i].Arguments) {
				t.Errorf("call %d: got arguments %s, want %s", i, c.Arguments, calls[i].Arguments)
			}
		}
	})
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestConversationOnTheWire sends a whole conversation, tool round trip
// included, and checks the fake server decoded the same conversation.
func TestConversationOnTheWire(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		srv.Push(llmtest.Turn{Text: "done"})
		msgs := []llm.Message{
			{Role: llm.RoleUser, Content: "what is the weather?"},
			{Role: llm.RoleAssistant, Content: "checking", ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "weather__forecast", Arguments: `{"city":"Oslo"}`},
				{ID: "c2", Name: "open_docs", Arguments: `{"pack_id":"weather"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: `{"temp":3}`},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: `{"error":"denied"}`, IsError: true},
			{Role: llm.RoleUser, Content: "and tomorrow?"},
		}
		tools := []llm.Tool{
			{Name: "open_docs", Description: "Open a pack's docs.", InputSchema: json.RawMessage(`{"type":"object","properties":{"pack_id":{"type":"string"}},"required":["pack_id"]}`)},
			{Name: "weather__forecast", Description: "Forecast.", InputSchema: weatherSchema},
		}
		if _, err := p.Complete(context.Background(), llm.Request{System: "You are terse.", Messages: msgs, Tools: tools}, nil); err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()[0]
		if got.System != "You are terse." {
			t.Errorf("got system %q", got.System)
		}
		if want := []string{"open_docs", "weather__forecast"}; !reflect.DeepEqual(got.ToolNames(), want) {
			t.Errorf("got tools %v, want %v", got.ToolNames(), want)
		}
		if !jsonEqual(t, string(got.Tools[1].InputSchema), string(weatherSchema)) {
			t.Errorf("got schema %s, want %s", got.Tools[1].InputSchema, weatherSchema)
		}
		if got.Tools[1].Description != "Forecast." {
			t.Errorf("got description %q", got.Tools[1].Description)
		}
		if len(got.Messages) != len(msgs) {
			t.Fatalf("got %d messages %+v, want %d", len(got.Messages), got.Messages, len(msgs))
		}
		for i, m := range got.Messages {
			w := msgs[i]
			if m.Role != w.Role || m.Content != w.Content || m.ToolCallID != w.ToolCallID || len(m.ToolCalls) != len(w.ToolCalls) {
				t.Errorf("message %d: got %+v, want %+v", i, m, w)
			}
			if p.Name() == llm.ProviderAnthropic && m.IsError != w.IsError {
				t.Errorf("message %d: got is_error %v, want %v", i, m.IsError, w.IsError)
			}
			for j := range m.ToolCalls {
				if m.ToolCalls[j].ID != w.ToolCalls[j].ID || !jsonEqual(t, m.ToolCalls[j].Arguments, w.ToolCalls[j].Arguments) {
					t.Errorf("message %d call %d: got %+v, want %+v", i, j, m.ToolCalls[j], w.ToolCalls[j])
				}
			}
		}
	})
}

func TestAPIKeyOnlyInItsHeader(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		srv.Push(llmtest.Turn{Text: "ok"})
		if _, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[0]
		header, want := "Authorization", "Bearer sk-test-key"
		if p.Name() == llm.ProviderAnthropic {
			header, want = "X-Api-Key", "sk-test-key"
		}
		if got := r.Header.Get(header); got != want {
			t.Errorf("got %s %q, want %q", header, got, want)
		}
		if strings.Contains(string(r.Body), "sk-test-key") {
			t.Error("the key is in the request body")
		}
	})
}

func TestNoKeyNoAuthHeader(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Text: "ok"})
	defer srv.Close()
	p := newProvider(t, srv, llm.ProviderOpenAI, "", time.Minute)
	if _, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("got Authorization %q, want none for a local server without a key", got)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name   string
		turn   llmtest.Turn
		want   error
		status int
	}{
		{"tools unsupported", llmtest.Turn{Status: 400, Error: "registry.ollama.ai/library/gemma:2b does not support tools"}, llm.ErrToolsUnsupported, 400},
		{"too many tools", llmtest.Turn{Status: 400, Error: "Invalid 'tools': array too long. Expected an array with maximum length 128"}, llm.ErrTooManyTools, 400},
		{"server error", llmtest.Turn{Status: 500, Error: "boom"}, llm.ErrProvider, 500},
		{"bad request", llmtest.Turn{Status: 400, Error: "model not found"}, llm.ErrProvider, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
				srv.Push(c.turn)
				_, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
				if !errors.Is(err, c.want) || !errors.Is(err, llm.ErrProvider) {
					t.Fatalf("got %v, want errors.Is %v", err, c.want)
				}
				var e *llm.Error
				if !errors.As(err, &e) || e.Status != c.status || !strings.Contains(e.Message, c.turn.Error) {
					t.Errorf("got %#v, want status %d with the provider's message", e, c.status)
				}
				if c.want == llm.ErrProvider && (errors.Is(err, llm.ErrToolsUnsupported) || errors.Is(err, llm.ErrTooManyTools)) {
					t.Errorf("got %v classified as a special case", err)
				}
			})
		})
	}
}

func TestTimeout(t *testing.T) {
	for _, name := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Text: "late", Delay: time.Minute})
			defer srv.Close()
			p := newProvider(t, srv, name, "", 100*time.Millisecond)
			start := time.Now()
			_, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, llm.ErrProvider) {
				t.Fatalf("got %v, want a deadline error", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v, want about the 100ms timeout", d)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: "http://" + addr + "/v1", Model: "m", MaxTokens: 10, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 0 || !strings.Contains(e.Message, addr) {
		t.Fatalf("got %v, want an unreachable error that names %s", err, addr)
	}
}

// TestNoToolsSendsNone: with NoTools the request carries no tool list.
func TestNoToolsSendsNone(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Text: "ok"})
	defer srv.Close()
	p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.OpenAIURL(), Model: "m", MaxTokens: 10, Timeout: time.Minute, NoTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: []llm.Tool{{Name: "x", InputSchema: weatherSchema}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0]; len(got.Tools) != 0 || strings.Contains(string(got.Body), `"tools"`) {
		t.Errorf("got tools %v, want none", got.ToolNames())
	}
}

// TestNonStreamingFake checks the fake's plain JSON answers, which other
// clients of the fake (curl in a demo) rely on.
func TestNonStreamingFake(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Turn{Text: "plain", ToolCalls: []llm.ToolCall{{Name: "open_docs", Arguments: `{"pack_id":"a"}`}}})
	defer srv.Close()
	resp, err := http.Post(srv.OpenAIURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	c := body.Choices[0]
	if c.Message.Content != "plain" || c.FinishReason != "tool_calls" || c.Message.ToolCalls[0].Function.Name != "open_docs" || c.Message.ToolCalls[0].ID == "" {
		t.Errorf("got %+v", body)
	}
}
