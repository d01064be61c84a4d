// Package llm talks to language models. It has one small interface,
// Provider, and two implementations over plain HTTP: OpenAI-compatible Chat
// Completions (hosted OpenAI, a local Ollama, llama.cpp server, vLLM,
// LM Studio) and Anthropic Messages. Both stream text and tool calls as
// server-sent events, and retry a request the server did not take (429, 503,
// 529) with backoff.
//
// The types here are the neutral form of a conversation that the chat
// orchestrator keeps; each provider translates them to its wire format on
// every call, so a chat can move between providers.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of one tool call
)

// Message is one entry of a conversation.
type Message struct {
	Role Role `json:"role"`
	// Content is the text. For a RoleTool message it is the tool's result,
	// usually JSON.
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a RoleTool message that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is one call the model asks for.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the argument object exactly as the model wrote it. It is
	// kept as text because a model can write invalid JSON, and the
	// orchestrator must answer that with an error instead of failing.
	Arguments string `json:"arguments"`
}

// Tool is a tool definition the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one call to the model.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
}

// StopReason says why the model stopped.
type StopReason string

const (
	StopEnd       StopReason = "end"        // the model finished its answer
	StopToolCalls StopReason = "tool_calls" // the model wants tools run
	StopMaxTokens StopReason = "max_tokens" // the answer was cut at the token limit
	StopOther     StopReason = "other"
)

// Usage counts tokens as the provider reports them (zero when it does not).
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Response is the model's complete answer to one Request.
type Response struct {
	Message    Message // always RoleAssistant
	StopReason StopReason
	Usage      Usage
}

// Provider is a language model behind some wire protocol.
type Provider interface {
	// Name is "openai" or "anthropic".
	Name() string
	// Limits are the provider's rules on tool lists.
	Limits() Limits
	// Complete sends req and streams the answer: onText receives each piece of
	// text as it arrives (it may be nil). It returns the whole answer.
	Complete(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// Limits bound what one request may carry.
type Limits struct {
	// MaxTools is the most tool definitions one request may hold.
	MaxTools int
	// MaxToolBytes bounds the total size of the tool definitions (names,
	// descriptions and schemas), a stand-in for their token cost.
	MaxToolBytes int
}

var (
	// ErrProvider is wrapped by every error a provider reports.
	ErrProvider = errors.New("llm: provider error")
	// ErrToolsUnsupported means the model cannot call tools (Ollama answers
	// "does not support tools" for such models). The orchestrator falls back
	// to injecting docs itself.
	ErrToolsUnsupported = errors.New("llm: the model does not support tool calling")
	// ErrTooManyTools means the provider refused the tool list as too large.
	ErrTooManyTools = errors.New("llm: the provider refused the tool list as too large")
	// ErrConfig is wrapped by configuration errors.
	ErrConfig = errors.New("llm: bad configuration")
)

// Error is a failure the provider reported, or a failure to reach it. It
// never holds the API key.
type Error struct {
	Provider string
	Status   int    // HTTP status, 0 when the server was not reached
	Message  string // what the provider said
	kind     error  // ErrToolsUnsupported, ErrTooManyTools or nil
	cause    error  // the transport or context error, if any
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("llm: %s: %s", e.Provider, e.Message)
	}
	return fmt.Sprintf("llm: %s: status %d: %s", e.Provider, e.Status, e.Message)
}

// Is reports ErrProvider for every Error, and its specific kind.
func (e *Error) Is(target error) bool {
	return target == ErrProvider || e.kind != nil && target == e.kind
}

// Unwrap returns the transport or context error behind e, so callers can
// check context.DeadlineExceeded.
func (e *Error) Unwrap() error { return e.cause }

// New builds the provider that c names.
func New(c Config) (Provider, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Provider {
	case ProviderAnthropic:
		return newAnthropic(c), nil
	default:
		return newOpenAI(c), nil
	}
}

// toolArguments returns the arguments as a JSON object, or nil when the model
// wrote something else.
func toolArguments(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("{}")
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return nil
	}
	return json.RawMessage(s)
}

// splitSchema decodes a tool's JSON Schema into the map a request carries.
// An absent schema is an object with no properties.
func splitSchema(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			m = map[string]any{}
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return m
}
