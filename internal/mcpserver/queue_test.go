package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/store"
)

// personDB opens the env's packs.db a second time, as `packs approve` or
// the web app does from another process.
func (e *testEnv) personDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), e.app.Home.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// waitingCall returns the one call waiting in the queue.
func waitingCall(t *testing.T, db *store.DB) store.QueuedCall {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		calls, err := db.WaitingCalls(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) == 1 {
			return calls[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no call waits in the approval queue")
	return store.QueuedCall{}
}

type callOutcome struct {
	text  string
	isErr bool
	err   error
}

// callAsync starts a tools/call and returns where its outcome arrives.
func callAsync(cs *mcp.ClientSession, name string, args any) <-chan callOutcome {
	out := make(chan callOutcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			out <- callOutcome{err: err}
			return
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		out <- callOutcome{text: b.String(), isErr: res.IsError}
	}()
	return out
}

func TestQueuedCallWaitsForAPersonElsewhere(t *testing.T) {
	for _, tt := range []struct {
		name, verdict string
		runs          bool
		approver      string
	}{
		{"approved once", store.VerdictRunOnce, true, "queue:packs-approve"},
		{"allowed for the session", store.VerdictAllowChat, true, "queue:packs-approve"},
		{"denied", store.VerdictDeny, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.srv.cfg.ApprovalTimeout = 30 * time.Second
			person := e.personDB(t)
			cs := e.connect(t, "plain-client", nil)
			done := callAsync(cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
			q := waitingCall(t, person)
			select {
			case o := <-done:
				t.Fatalf("the call returned before anyone decided it: %+v", o)
			default:
			}
			if q.Class != "open_docs" || q.Client != "mcp:plain-client" || q.Pack != "echo-pack" || len(q.Touches) == 0 || !strings.Contains(string(q.Arguments), "echo-pack") {
				t.Errorf("queued %+v, want open_docs of echo-pack by mcp:plain-client with what it touches", q)
			}
			if err := person.DecideQueued(context.Background(), q.ID, tt.verdict, "packs-approve", time.Now()); err != nil {
				t.Fatal(err)
			}
			var o callOutcome
			select {
			case o = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the call still waits after the person decided")
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			if tt.runs != !o.isErr || (tt.runs && !strings.Contains(o.text, "echo-pack__echo")) {
				t.Fatalf("open_docs = %q (error %v), want it to run: %v", o.text, o.isErr, tt.runs)
			}
			if !tt.runs && strings.Contains(o.text, "packs approve") {
				t.Errorf("the person's denial %q tells the model how to get approval", o.text)
			}
			rows := e.auditRows(t)
			if len(rows) != 1 || rows[0]["invocation"] != q.ID {
				t.Fatalf("audit rows = %v, want one for invocation %s", rows, q.ID)
			}
			if tt.runs && (rows[0]["approver"] != tt.approver || rows[0]["decision"] != tt.verdict || rows[0]["status"] != "ok") {
				t.Errorf("audit row %v, want %s by %s", rows[0], tt.verdict, tt.approver)
			}
			if !tt.runs && rows[0]["status"] != "denied" {
				t.Errorf("audit row %v, want denied", rows[0])
			}
			if tt.verdict == store.VerdictAllowChat {
				text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
				if isErr {
					t.Errorf("a second open_docs after allow for the session: %s", text)
				}
			}
		})
	}
}

func TestQueuedCallTimesOutWithHowToApprove(t *testing.T) {
	e := newEnv(t, "")
	person := e.personDB(t)
	cs := e.connect(t, "slow-person", nil)
	start := time.Now()
	text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
	if !isErr {
		t.Fatalf("open_docs ran with nobody approving it: %s", text)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("denied after %v, before the approval timeout", d)
	}
	var v struct {
		Error struct{ Kind, Approve string }
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil || v.Error.Kind != "denied" {
		t.Fatalf("denial %q is not a JSON denial (%v)", text, err)
	}
	for _, want := range []string{"packs approve", "packs serve", "300ms", "slow-person", `auto_approve = ["open_docs"]`} {
		if !strings.Contains(v.Error.Approve, want) {
			t.Errorf("denial %q does not say %q", v.Error.Approve, want)
		}
	}
	if calls, _ := person.WaitingCalls(context.Background(), time.Now()); len(calls) != 0 {
		t.Errorf("calls still waiting after the timeout: %+v", calls)
	}
}

func TestQueueOffDeniesAtOnce(t *testing.T) {
	e := newEnv(t, "")
	e.srv.cfg.ApprovalTimeout = -1
	cs := e.connect(t, "plain-client", nil)
	text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "echo-pack"})
	if !isErr || !strings.Contains(text, "auto_approve") || strings.Contains(text, "packs approve") {
		t.Errorf("open_docs with the queue off = %q (error %v), want an immediate denial that names the policy", text, isErr)
	}
}

// TestQueuedCallReportsProgress: a client that sent a progress token is
// told at once that its call waits, and how the person approves it.
func TestQueuedCallReportsProgress(t *testing.T) {
	e := newEnv(t, "")
	e.srv.cfg.ApprovalTimeout = 30 * time.Second
	person := e.personDB(t)
	progress := make(chan string, 8)
	cs := e.connect(t, "patient", &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		progress <- req.Params.Message
	}})
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "open_docs", Arguments: map[string]any{"pack_id": "echo-pack"}}
		p.SetProgressToken("tok-1")
		_, err := cs.CallTool(context.Background(), p)
		done <- err
	}()
	q := waitingCall(t, person)
	select {
	case msg := <-progress:
		if !strings.Contains(msg, "packs approve "+q.ID) {
			t.Errorf("progress message %q does not say how to approve %s", msg, q.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notification while the call waits")
	}
	if err := person.DecideQueued(context.Background(), q.ID, store.VerdictRunOnce, "packs-approve", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
