package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

var hi = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

// TestRetriesRequestNotTaken: an answer that says the server did not take
// the request (rate limited, unavailable, overloaded) is retried after the
// wait the server asked for, with the same body.
func TestRetriesRequestNotTaken(t *testing.T) {
	for _, status := range []int{429, 503, 529} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
				srv.Push(llmtest.Turn{Status: status, Error: "slow down", RetryAfter: 20 * time.Millisecond}, llmtest.Turn{Text: "ok"})
				start := time.Now()
				got, err := p.Complete(context.Background(), hi, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got.Message.Content != "ok" {
					t.Errorf("got %q, want the retry's answer", got.Message.Content)
				}
				reqs := srv.Requests()
				if len(reqs) != 2 || !bytes.Equal(reqs[0].Body, reqs[1].Body) {
					t.Fatalf("got %d requests, want 2 with the same body", len(reqs))
				}
				if d := time.Since(start); d < 20*time.Millisecond {
					t.Errorf("retried after %v, before the 20ms the server asked for", d)
				}
			})
		})
	}
}

// TestRetryGivesUp: after two retries the last refusal is the error.
func TestRetryGivesUp(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		for range 3 {
			srv.Push(llmtest.Turn{Status: 429, Error: "rate limit reached", RetryAfter: time.Millisecond})
		}
		srv.Push(llmtest.Turn{Text: "never reached"})
		_, err := p.Complete(context.Background(), hi, nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.Status != 429 || !strings.Contains(e.Message, "rate limit reached") {
			t.Fatalf("got %v, want the 429 with its message", err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Errorf("got %d requests, want 3 (two retries)", n)
		}
	})
}

// TestNoRetryWhenTaken: a request the server may have run (500), or one that
// is wrong (400, 401), is sent once.
func TestNoRetryWhenTaken(t *testing.T) {
	for _, status := range []int{400, 401, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
				srv.Push(llmtest.Turn{Status: status, Error: "no", RetryAfter: time.Millisecond}, llmtest.Turn{Text: "ok"})
				_, err := p.Complete(context.Background(), hi, nil)
				var e *llm.Error
				if !errors.As(err, &e) || e.Status != status {
					t.Fatalf("got %v, want status %d", err, status)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("got %d requests, want 1", n)
				}
			})
		})
	}
}

// TestRetryBacksOffWithoutHint: with no retry-after header the retry waits
// its own backoff (500 ms, ±25%).
func TestRetryBacksOffWithoutHint(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a backoff")
	}
	srv := llmtest.NewServer(llmtest.Turn{Status: 503, Error: "busy"}, llmtest.Turn{Text: "ok"})
	defer srv.Close()
	p := newProvider(t, srv, llm.ProviderOpenAI, "", time.Minute)
	start := time.Now()
	if _, err := p.Complete(context.Background(), hi, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 375*time.Millisecond {
		t.Errorf("retried after %v, want at least 375ms", d)
	}
}

// TestRetryNotPastDeadline: a wait longer than the time left is not begun;
// the refusal is the error, at once.
func TestRetryNotPastDeadline(t *testing.T) {
	for _, name := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Turn{Status: 429, Error: "come back in a minute", RetryAfter: time.Minute}, llmtest.Turn{Text: "ok"})
			defer srv.Close()
			p := newProvider(t, srv, name, "", 2*time.Second)
			start := time.Now()
			_, err := p.Complete(context.Background(), hi, nil)
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != 429 {
				t.Fatalf("got %v, want the 429", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v, want an answer before the 2s timeout", d)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("got %d requests, want 1", n)
			}
		})
	}
}

// TestStreamErrorEvent: an error the server reports inside a stream is the
// call's error, not a short answer.
func TestStreamErrorEvent(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		srv.Push(llmtest.Turn{Text: "partial answer", StreamError: "Overloaded"})
		var pieces []string
		_, err := p.Complete(context.Background(), hi, func(s string) { pieces = append(pieces, s) })
		var e *llm.Error
		if !errors.As(err, &e) || !errors.Is(err, llm.ErrProvider) || !strings.Contains(e.Message, "Overloaded") {
			t.Fatalf("got %v, want the stream's error", err)
		}
		if strings.Join(pieces, "") != "partial answer" {
			t.Errorf("got pieces %q, want the text streamed before the error", pieces)
		}
	})
}

// TestStreamCut: a stream that stops before the answer is finished is an
// error, not a short answer.
func TestStreamCut(t *testing.T) {
	providers(t, func(t *testing.T, srv *llmtest.Server, p llm.Provider) {
		srv.Push(llmtest.Turn{Text: "half of the", Cut: true})
		_, err := p.Complete(context.Background(), hi, nil)
		if !errors.Is(err, llm.ErrProvider) || !strings.Contains(err.Error(), "ended before") {
			t.Fatalf("got %v, want a broken-stream error", err)
		}
	})
}

// TestErrorBodies: the message is dug out of each server's error shape, and
// the raw body (or the status) stands in when there is none.
func TestErrorBodies(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"error":{"message":"model 'x' not found","type":"not_found"}}`, "model 'x' not found"},
		{`{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, "model: x"},
		{`{"error":"model \"x\" not found, try pulling it first"}`, `model "x" not found, try pulling it first`},
		{`<html>bad gateway</html>`, "<html>bad gateway</html>"},
		{``, "404 Not Found"},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(c.body))
		}))
		for _, name := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
			p, err := llm.New(llm.Config{Provider: name, BaseURL: srv.URL, Model: "m", MaxTokens: 10, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Complete(context.Background(), hi, nil)
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != 404 || e.Message != c.want {
				t.Errorf("%s, body %s: got %v, want status 404 and message %q", name, c.body, err, c.want)
			}
		}
		srv.Close()
	}
}
