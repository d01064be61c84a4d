package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
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
// pool, the call, the durable audit record) and the response.
//
// Its peers run in the same loop, one call of each per iteration, so that
// a loaded machine slows them alike: bare, the official MCP SDK alone over
// the same pipes with a Go handler that echoes (the floor of any MCP
// server), and durable, the same bare server whose handler also appends
// one audit row to the same kind of log (packs.db, synchronous=FULL) before
// it answers: the floor of any MCP server that keeps a durable record of
// each call. It reports the median and 99th percentile of each and packs'
// ratios to them (p50-ratio and p99-ratio against bare, the goal of issue
// 18; durable-p50-ratio and durable-p99-ratio against durable). ns/op is
// the time of the three calls together.
func BenchmarkMCPToolsCallStdio(b *testing.B) {
	e := newEnv(b, autoApproveEcho)
	packsCS := e.connectStdio(b, nil)
	if _, isErr := callText(b, packsCS, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		b.Fatal("enable_tools failed")
	}
	bare := bareServer(b, nil)
	durable := bareServer(b, e.audit)
	calls := []struct {
		cs     *mcp.ClientSession
		params *mcp.CallToolParams
		times  []time.Duration
	}{
		{cs: packsCS, params: &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: map[string]any{"message": "ping"}}},
		{cs: bare, params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping"}}},
		{cs: durable, params: &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping"}}},
	}
	ctx := context.Background()
	call := func(i int) time.Duration {
		start := time.Now()
		res, err := calls[i].cs.CallTool(ctx, calls[i].params)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: call failed: %v %+v", calls[i].params.Name, err, res)
		}
		return d
	}
	for range 20 { // warm the pool and the audit log
		for i := range calls {
			call(i)
		}
	}
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		// Each goes first in turn: none always follows the same one.
		for j := range calls {
			i := (n + j) % len(calls)
			calls[i].times = append(calls[i].times, call(i))
		}
	}
	b.StopTimer()
	var p50, p99 [3]float64
	for i := range calls {
		p50[i], p99[i] = percentiles(calls[i].times)
	}
	b.ReportMetric(p50[0], "p50-ns")
	b.ReportMetric(p99[0], "p99-ns")
	b.ReportMetric(p50[1], "bare-p50-ns")
	b.ReportMetric(p99[1], "bare-p99-ns")
	b.ReportMetric(p50[0]/p50[1], "p50-ratio")
	b.ReportMetric(p99[0]/p99[1], "p99-ratio")
	b.ReportMetric(p50[2], "durable-p50-ns")
	b.ReportMetric(p99[2], "durable-p99-ns")
	b.ReportMetric(p50[0]/p50[2], "durable-p50-ratio")
	b.ReportMetric(p99[0]/p99[2], "durable-p99-ratio")
}

// bareServer serves a bare official-SDK server with one tool, echo, over a
// pair of pipes and returns a client on it. With log set, echo appends an
// audit row for each call, durable before it answers.
func bareServer(b *testing.B, log *audit.Log) *mcp.ClientSession {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if log != nil {
			now := time.Now()
			if err := log.RecordCall(ctx, capability.CallRecord{Invocation: rand.Text(), Pack: "bare", Tool: "echo", Arguments: req.Params.Arguments,
				Started: now, Finished: now, Status: capability.StatusOK}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	go srv.Run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// percentiles returns the median and the 99th percentile of times, in ns.
func percentiles(times []time.Duration) (p50, p99 float64) {
	slices.Sort(times)
	return float64(times[len(times)/2].Nanoseconds()), float64(times[len(times)*99/100].Nanoseconds())
}
