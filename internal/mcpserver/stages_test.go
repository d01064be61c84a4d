package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/packs"
)

// BenchmarkMCPToolsCallStages times, in one loop so that a loaded machine
// slows them alike, the parts of BenchmarkMCPToolsCallStdio's round trip
// that a faster call path could not remove, beside the whole: what is left
// once the avoidable cost is gone, and why. Each is reported as its median
// (-p50-ns) and 99th percentile (-p99-ns):
//
//   - fsync: 4 KiB written to a file in the state directory and synced,
//     the disk's own floor under every durable record;
//   - audit: one call's audit row appended, durable (packs.db,
//     synchronous=FULL, the group commit with nothing to group);
//   - grants: the person's grants for echo-pack read (Grants.PeekGrants:
//     whether it is disabled and its grants, one statement), right after
//     an audit append as in a call, so from a page cache the append made
//     stale;
//   - integrity: the installed pack's files checked against packs.lock
//     (packs.ContentCache.Verify, warm: one lstat per file);
//   - chat: the whole call without MCP (chat.Session.Call: the pipeline,
//     the instance, the audit row);
//   - mcp: the whole round trip over stdio, as BenchmarkMCPToolsCallStdio.
func BenchmarkMCPToolsCallStages(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b, autoApproveEcho)
	cs := e.connectStdio(b, nil)
	if _, isErr := callText(b, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		b.Fatal("enable_tools failed")
	}
	sess, err := chat.Open(ctx, e.srv.cfg.Chat, chat.Options{Attach: []string{"echo-pack"}})
	if err != nil {
		b.Fatal(err)
	}
	if r, err := sess.Call(ctx, chat.ToolEnableTools, json.RawMessage(`{"pack_id":"echo-pack"}`), nil); err != nil || r.IsError {
		b.Fatalf("enable_tools: %v %s", err, r.Content)
	}
	entry, err := e.app.Home.Entry("echo-pack")
	if err != nil {
		b.Fatal(err)
	}
	dir, err := e.app.Home.PackDir("echo-pack")
	if err != nil {
		b.Fatal(err)
	}
	ref := capability.PackRef{Name: "echo-pack", Digest: entry.Integrity}
	grants := app.Grants{DB: e.app.DB, Home: e.app.Home}
	var content packs.ContentCache
	f, err := os.Create(filepath.Join(e.app.Home.Dir(), "fsync-bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	args := json.RawMessage(`{"message":"ping"}`)
	params := &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: map[string]any{"message": "ping"}}

	stages := []struct {
		name  string
		run   func() error
		times []time.Duration
	}{
		{name: "fsync", run: func() error {
			if _, err := f.WriteAt(page, 0); err != nil {
				return err
			}
			return f.Sync()
		}},
		{name: "chat", run: func() error {
			r, err := sess.Call(ctx, "echo-pack__echo", args, nil)
			if err == nil && r.IsError {
				b.Fatalf("chat call: %s", r.Content)
			}
			return err
		}},
		{name: "audit", run: func() error {
			now := time.Now()
			return e.audit.RecordCall(ctx, capability.CallRecord{Invocation: "inv_bench", Pack: "echo-pack", Tool: "echo", Arguments: args,
				Started: now, Finished: now, Status: capability.StatusOK})
		}},
		{name: "grants", run: func() error {
			_, err := grants.PeekGrants(ctx, ref, "")
			return err
		}},
		{name: "mcp", run: func() error {
			r, err := cs.CallTool(ctx, params)
			if err == nil && r.IsError {
				b.Fatalf("mcp call: %+v", r)
			}
			return err
		}},
		{name: "integrity", run: func() error {
			_, err := content.Verify("echo-pack", dir, entry.Integrity)
			return err
		}},
	}
	for range 20 {
		for i := range stages {
			if err := stages[i].run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		// Each goes first in turn. The chat call and the MCP call, which
		// take instances from the same pool, are kept apart: the one that
		// follows the other closely waits for the pool to refill.
		for j := range stages {
			i := (n + j) % len(stages)
			start := time.Now()
			err := stages[i].run()
			stages[i].times = append(stages[i].times, time.Since(start))
			if err != nil {
				b.Fatalf("%s: %v", stages[i].name, err)
			}
		}
	}
	b.StopTimer()
	for _, s := range stages {
		p50, p99 := percentiles(s.times)
		b.ReportMetric(p50, s.name+"-p50-ns")
		b.ReportMetric(p99, s.name+"-p99-ns")
	}
}
