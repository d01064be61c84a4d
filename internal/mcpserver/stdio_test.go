package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tetratelabs/wazero"

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
// Its peers are official-SDK servers over the same pipes, each with one
// tool, and each run in the same loop as packs, one call of each per
// iteration (each going first in turn), so that a loaded machine slows
// them alike:
//
//   - peer=sdk: a Go handler that echoes. The floor of any MCP server,
//     and issue 18's yardstick; it runs no WASM and keeps no record.
//   - peer=sdk-audit: the same, and the handler appends one audit row to
//     the same kind of log (packs.db, synchronous=FULL) before it answers:
//     the floor of any MCP server that keeps a durable record of each
//     call.
//   - peer=sdk-wasm-audit: the handler runs the same module (echo.wasm)
//     in a new plain extism/go-sdk instance, as packs does, and appends
//     the call's audit row, arguments and output, before it answers: the
//     same work as packs' call without packs (no gate, grant, integrity
//     check, pool or workspace), so packs' ratio to it is what packs' own
//     call path costs.
//
// The loop runs in the packs sub-benchmark, which reports packs' median
// (p50-ns) and 99th percentile (p99-ns); each peer's sub-benchmark reports
// its own from that same loop, with p99-ratio (packs' p99 over its own):
// internal/tools/benchtable prints the p50 ratio. A peer run alone, without
// packs, is skipped. ns/op is the mean of each one's round trips.
func BenchmarkMCPToolsCallStdio(b *testing.B) {
	e := newEnv(b, autoApproveEcho)
	packsCS := e.connectStdio(b, nil)
	if _, isErr := callText(b, packsCS, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		b.Fatal("enable_tools failed")
	}
	args := map[string]any{"message": "ping"}
	calls := []struct {
		name   string
		cs     *mcp.ClientSession
		params *mcp.CallToolParams
	}{
		{name: "packs", cs: packsCS, params: &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: args}},
		{name: "peer=sdk", cs: bareServer(b, nil, nil), params: &mcp.CallToolParams{Name: "echo", Arguments: args}},
		{name: "peer=sdk-audit", cs: bareServer(b, e.audit, nil), params: &mcp.CallToolParams{Name: "echo", Arguments: args}},
		{name: "peer=sdk-wasm-audit", cs: bareServer(b, e.audit, echoPlugin(b)), params: &mcp.CallToolParams{Name: "echo", Arguments: args}},
	}
	ctx := context.Background()
	call := func(b *testing.B, i int) time.Duration {
		start := time.Now()
		res, err := calls[i].cs.CallTool(ctx, calls[i].params)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: call failed: %v %+v", calls[i].name, err, res)
		}
		return d
	}
	// runs holds each packs run's round trips, one slice per server; a
	// peer's k-th run reports the k-th (with -count, each sub-benchmark
	// runs that many times, the peers after packs). The peers' own loop is
	// empty: their figures are those of packs' loop.
	var runs [][][]time.Duration
	b.Run(calls[0].name, func(b *testing.B) {
		for range 20 { // warm the pool and the audit log
			for i := range calls {
				call(b, i)
			}
		}
		times := make([][]time.Duration, len(calls))
		for n := 0; b.Loop(); n++ {
			for j := range calls {
				i := (n + j) % len(calls)
				times[i] = append(times[i], call(b, i))
			}
		}
		b.StopTimer()
		runs = append(runs, times)
		p50, p99 := percentiles(times[0])
		b.ReportMetric(p50, "p50-ns")
		b.ReportMetric(p99, "p99-ns")
		b.ReportMetric(mean(times[0]), "ns/op")
	})
	for i, c := range calls[1:] {
		k := 0
		b.Run(c.name, func(b *testing.B) {
			if k >= len(runs) {
				b.Skip("a peer is measured in the packs sub-benchmark's loop: run it too")
			}
			times := runs[k]
			k++
			for b.Loop() { // b.Loop makes this function run once per run of packs
			}
			_, packsP99 := percentiles(times[0])
			p50, p99 := percentiles(times[i+1])
			b.ReportMetric(p50, "p50-ns")
			b.ReportMetric(p99, "p99-ns")
			b.ReportMetric(packsP99/p99, "p99-ratio")
			b.ReportMetric(mean(times[i+1]), "ns/op")
		})
	}
}

// bareServer serves a bare official-SDK server with one tool, echo, over a
// pair of pipes and returns a client on it. With plugin set, echo runs the
// plugin's echo function in a new instance for each call and answers with
// its output; without, it answers with its arguments. With log set, echo
// appends the call's audit row, durable before it answers.
func bareServer(b *testing.B, log *audit.Log, plugin *extism.CompiledPlugin) *mcp.ClientSession {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rec := capability.CallRecord{Invocation: rand.Text(), Pack: "bare", Tool: "echo", Arguments: req.Params.Arguments, Started: time.Now(), Status: capability.StatusOK}
		out := []byte(req.Params.Arguments)
		if plugin != nil {
			in, err := plugin.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime()})
			if err != nil {
				return nil, err
			}
			rc, got, err := in.CallWithContext(ctx, "echo", out)
			in.Close(ctx)
			if err != nil || rc != 0 {
				return nil, fmt.Errorf("echo: %d %v", rc, err)
			}
			out, rec.Output = got, got
		}
		if log != nil {
			rec.Finished = time.Now()
			if err := log.RecordCall(ctx, rec); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
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

// echoPlugin compiles echo-pack's module with plain extism/go-sdk, as a
// plugin host without packs would.
func echoPlugin(b *testing.B) *extism.CompiledPlugin {
	ctx := context.Background()
	wasm, err := os.ReadFile("testdata/echo-pack/bin/echo.wasm")
	if err != nil {
		b.Fatal(err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cache.Close(ctx) })
	cp, err := extism.NewCompiledPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}}},
		extism.PluginConfig{RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true), EnableWasi: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cp.Close(ctx) })
	return cp
}

// mean returns the mean of times, in ns.
func mean(times []time.Duration) float64 {
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	return float64(sum.Nanoseconds()) / float64(len(times))
}

// percentiles returns the median and the 99th percentile of times, in ns.
func percentiles(times []time.Duration) (p50, p99 float64) {
	slices.Sort(times)
	return float64(times[len(times)/2].Nanoseconds()), float64(times[len(times)*99/100].Nanoseconds())
}
