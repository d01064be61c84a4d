package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// openAIProvider speaks Chat Completions over HTTP: one streaming POST to
// {base}/chat/completions. Config is its only input: it reads no OPENAI_*
// variables.
type openAIProvider struct {
	c    Config
	wire *wire
}

func newOpenAI(c Config) *openAIProvider {
	h := http.Header{}
	if c.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.APIKey)
	}
	return &openAIProvider{c: c, wire: newWire(ProviderOpenAI, c.BaseURL, h)}
}

func (p *openAIProvider) Name() string { return ProviderOpenAI }

// Limits: OpenAI accepts at most 128 tools per request; local servers take
// more, but a model drowns long before that.
func (p *openAIProvider) Limits() Limits { return Limits{MaxTools: 128, MaxToolBytes: 256 << 10} }

// The request body of Chat Completions, as much of it as packs sends.
type openAIRequest struct {
	Model     string          `json:"model"`
	Messages  []openAIMessage `json:"messages"`
	MaxTokens int             `json:"max_tokens"`
	Tools     []openAITool    `json:"tools,omitempty"`
	Stream    bool            `json:"stream"`
}

type openAIMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content,omitempty"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type openAITool struct {
	Type     string             `json:"type"`
	Function openAIToolFunction `json:"function"`
}

type openAIToolFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// openAIChunk is one chat.completion.chunk of the stream.
type openAIChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (p *openAIProvider) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.c.Timeout)
	defer cancel()
	body := openAIRequest{Model: req.Model, Messages: openAIMessages(req.System, req.Messages), MaxTokens: req.MaxTokens, Stream: true}
	if body.Model == "" {
		body.Model = p.c.Model
	}
	if body.MaxTokens <= 0 {
		body.MaxTokens = p.c.MaxTokens
	}
	if !p.c.NoTools {
		for _, t := range req.Tools {
			body.Tools = append(body.Tools, openAITool{Type: "function", Function: openAIToolFunction{Name: t.Name, Description: t.Description, Parameters: splitSchema(t.InputSchema)}})
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Response{}, &Error{Provider: ProviderOpenAI, Message: "encoding the request: " + err.Error(), cause: err}
	}
	type callAcc struct {
		id, name string
		args     strings.Builder
	}
	var (
		text   strings.Builder
		calls  []*callAcc
		finish string
		seen   bool // a choice arrived
		done   bool // [DONE] or a finish reason arrived
		usage  Usage
	)
	err = p.wire.stream(ctx, "/chat/completions", raw, func(_ string, data []byte) error {
		if string(data) == "[DONE]" {
			done = true
			return nil
		}
		var ch openAIChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return &Error{Provider: ProviderOpenAI, Message: "malformed stream: " + clip(err.Error()), cause: err}
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			return streamError(ProviderOpenAI, data)
		}
		if ch.Usage != nil {
			usage = Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			seen = true
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				if onText != nil {
					onText(c.Delta.Content)
				}
			}
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index < 0 || tc.Index > 1024 {
					return &Error{Provider: ProviderOpenAI, Message: fmt.Sprintf("malformed stream: tool call index %d", tc.Index)}
				}
				for len(calls) <= tc.Index {
					calls = append(calls, &callAcc{})
				}
				a := calls[tc.Index]
				if tc.ID != "" {
					a.id = tc.ID
				}
				if tc.Function.Name != "" && a.name == "" {
					a.name = tc.Function.Name
				}
				a.args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				finish, done = *c.FinishReason, true
			}
		}
		return nil
	})
	if err != nil {
		return Response{}, err
	}
	if !seen {
		return Response{}, &Error{Provider: ProviderOpenAI, Message: "the stream ended without an answer"}
	}
	if !done {
		return Response{}, &Error{Provider: ProviderOpenAI, Message: "the stream ended before the answer did"}
	}
	out := Response{Message: Message{Role: RoleAssistant, Content: text.String()}, Usage: usage}
	for i, a := range calls {
		if a.name == "" && a.args.Len() == 0 {
			continue // an index the server skipped
		}
		id := a.id
		if id == "" { // some local servers leave it out
			id = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: id, Name: a.name, Arguments: a.args.String()})
	}
	switch {
	case len(out.Message.ToolCalls) > 0:
		out.StopReason = StopToolCalls
	case finish == "length":
		out.StopReason = StopMaxTokens
	case finish == "stop" || finish == "":
		out.StopReason = StopEnd
	default:
		out.StopReason = StopOther
	}
	return out, nil
}

func openAIMessages(system string, msgs []Message) []openAIMessage {
	out := make([]openAIMessage, 0, len(msgs)+1)
	if system != "" {
		out = append(out, openAIMessage{Role: "system", Content: &system})
	}
	for _, m := range msgs {
		content := m.Content
		switch m.Role {
		case RoleUser:
			out = append(out, openAIMessage{Role: "user", Content: &content})
		case RoleTool:
			out = append(out, openAIMessage{Role: "tool", Content: &content, ToolCallID: m.ToolCallID})
		case RoleAssistant:
			a := openAIMessage{Role: "assistant"}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content = &content
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if toolArguments(args) == nil {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openAIToolCall{ID: tc.ID, Type: "function", Function: openAIFunction{Name: tc.Name, Arguments: args}})
			}
			out = append(out, a)
		}
	}
	return out
}

// classify recognises, from the provider's words, the two failures the
// orchestrator handles specially. Servers word them differently, so this
// matches phrases seen from Ollama, vLLM, llama.cpp, OpenAI and Anthropic.
func classify(e *Error) *Error {
	m := strings.ToLower(e.Message)
	switch {
	case e.Status < 400 || e.Status >= 500:
	case strings.Contains(m, "does not support tools"), strings.Contains(m, "tools are not supported"),
		strings.Contains(m, "tool use is not supported"), strings.Contains(m, "does not support tool"):
		e.kind = ErrToolsUnsupported
	case strings.Contains(m, "tools") && (strings.Contains(m, "too many") || strings.Contains(m, "maximum") || strings.Contains(m, "at most")):
		e.kind = ErrTooManyTools
	}
	return e
}

// unreachable describes a failure that is not an API error: the server could
// not be reached, the stream broke, or ctx ended.
func unreachable(ctx context.Context, provider, baseURL string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return &Error{Provider: provider, Message: "request to " + baseURL + " stopped: " + ctxErr.Error(), cause: ctxErr}
	}
	return &Error{Provider: provider, Message: clip(err.Error()) + ": nothing answered at " + baseURL + ": start the model server, or point --base-url or PACKS_BASE_URL at one", cause: err}
}

// clip keeps provider messages to one readable line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}
