package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openAIProvider speaks Chat Completions through the official SDK. Only the
// chat completion service is built, not the whole client, so the SDK reads
// no OPENAI_* variables behind our back: Config is the only input.
type openAIProvider struct {
	c   Config
	svc openai.ChatCompletionService
}

func newOpenAI(c Config) *openAIProvider {
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithMaxRetries(0),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	return &openAIProvider{c: c, svc: openai.NewChatCompletionService(opts...)}
}

func (p *openAIProvider) Name() string { return ProviderOpenAI }

// Limits: OpenAI accepts at most 128 tools per request; local servers take
// more, but a model drowns long before that.
func (p *openAIProvider) Limits() Limits { return Limits{MaxTools: 128, MaxToolBytes: 256 << 10} }

func (p *openAIProvider) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.c.Timeout)
	defer cancel()
	params := openai.ChatCompletionNewParams{
		Model:    req.Model,
		Messages: openAIMessages(req.System, req.Messages),
	}
	if params.Model == "" {
		params.Model = p.c.Model
	}
	if n := req.MaxTokens; n > 0 {
		params.MaxTokens = openai.Int(int64(n))
	} else {
		params.MaxTokens = openai.Int(int64(p.c.MaxTokens))
	}
	if !p.c.NoTools {
		for _, t := range req.Tools {
			params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name:        t.Name,
				Description: openai.String(t.Description),
				Parameters:  splitSchema(t.InputSchema),
			}))
		}
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if onText != nil {
			for _, ch := range chunk.Choices {
				if ch.Index == 0 && ch.Delta.Content != "" {
					onText(ch.Delta.Content)
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.wrap(ctx, err)
	}
	if len(acc.Choices) == 0 {
		return Response{}, &Error{Provider: ProviderOpenAI, Message: "the stream ended without an answer"}
	}
	choice := acc.Choices[0]
	out := Response{
		Message: Message{Role: RoleAssistant, Content: choice.Message.Content},
		Usage:   Usage{InputTokens: acc.Usage.PromptTokens, OutputTokens: acc.Usage.CompletionTokens},
	}
	for i, tc := range choice.Message.ToolCalls {
		id := tc.ID
		if id == "" { // some local servers leave it out
			id = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	switch {
	case len(out.Message.ToolCalls) > 0:
		out.StopReason = StopToolCalls
	case choice.FinishReason == "length":
		out.StopReason = StopMaxTokens
	case choice.FinishReason == "stop" || choice.FinishReason == "":
		out.StopReason = StopEnd
	default:
		out.StopReason = StopOther
	}
	return out, nil
}

func openAIMessages(system string, msgs []Message) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case RoleTool:
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := &openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if toolArguments(args) == nil {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: a})
		}
	}
	return out
}

func (p *openAIProvider) wrap(ctx context.Context, err error) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = strings.TrimSpace(ae.RawJSON())
		}
		return classify(&Error{Provider: ProviderOpenAI, Status: ae.StatusCode, Message: clip(msg)})
	}
	return unreachable(ctx, ProviderOpenAI, p.c.BaseURL, err)
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
