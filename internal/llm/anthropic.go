package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// anthropicVersion is the Messages API version packs speaks.
const anthropicVersion = "2023-06-01"

// anthropicProvider speaks the Messages API over HTTP: one streaming POST to
// {base}/v1/messages. Config is its only input: it reads no ANTHROPIC_*
// variables.
type anthropicProvider struct {
	c    Config
	wire *wire
}

func newAnthropic(c Config) *anthropicProvider {
	h := http.Header{}
	h.Set("Anthropic-Version", anthropicVersion)
	if c.APIKey != "" {
		h.Set("X-Api-Key", c.APIKey)
	}
	return &anthropicProvider{c: c, wire: newWire(ProviderAnthropic, c.BaseURL, h)}
}

func (p *anthropicProvider) Name() string { return ProviderAnthropic }

// Limits: Anthropic documents no tool count limit; every definition costs
// prompt tokens, so the byte budget is what binds.
func (p *anthropicProvider) Limits() Limits { return Limits{MaxTools: 256, MaxToolBytes: 256 << 10} }

// The request body of Messages, as much of it as packs sends.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    []anthropicBlock   `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools,omitempty"`
	Stream    bool               `json:"stream"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is a content block: text, tool_use or tool_result.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// anthropicEvent is one event of the stream; which fields are set depends
// on its type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		ID    string `json:"id"`
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage struct {
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func (p *anthropicProvider) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.c.Timeout)
	defer cancel()
	body := anthropicRequest{Model: req.Model, MaxTokens: req.MaxTokens, Messages: anthropicMessages(req.Messages), Stream: true}
	if body.Model == "" {
		body.Model = p.c.Model
	}
	if body.MaxTokens <= 0 {
		body.MaxTokens = p.c.MaxTokens
	}
	if req.System != "" {
		body.System = []anthropicBlock{{Type: "text", Text: req.System}}
	}
	if !p.c.NoTools {
		for _, t := range req.Tools {
			schema := splitSchema(t.InputSchema)
			schema["type"] = "object" // the only type Messages takes for a tool's input
			body.Tools = append(body.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema})
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Response{}, &Error{Provider: ProviderAnthropic, Message: "encoding the request: " + err.Error(), cause: err}
	}
	type blockAcc struct {
		typ, id, name string
		text, json    strings.Builder
		input         json.RawMessage
	}
	var (
		id         string
		blocks     = map[int]*blockAcc{}
		order      []int
		stopReason string
		stopped    bool
		usage      Usage
	)
	err = p.wire.stream(ctx, "/v1/messages", raw, func(event string, data []byte) error {
		var ev anthropicEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return &Error{Provider: ProviderAnthropic, Message: "malformed stream: " + clip(err.Error()), cause: err}
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "error":
			return streamError(ProviderAnthropic, data)
		case "message_start":
			id = ev.Message.ID
			usage.InputTokens = ev.Message.Usage.InputTokens
			usage.OutputTokens = ev.Message.Usage.OutputTokens
		case "content_block_start":
			if _, dup := blocks[ev.Index]; !dup {
				order = append(order, ev.Index)
			}
			cb := ev.ContentBlock
			b := &blockAcc{typ: cb.Type, id: cb.ID, name: cb.Name, input: cb.Input}
			b.text.WriteString(cb.Text)
			blocks[ev.Index] = b
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return &Error{Provider: ProviderAnthropic, Message: "malformed stream: a delta for a block that did not start"}
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text.WriteString(ev.Delta.Text)
				if onText != nil && ev.Delta.Text != "" {
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				b.json.WriteString(ev.Delta.PartialJSON)
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				stopReason = ev.Delta.StopReason
			}
			if ev.Usage.OutputTokens != 0 {
				usage.OutputTokens = ev.Usage.OutputTokens
			}
		case "message_stop":
			stopped = true
		}
		return nil
	})
	if err != nil {
		return Response{}, err
	}
	if id == "" && len(blocks) == 0 {
		return Response{}, &Error{Provider: ProviderAnthropic, Message: "the stream ended without an answer"}
	}
	if !stopped && stopReason == "" {
		return Response{}, &Error{Provider: ProviderAnthropic, Message: "the stream ended before the answer did"}
	}
	out := Response{Message: Message{Role: RoleAssistant}, Usage: usage}
	var text strings.Builder
	for _, i := range order {
		b := blocks[i]
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			args := b.json.String()
			if args == "" {
				args = strings.TrimSpace(string(b.input))
			}
			if args == "" || args == "null" {
				args = "{}"
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	out.Message.Content = text.String()
	switch {
	case len(out.Message.ToolCalls) > 0:
		out.StopReason = StopToolCalls
	case stopReason == "max_tokens":
		out.StopReason = StopMaxTokens
	case stopReason == "end_turn" || stopReason == "":
		out.StopReason = StopEnd
	default:
		out.StopReason = StopOther
	}
	return out, nil
}

// anthropicMessages translates a conversation. Anthropic carries tool
// results as tool_result blocks inside a user message, so consecutive tool
// results, and a user message that follows them, share one user message.
func anthropicMessages(msgs []Message) []anthropicMessage {
	out := make([]anthropicMessage, 0, len(msgs))
	appendUser := func(b anthropicBlock) {
		if n := len(out); n > 0 && out[n-1].Role == "user" {
			out[n-1].Content = append(out[n-1].Content, b)
			return
		}
		out = append(out, anthropicMessage{Role: "user", Content: []anthropicBlock{b}})
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			appendUser(anthropicBlock{Type: "text", Text: nonEmpty(m.Content)})
		case RoleTool:
			appendUser(anthropicBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: nonEmpty(m.Content), IsError: m.IsError})
		case RoleAssistant:
			var blocks []anthropicBlock
			if m.Content != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				args := toolArguments(tc.Arguments)
				if args == nil {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: args})
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: nonEmpty("")})
			}
			out = append(out, anthropicMessage{Role: "assistant", Content: blocks})
		}
	}
	return out
}

// nonEmpty stands in for empty text, which Anthropic refuses.
func nonEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}
