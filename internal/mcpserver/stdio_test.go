package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectStdio serves one session through ServeStdio over a pair of pipes:
// the real newline-delimited JSON-RPC framing of the stdio transport,
// without a process in between.
func (e *testEnv) connectStdio(t testing.TB, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- e.srv.ServeStdio(ctx, toServer, fromServer)
		fromServer.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		fromClient.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		cancel()
	})
	return cs
}

func TestStdioEndToEnd(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	changed := make(chan struct{}, 4)
	cs := e.connectStdio(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if got := cs.InitializeResult().ServerInfo.Name; got != ServerName {
		t.Errorf("server name = %q, want %q", got, ServerName)
	}
	if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed over stdio")
	}
	if !slices.Contains(toolNames(t, cs), "echo-pack__echo") {
		t.Fatal("echo-pack__echo not listed after enable_tools")
	}
	if text, isErr := callText(t, cs, "echo-pack__echo", map[string]any{"message": "over stdio"}); isErr || !strings.Contains(text, "over stdio") {
		t.Errorf("echo = %q (error %v)", text, isErr)
	}
}

// BenchmarkMCPToolsCallStdio measures one tools/call round trip of a trivial
// WASM tool (echo-pack's echo, an Extism plugin of 273 bytes) over the stdio
// framing, with the runtime's instance pool warm: JSON-RPC decode, the
// pipeline (schema check, the gate with the policy approving, the grant,
// the integrity check of the installed pack, a fresh instance from the
// pool, the call, the durable audit record) and the response. Its peer in
// the same run, bare-sdk, is the official MCP SDK alone over the same pipes
// with a Go handler that echoes: the floor of any MCP server.
func BenchmarkMCPToolsCallStdio(b *testing.B) {
	ctx := context.Background()
	b.Run("packs", func(b *testing.B) {
		e := newEnv(b, autoApproveEcho)
		cs := e.connectStdio(b, nil)
		if _, isErr := callText(b, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
			b.Fatal("enable_tools failed")
		}
		benchToolsCall(b, cs, &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: map[string]any{"message": "ping"}})
	})
	b.Run("bare-sdk", func(b *testing.B) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		toServer, fromClient := io.Pipe()
		toClient, fromServer := io.Pipe()
		go srv.Run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchToolsCall(b, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping"}})
	})
}

// benchToolsCall times tools/call round trips of params on cs, after a
// warm-up, and reports the median and the 99th percentile.
func benchToolsCall(b *testing.B, cs *mcp.ClientSession, params *mcp.CallToolParams) {
	ctx := context.Background()
	for range 20 { // warm the pool and the audit log
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	var times []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		times = append(times, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}
