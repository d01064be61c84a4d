package hostfns

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

// The timeouts a request names (docs/abi.md §4.2): no headers in time fails
// with ErrFirstByteTimeout; a body that is not complete in time comes back
// as far as it arrived, Truncated. A request that names none waits.
func TestHTTPRequestTimeouts(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/silent":
			<-release
		case "/trickle":
			io.WriteString(w, "head of the body")
			w.(http.Flusher).Flush()
			<-release
		default:
			io.WriteString(w, "whole")
		}
	})
	// After the server's Close in the cleanup order: the handlers return first.
	t.Cleanup(func() { close(release) })
	n := newNetwork()
	tests := []struct {
		name      string
		req       HTTPRequest
		wantErr   error
		wantBody  string
		truncated bool
	}{
		{"first byte", HTTPRequest{URL: s.at("127.0.0.1", "/silent"), FirstByteTimeoutMS: 50}, ErrFirstByteTimeout, "", false},
		{"body", HTTPRequest{URL: s.at("127.0.0.1", "/trickle"), FirstByteTimeoutMS: 5000, BodyTimeoutMS: 50}, nil, "head of the body", true},
		{"in time", HTTPRequest{URL: s.at("127.0.0.1", "/fast"), FirstByteTimeoutMS: 5000, BodyTimeoutMS: 5000}, nil, "whole", false},
		{"negative", HTTPRequest{URL: s.at("127.0.0.1", "/fast"), BodyTimeoutMS: -1}, ErrInvalidRequest, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCall(t, capability.Request{Network: loopback})
			resp, err := n.fetch(context.Background(), c, tt.req, nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if string(resp.Body) != tt.wantBody || resp.Truncated != tt.truncated {
				t.Errorf("body %q truncated %v, want %q %v", resp.Body, resp.Truncated, tt.wantBody, tt.truncated)
			}
		})
	}
}

// A body timeout ends before the call's own deadline, so the guest still
// gets what arrived instead of being stopped.
func TestBodyTimeoutWithinDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if got := bodyTimeout(ctx, 30000); got <= 0 || got > 2*time.Second-deadlineMargin {
		t.Errorf("bodyTimeout = %v, want at most %v", got, 2*time.Second-deadlineMargin)
	}
	if got := bodyTimeout(context.Background(), 30000); got != 30*time.Second {
		t.Errorf("bodyTimeout without a deadline = %v, want 30s", got)
	}
	if got := bodyTimeout(ctx, 0); got != 0 {
		t.Errorf("bodyTimeout(0) = %v, want none", got)
	}
}
