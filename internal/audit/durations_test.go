package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
)

// TestCallDurationsKept: an invocation row keeps the gate's wait and the
// call's run, in its hashed body and in its columns (migration 12), for
// packs audit, its --json and the export; the text line says "waited …
// for you, ran …", and a row approved by attach says so.
func TestCallDurationsKept(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	l := openLog(t, db)
	start := time.Now()
	if err := l.RecordCall(ctx, capability.CallRecord{Invocation: "inv-1", Chat: "chat_1", Pack: "json-tools", Tool: "query",
		Approver: "web", Verdict: capability.RunOnce, Status: capability.StatusOK, Started: start, Finished: start.Add(12*time.Second + 50*time.Millisecond),
		Waited: 12 * time.Second, Ran: 41*time.Millisecond + 250*time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordCall(ctx, capability.CallRecord{Invocation: "inv-2", Chat: "chat_1", Pack: "json-tools", Tool: "open_docs",
		Approver: capability.AttachApprover, ByAttach: true, Verdict: capability.RunOnce, Status: capability.StatusOK,
		Started: start, Finished: start.Add(time.Millisecond), Waited: 20 * time.Microsecond, Ran: 300 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	got := entries(t, db, audit.Filter{Kind: audit.KindInvocation})
	if len(got) != 2 {
		t.Fatalf("got %d invocation rows, want 2", len(got))
	}
	if got[0].WaitedUS != 12_000_000 || got[0].RanUS != 41_250 {
		t.Errorf("columns: waited %d µs, ran %d µs; want 12000000, 41250", got[0].WaitedUS, got[0].RanUS)
	}
	var body struct {
		WaitedMS float64 `json:"waited_ms"`
		RanMS    float64 `json:"ran_ms"`
		ByAttach bool    `json:"by_attach"`
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil || body.WaitedMS != 12000 || body.RanMS != 41.25 {
		t.Errorf("body: %+v, %v; want waited_ms 12000, ran_ms 41.25", body, err)
	}
	if err := json.Unmarshal(got[1].Body, &body); err != nil || !body.ByAttach {
		t.Errorf("the attach row's body does not say by_attach: %s", got[1].Body)
	}
	var text bytes.Buffer
	if err := audit.WriteText(&text, audit.Entries(ctx, db, audit.Filter{Kind: audit.KindInvocation})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if !strings.Contains(lines[0], "waited 12 s for you, ran 41 ms") {
		t.Errorf("text line %q does not say the wait and the run", lines[0])
	}
	if !strings.Contains(lines[1], "approved by attach (run_once), by attaching the pack to the chat") || strings.Contains(lines[1], "waited") {
		t.Errorf("text line %q: want approved by attach, and no wait", lines[1])
	}
	var export bytes.Buffer
	if _, err := audit.Export(ctx, db, &export, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(export.String(), `"waited_us":12000000`) || !strings.Contains(export.String(), `"waited_ms":12000`) {
		t.Errorf("the export lacks the wait: %s", export.String())
	}
	if rep, err := audit.VerifyJSONL(&export); err != nil || !rep.OK() {
		t.Errorf("the export does not verify: %+v, %v", rep, err)
	}
	if rep := verify(t, db); !rep.OK() {
		t.Fatalf("untouched log: %+v", rep.Breaks)
	}
	// The columns are outside the hash: one edited to disagree with the
	// body is a break all the same.
	tamper(t, db, `UPDATE audit SET waited_us = 5 WHERE invocation = 'inv-1'`)
	rep := verify(t, db)
	if len(rep.Breaks) != 1 || rep.Breaks[0].Kind != audit.Edited || rep.Breaks[0].Seq != got[0].Seq {
		t.Errorf("breaks after editing waited_us: %v, want one edited at seq %d", rep.Breaks, got[0].Seq)
	}
}
