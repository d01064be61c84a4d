package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// stdioRequests is an initialize handshake followed by n requests (tool
// calls, lists, pings), one JSON-RPC message per line, as a client writes
// them to packs mcp's stdin. (No enable_tools: the SDK runs calls
// concurrently, and what this test checks is the end of input.)
func stdioRequests(n int) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"eof-test","version":"1"}}}` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		case 1:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"open_docs","arguments":{"pack_id":"echo-pack"}}}`+"\n", i)
		default:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
		}
	}
	return b.String()
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// answeredIDs reads the server's output and returns the ids of its
// responses.
func answeredIDs(t *testing.T, out []byte) map[int]bool {
	t.Helper()
	ids := map[int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("output line is not one JSON-RPC message: %v\n%s", err, sc.Bytes())
		}
		if msg.ID != nil && msg.Method == "" {
			ids[*msg.ID] = true
		}
	}
	return ids
}

// TestStdioAnswersEverythingBeforeEOF: a client that writes its requests
// and closes stdin at once (a script piping into packs mcp) gets an answer
// to every request it sent, not only to those that were done when the
// input ended.
func TestStdioAnswersEverythingBeforeEOF(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	for _, n := range []int{1, 12, 40} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var out syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := e.srv.ServeStdio(ctx, strings.NewReader(stdioRequests(n)), &out); err != nil {
				t.Fatalf("ServeStdio: %v", err)
			}
			got := answeredIDs(t, out.Bytes())
			for id := 0; id <= n; id++ {
				if !got[id] {
					t.Errorf("request %d was not answered (%d of %d answered)", id, len(got), n+1)
				}
			}
		})
	}
}

// TestStdioEOFWithUnanswerableCall: a call that needs the client again
// (here: approval through elicitation) after the input ended cannot be
// answered; ServeStdio still ends instead of waiting for it forever.
func TestStdioEOFWithUnanswerableCall(t *testing.T) {
	e := newEnv(t, "")
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"eof-test","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"open_docs","arguments":{"pack_id":"echo-pack"}}}` + "\n"
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(context.Background(), strings.NewReader(in), &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio waits forever for an answer the closed input cannot bring")
	}
	if !answeredIDs(t, out.Bytes())[0] {
		t.Errorf("initialize was not answered:\n%s", out.Bytes())
	}
}
