// Package llmtest is a fake language model for tests. Server listens on
// loopback and speaks the real wire formats: OpenAI Chat Completions (JSON,
// or server-sent events of chat.completion.chunk objects ending in
// "data: [DONE]") and Anthropic Messages (JSON, or the message_start /
// content_block_start / content_block_delta / content_block_stop /
// message_delta / message_stop event stream). It answers each request with
// the next scripted Turn and records every request, decoded from the wire,
// so tests can assert what the model was shown.
//
// The decoding here is written from the protocol documents, independently of
// the providers' own encoding (which replaced the official SDKs with the
// same tests passing), so a test that passes shows the two sides agree on
// the wire.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/internal/llm"
)

// Turn is one scripted answer.
type Turn struct {
	// Text is the answer's text, streamed in small pieces.
	Text string
	// ToolCalls are the calls the answer asks for. An empty ID gets one.
	ToolCalls []llm.ToolCall
	// Status, when not 0 or 200, makes the answer an API error with Error as
	// its message.
	Status int
	Error  string
	// RetryAfter, with a Status, is sent as the retry-after-ms header.
	RetryAfter time.Duration
	// StreamError, on a streamed answer, ends the stream after the text
	// with the protocol's in-stream error event carrying this message.
	StreamError string
	// Cut, on a streamed answer, ends the stream after the text, without
	// the events that finish an answer: a connection that broke.
	Cut bool
	// Delay holds the answer back; the request's cancellation ends the wait.
	Delay time.Duration
}

// Request is one request the server received.
type Request struct {
	Protocol  string // "openai" or "anthropic"
	Path      string
	Header    http.Header
	Body      []byte
	Stream    bool
	Model     string
	MaxTokens int
	System    string
	Messages  []llm.Message
	Tools     []llm.Tool
}

// ToolNames lists the names of the tools the request offered.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// HasTool reports whether the request offered a tool called name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Last returns the request's last message.
func (r Request) Last() llm.Message {
	if len(r.Messages) == 0 {
		return llm.Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Server is the fake model. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu      sync.Mutex
	turns   []Turn
	reqs    []Request
	respond func(Request) Turn
	chunk   int
	key     string // the API key requests must carry; "" takes any
}

// NewServer starts a fake model on loopback that answers with turns, in
// order. Close it when done.
func NewServer(turns ...Turn) *Server {
	s := &Server{turns: turns, chunk: 7}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.openAI)
	mux.HandleFunc("POST /v1/messages", s.anthropic)
	s.srv = httptest.NewServer(mux)
	return s
}

// OpenAIURL is the base URL for an OpenAI-compatible client.
func (s *Server) OpenAIURL() string { return s.srv.URL + "/v1" }

// AnthropicURL is the base URL for an Anthropic client.
func (s *Server) AnthropicURL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Respond sets f to answer requests once the script is used up. Without it,
// such a request gets a 500 error that says the script ran out.
func (s *Server) Respond(f func(Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// RequireKey makes the server answer a request that does not carry key
// (OpenAI: "Authorization: Bearer KEY"; Anthropic: "x-api-key: KEY") with
// the status and message the providers send for a wrong key, 401, as the
// providers do; such a request uses up no scripted turn.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// next records r and picks its answer. It also returns the request's number,
// counting from 1.
func (s *Server) next(r Request) (Turn, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	n := len(s.reqs)
	if s.key != "" {
		switch {
		case r.Protocol == "openai" && r.Header.Get("Authorization") != "Bearer "+s.key:
			return Turn{Status: http.StatusUnauthorized, Error: "Incorrect API key provided. You can find your API key in your account settings."}, n
		case r.Protocol == "anthropic" && r.Header.Get("X-Api-Key") != s.key:
			return Turn{Status: http.StatusUnauthorized, Error: "invalid x-api-key"}, n
		}
	}
	if len(s.turns) > 0 {
		t := s.turns[0]
		s.turns = s.turns[1:]
		return t, n
	}
	if s.respond != nil {
		return s.respond(r), n
	}
	return Turn{Status: http.StatusInternalServerError, Error: fmt.Sprintf("llmtest: no scripted turn left for request %d", n)}, n
}

// wait sleeps for d unless ctx ends first, and reports whether to answer.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// pieces cuts s into chunks of n bytes without splitting a UTF-8 sequence.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && s[i]&0xC0 == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// retryAfter sets the header that asks a client to wait d before retrying.
func retryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
	}
}

// sse writes server-sent events, flushing each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

func (s sse) send(event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

func (s sse) raw(line string) {
	fmt.Fprintf(s.w, "data: %s\n\n", line)
	if s.f != nil {
		s.f.Flush()
	}
}

// content reads a content field that is a string or an array of text parts.
func content(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func callID(prefix string, turn, i int, id string) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("%s_%d_%d", prefix, turn, i)
}
