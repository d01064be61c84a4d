package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/packs-run/packs/internal/llm"
)

// anthropicBlock is one content block of a Messages request.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// blocks reads message content that is a string or an array of blocks.
func blocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	json.Unmarshal(raw, &bs)
	return bs
}

// decodeAnthropic turns a Messages request into the neutral form: each
// tool_result block becomes a RoleTool message, and the text of a user
// message a RoleUser one.
func decodeAnthropic(body []byte) (Request, error) {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	r := Request{Protocol: "anthropic", Model: in.Model, Stream: in.Stream, MaxTokens: in.MaxTokens, System: content(in.System)}
	for _, m := range in.Messages {
		switch m.Role {
		case "user":
			var text string
			for _, b := range blocks(m.Content) {
				switch b.Type {
				case "tool_result":
					r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: b.ToolUseID, Content: content(b.Content), IsError: b.IsError})
				case "text":
					text += b.Text
				}
			}
			if text != "" {
				r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: text})
			}
		case "assistant":
			a := llm.Message{Role: llm.RoleAssistant}
			for _, b := range blocks(m.Content) {
				switch b.Type {
				case "text":
					a.Content += b.Text
				case "tool_use":
					a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				}
			}
			r.Messages = append(r.Messages, a)
		}
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return r, nil
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, err := decodeAnthropic(body)
	if err != nil {
		anthropicError(w, http.StatusBadRequest, "llmtest: request body is not a messages request: "+err.Error())
		return
	}
	req.Path, req.Header, req.Body = r.URL.Path, r.Header.Clone(), body
	turn, n := s.next(req)
	if !wait(r.Context(), turn.Delay) {
		return
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		retryAfter(w, turn.RetryAfter)
		anthropicError(w, turn.Status, turn.Error)
		return
	}
	id := "msg_" + strconv.Itoa(n)
	stop := "end_turn"
	if len(turn.ToolCalls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": len(body) / 4, "output_tokens": len(turn.Text) / 4}
	if !req.Stream {
		var content []any
		if turn.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": turn.Text})
		}
		for i, tc := range turn.ToolCalls {
			content = append(content, map[string]any{"type": "tool_use", "id": callID("toolu", n, i, tc.ID), "name": tc.Name, "input": orEmpty(tc.Arguments)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	out := newSSE(w)
	out.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": len(body) / 4, "output_tokens": 0}}})
	out.send("ping", map[string]any{"type": "ping"})
	index := 0
	if turn.Text != "" {
		out.send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range pieces(turn.Text, s.chunk) {
			out.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		if !turn.Cut && turn.StreamError == "" {
			out.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		}
		index++
	}
	switch {
	case turn.StreamError != "":
		out.send("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": turn.StreamError}})
		return
	case turn.Cut:
		return
	}
	for i, tc := range turn.ToolCalls {
		out.send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{
			"type": "tool_use", "id": callID("toolu", n, i, tc.ID), "name": tc.Name, "input": map[string]any{}}})
		for _, p := range pieces(tc.Arguments, s.chunk) {
			out.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		out.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	out.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": len(turn.Text) / 4}})
	out.send("message_stop", map[string]any{"type": "message_stop"})
}

// orEmpty returns args as JSON, "{}" when empty, a JSON string when invalid.
func orEmpty(args string) json.RawMessage {
	switch {
	case args == "":
		return json.RawMessage("{}")
	case !json.Valid([]byte(args)):
		b, _ := json.Marshal(args)
		return b
	}
	return json.RawMessage(args)
}

func anthropicError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
}
