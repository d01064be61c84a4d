package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawStdio serves ServeStdio over pipes and returns a function that sends
// one JSON-RPC line and one that reads the next message the server wrote.
func rawStdio(t *testing.T, e *testEnv) (send func(string), next func() map[string]any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- e.srv.ServeStdio(ctx, toServer, fromServer)
		fromServer.Close()
	}()
	t.Cleanup(func() {
		fromClient.Close()
		cancel()
		<-done
	})
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(toClient)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	send = func(line string) {
		if _, err := io.WriteString(fromClient, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next = func() map[string]any {
		t.Helper()
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("the server closed its output")
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no answer from the server")
		}
		return nil
	}
	return send, next
}

const (
	discoverRequest   = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`
	initializeRequest = `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initialized       = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsList         = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
)

// TestDiscoverThenInitialize: a client that asks server/discover and then
// falls back to initialize (its discovery timed out, or it prefers the
// older protocol) is answered as the SDKs' fallback expects: discovery
// at once, even while the packs are still being prepared (packs mcp
// installs the built-ins then), and initialize after it, with no error.
func TestDiscoverThenInitialize(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	release := make(chan struct{})
	attach := e.srv.cfg.Attach
	e.srv.cfg.Attach = nil
	e.srv.cfg.Prepare = func(ctx context.Context) ([]string, error) {
		select {
		case <-release:
			return attach, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	send, next := rawStdio(t, e)

	send(discoverRequest)
	d := next() // before Prepare ends
	if d["error"] != nil || d["result"] == nil {
		t.Fatalf("discover: %v", d)
	}
	send(initializeRequest)
	init := next()
	if init["error"] != nil {
		t.Fatalf("initialize after discover: %v", init["error"])
	}
	if v := init["result"].(map[string]any)["protocolVersion"]; v != "2025-06-18" {
		t.Errorf("initialize negotiated %v, want 2025-06-18", v)
	}
	send(initialized)
	send(toolsList)
	close(release)
	list := next()
	if list["error"] != nil {
		t.Fatalf("tools/list: %v", list["error"])
	}
	if n := len(list["result"].(map[string]any)["tools"].([]any)); n == 0 {
		t.Errorf("tools/list after the fallback lists no tools")
	}
}

// TestErrorsHaveCodes: an error the server answers always carries a
// JSON-RPC code; a second initialize is an invalid request, not code 0.
func TestErrorsHaveCodes(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	send, next := rawStdio(t, e)
	send(initializeRequest)
	if m := next(); m["error"] != nil {
		t.Fatalf("initialize: %v", m["error"])
	}
	send(initializeRequest)
	m := next()
	errObj, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("a second initialize was answered %v, want an error", m)
	}
	if code, _ := errObj["code"].(float64); code != -32600 {
		t.Errorf("a second initialize: code %v, want -32600 (invalid request)", errObj["code"])
	}
}

// TestNoListChangedBeforeAChange: a client that connects while the packs
// are still being prepared is told of no list change it did not miss: the
// lists it reads first are already whole.
func TestNoListChangedBeforeAChange(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	release := make(chan struct{})
	attach := e.srv.cfg.Attach
	e.srv.cfg.Attach = nil
	e.srv.cfg.Prepare = func(ctx context.Context) ([]string, error) {
		select {
		case <-release:
			return attach, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	changed := make(chan string, 8)
	cs := e.connectStdio(t, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { changed <- "tools" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
	})
	close(release)
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case what := <-changed:
		t.Errorf("the client was told its %s list changed, though nothing changed since it read it", what)
	case <-time.After(200 * time.Millisecond):
	}
}
