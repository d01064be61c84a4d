package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The two wire protocols share their transport: one JSON POST answered by a
// stream of server-sent events, retried while the server says it did not
// take the request, and an error body read into an Error.

// Retry policy. Only answers that say the request was not taken are retried
// (rate limited, unavailable, overloaded), so a prompt the model ran is never
// sent twice.
const (
	maxRetries     = 2
	retryBase      = 500 * time.Millisecond
	retryMaxWait   = 8 * time.Second  // the longest backoff of our own
	retryAfterCeil = 60 * time.Second // a server asking for longer gets no retry
	maxErrorBody   = 64 << 10
	maxEventBytes  = 16 << 20 // one event's data; a tool call's arguments can be large
)

// retryable reports whether status says the server did not take the
// request: 429 rate limited, 503 unavailable, 529 overloaded (Anthropic).
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == 529
}

// wire posts to one provider.
type wire struct {
	provider string
	baseURL  string
	header   http.Header // set on every request (auth, versions)
	client   *http.Client
	// backoff is the first retry's wait when the server names none.
	backoff time.Duration
}

func newWire(provider, baseURL string, header http.Header) *wire {
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "text/event-stream")
	header.Set("User-Agent", "packs")
	return &wire{provider: provider, baseURL: strings.TrimSuffix(baseURL, "/"), header: header, client: &http.Client{}, backoff: retryBase}
}

// stream posts body to path and hands each server-sent event to onEvent
// until the stream ends or onEvent returns an error, which stream returns.
func (w *wire) stream(ctx context.Context, path string, body []byte, onEvent func(event string, data []byte) error) error {
	resp, err := w.post(ctx, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := readEvents(resp.Body, onEvent); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return unreachable(ctx, w.provider, w.baseURL, err)
	}
	return nil
}

// post sends the request, retrying answers that say it was not taken, and
// returns a 2xx response or an *Error.
func (w *wire) post(ctx context.Context, path string, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.baseURL+path, bytes.NewReader(body))
		if err != nil {
			return nil, &Error{Provider: w.provider, Message: clip(err.Error()), cause: err}
		}
		for k, v := range w.header {
			req.Header[k] = v
		}
		resp, err := w.client.Do(req)
		if err != nil {
			return nil, unreachable(ctx, w.provider, w.baseURL, err)
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		apiErr := classify(&Error{Provider: w.provider, Status: resp.StatusCode, Message: clip(errorMessage(raw, resp.Status))})
		if attempt >= maxRetries || !retryable(resp.StatusCode) {
			return nil, apiErr
		}
		wait, ok := w.retryWait(resp.Header, attempt)
		if dl, has := ctx.Deadline(); !ok || has && time.Until(dl) < wait {
			return nil, apiErr
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, apiErr
		}
	}
}

// retryWait is how long to wait before retry attempt+1: what the server asked
// for (retry-after-ms, then Retry-After in seconds or as a date), else an
// exponential backoff with jitter. ok is false when the server asks for more
// than retryAfterCeil.
func (w *wire) retryWait(h http.Header, attempt int) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		d := time.Duration(ms * float64(time.Millisecond))
		return d, d <= retryAfterCeil
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			d := time.Duration(s * float64(time.Second))
			return d, d <= retryAfterCeil
		}
		if t, err := http.ParseTime(v); err == nil {
			d := max(time.Until(t), 0)
			return d, d <= retryAfterCeil
		}
	}
	d := min(w.backoff<<attempt, retryMaxWait)
	// ±25% jitter, so clients refused together do not come back together.
	return d - d/4 + rand.N(d/2+1), true
}

// errorMessage digs the message out of an error body: {"error":{"message":…}}
// (OpenAI, Anthropic, vLLM), {"error":"…"} (Ollama), else the body itself,
// else the status line.
func errorMessage(raw []byte, status string) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(body.Error, &s) == nil && s != "" {
			return s
		}
	}
	if s := strings.TrimSpace(string(raw)); s != "" {
		return s
	}
	return status
}

// readEvents reads a text/event-stream: "event:" names the next event,
// "data:" lines (joined by newlines) are its data, a blank line dispatches it,
// and lines starting with ":" are comments. An event with no data is skipped.
func readEvents(r io.Reader, onEvent func(event string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	var event string
	var data []byte
	hasData := false
	dispatch := func() error {
		defer func() { event, data, hasData = "", data[:0], false }()
		if !hasData {
			return nil
		}
		return onEvent(event, data)
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			event = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("an event is larger than %d bytes", maxEventBytes)
		}
		return err
	}
	return dispatch()
}

// streamError is an error the server reported inside a stream that had
// begun well.
func streamError(provider string, data []byte) *Error {
	return classify(&Error{Provider: provider, Message: "the stream reported an error: " + clip(errorMessage(data, "unknown error"))})
}
