package chat

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// BenchmarkTurnOverhead measures the orchestrator's own work for one turn
// with one tool call: the person's message stored, the system prompt and
// tool list built and checked, the call's arguments validated, its grant
// resolved, the gate, the audit record (durable), the workspace scanned for
// artifacts, and four messages stored. The model answers in process at once
// (llmtest.Script) and the tool's run time (a trivial WASI tool in the real
// runtime) is subtracted: overhead-ns/turn is what is left.
//
// "disk" keeps the state directory on the test's temporary disk, where the
// audit log's fsync costs what the disk makes it cost; "tmpfs" keeps it in
// memory (/dev/shm), which isolates the orchestrator's own work.
func BenchmarkTurnOverhead(b *testing.B) {
	b.Run("disk", func(b *testing.B) { benchmarkTurn(b, b.TempDir()) })
	b.Run("tmpfs", func(b *testing.B) {
		dir, err := os.MkdirTemp("/dev/shm", "packs-bench-")
		if err != nil {
			b.Skip("no /dev/shm:", err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		benchmarkTurn(b, dir)
	})
}

func benchmarkTurn(b *testing.B, dir string) {
	h := newHarnessIn(b, dir, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	ctx := context.Background()
	if r, err := s.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{}); err != nil || r.IsError {
		b.Fatal(r, err)
	}
	model := llmtest.NewScript(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"hi"}`}}},
		llmtest.Turn{Text: "done"},
	)
	opt := TurnOptions{Approver: &yes{}}
	if _, err := s.Send(ctx, model, "warm up", opt); err != nil {
		b.Fatal(err)
	}
	var busy time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		r, err := s.Send(ctx, model, "echo hi", opt)
		if err != nil || len(r.Calls) != 1 || r.Calls[0].IsError {
			b.Fatal(r, err)
		}
		busy += r.Calls[0].RunTime
	}
	total := time.Since(start)
	b.ReportMetric(float64(total-busy)/float64(b.N), "overhead-ns/turn")
	b.ReportMetric(float64(busy)/float64(b.N), "tool-ns/turn")
}

// yes approves every call, as --yes does, without remembering them.
type yes struct{}

func (yes) Name() string { return "yes" }
func (yes) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}
