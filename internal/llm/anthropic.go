package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicProvider speaks the Messages API through the official SDK. As
// with OpenAI, only the message service is built, so the SDK reads no
// ANTHROPIC_* variables behind our back.
type anthropicProvider struct {
	c   Config
	svc anthropic.MessageService
}

func newAnthropic(c Config) *anthropicProvider {
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithMaxRetries(0),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	return &anthropicProvider{c: c, svc: anthropic.NewMessageService(opts...)}
}

func (p *anthropicProvider) Name() string { return ProviderAnthropic }

// Limits: Anthropic documents no tool count limit; every definition costs
// prompt tokens, so the byte budget is what binds.
func (p *anthropicProvider) Limits() Limits { return Limits{MaxTools: 256, MaxToolBytes: 256 << 10} }

func (p *anthropicProvider) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.c.Timeout)
	defer cancel()
	params := anthropic.MessageNewParams{
		Model:     req.Model,
		MaxTokens: int64(req.MaxTokens),
		Messages:  anthropicMessages(req.Messages),
	}
	if params.Model == "" {
		params.Model = p.c.Model
	}
	if params.MaxTokens <= 0 {
		params.MaxTokens = int64(p.c.MaxTokens)
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if !p.c.NoTools {
		for _, t := range req.Tools {
			params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
				Name:        t.Name,
				Description: anthropic.String(t.Description),
				InputSchema: anthropicSchema(t.InputSchema),
			}})
		}
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return Response{}, &Error{Provider: ProviderAnthropic, Message: "malformed stream: " + clip(err.Error()), cause: err}
		}
		if onText != nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			onText(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.wrap(ctx, err)
	}
	if msg.ID == "" && len(msg.Content) == 0 {
		return Response{}, &Error{Provider: ProviderAnthropic, Message: "the stream ended without an answer"}
	}
	out := Response{
		Message: Message{Role: RoleAssistant},
		Usage:   Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens},
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := string(b.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Message.Content = text.String()
	switch {
	case len(out.Message.ToolCalls) > 0:
		out.StopReason = StopToolCalls
	case msg.StopReason == anthropic.StopReasonMaxTokens:
		out.StopReason = StopMaxTokens
	case msg.StopReason == anthropic.StopReasonEndTurn || msg.StopReason == "":
		out.StopReason = StopEnd
	default:
		out.StopReason = StopOther
	}
	return out, nil
}

// anthropicMessages translates a conversation. Anthropic carries tool
// results as tool_result blocks inside a user message, so consecutive tool
// results, and a user message that follows them, share one user message.
func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	out := make([]anthropic.MessageParam, 0, len(msgs))
	appendUser := func(b anthropic.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser {
			out[n-1].Content = append(out[n-1].Content, b)
			return
		}
		out = append(out, anthropic.NewUserMessage(b))
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			appendUser(anthropic.NewTextBlock(nonEmpty(m.Content)))
		case RoleTool:
			appendUser(anthropic.NewToolResultBlock(m.ToolCallID, nonEmpty(m.Content), m.IsError))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				args := toolArguments(tc.Arguments)
				if args == nil {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, args, tc.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock(nonEmpty("")))
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
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

func anthropicSchema(raw json.RawMessage) anthropic.ToolInputSchemaParam {
	m := splitSchema(raw)
	s := anthropic.ToolInputSchemaParam{Properties: m["properties"]}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(m, "properties")
	delete(m, "required")
	delete(m, "type")
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s
}

func (p *anthropicProvider) wrap(ctx context.Context, err error) error {
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return classify(&Error{Provider: ProviderAnthropic, Status: ae.StatusCode, Message: clip(anthropicMessage(ae))})
	}
	return unreachable(ctx, ProviderAnthropic, p.c.BaseURL, err)
}

// anthropicMessage digs the message out of {"type":"error","error":{...}}.
func anthropicMessage(ae *anthropic.Error) string {
	raw := ae.RawJSON()
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error.Message != "" {
		return body.Error.Message
	}
	if raw = strings.TrimSpace(raw); raw != "" {
		return raw
	}
	return ae.Error()
}
