package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/packs-run/packs/internal/llm"
)

// openAIRequest is the Chat Completions request body.
type openAIRequest struct {
	Model               string `json:"model"`
	Stream              bool   `json:"stream"`
	MaxTokens           int    `json:"max_tokens"`
	MaxCompletionTokens int    `json:"max_completion_tokens"`
	Messages            []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func decodeOpenAI(body []byte) (Request, error) {
	var in openAIRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	r := Request{Protocol: "openai", Model: in.Model, Stream: in.Stream, MaxTokens: in.MaxTokens}
	if r.MaxTokens == 0 {
		r.MaxTokens = in.MaxCompletionTokens
	}
	for _, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			if r.System != "" {
				r.System += "\n"
			}
			r.System += content(m.Content)
		case "user":
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: content(m.Content)})
		case "tool":
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, Content: content(m.Content), ToolCallID: m.ToolCallID})
		case "assistant":
			a := llm.Message{Role: llm.RoleAssistant, Content: content(m.Content)}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
			r.Messages = append(r.Messages, a)
		}
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return r, nil
}

func (s *Server) openAI(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, err := decodeOpenAI(body)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "llmtest: request body is not a chat completion request: "+err.Error())
		return
	}
	req.Path, req.Header, req.Body = r.URL.Path, r.Header.Clone(), body
	turn, n := s.next(req)
	if !wait(r.Context(), turn.Delay) {
		return
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		retryAfter(w, turn.RetryAfter)
		openAIError(w, turn.Status, turn.Error)
		return
	}
	id := "chatcmpl-" + strconv.Itoa(n)
	created := time.Now().Unix()
	finish := "stop"
	if len(turn.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": turn.Text}
		if len(turn.ToolCalls) > 0 {
			var calls []any
			for i, tc := range turn.ToolCalls {
				calls = append(calls, map[string]any{"id": callID("call", n, i, tc.ID), "type": "function",
					"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
			}
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": len(body) / 4, "completion_tokens": len(turn.Text) / 4, "total_tokens": (len(body) + len(turn.Text)) / 4},
		})
		return
	}
	out := newSSE(w)
	chunk := func(delta map[string]any, finish any) {
		out.send("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range pieces(turn.Text, s.chunk) {
		chunk(map[string]any{"content": p}, nil)
	}
	switch {
	case turn.StreamError != "":
		out.send("", map[string]any{"error": map[string]any{"message": turn.StreamError, "type": "server_error", "param": nil, "code": nil}})
		return
	case turn.Cut:
		return
	}
	for i, tc := range turn.ToolCalls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": callID("call", n, i, tc.ID), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil)
		for _, p := range pieces(tc.Arguments, s.chunk) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	out.raw("[DONE]")
}

func openAIError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}
