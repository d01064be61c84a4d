package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/audit"
)

// TestToolsCallAnsweredAfterItsRow calls echo from many goroutines at once
// over one stdio session, so that the audit log commits their rows in
// groups, and checks that each caller, as soon as it has its answer, finds
// its own row in packs.db through another connection than the writer's:
// committed (durable: synchronous=FULL) before the result left the server.
func TestToolsCallAnsweredAfterItsRow(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	cs := e.connectStdio(t, nil)
	if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	const callers, calls = 8, 5
	errs := make(chan error, callers*calls)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				msg := fmt.Sprintf("caller %d call %d", g, i)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: map[string]any{"message": msg}})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("%s: %v %+v", msg, err, res)
					continue
				}
				if !e.hasRow(msg) {
					errs <- fmt.Errorf("%s: answered before its audit row was committed", msg)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// hasRow reports whether an invocation row of echo-pack's echo whose body
// holds msg is in packs.db, read on the app's pool (never the audit
// writer's connection, which could see its own open transaction).
func (e *testEnv) hasRow(msg string) bool {
	for en, err := range audit.Entries(context.Background(), e.app.DB, audit.Filter{Kind: audit.KindInvocation}) {
		if err != nil {
			return false
		}
		if en.Tool == "echo" && bytes.Contains(en.Body, []byte(msg)) {
			return true
		}
	}
	return false
}

// TestToolsCallFailsWithoutItsRow makes the audit write of a call fail
// and checks the client gets a protocol error, never the tool's result
// (which it could trust though no record of it exists); once the log
// writes again, so do calls.
func TestToolsCallFailsWithoutItsRow(t *testing.T) {
	tests := []struct {
		name string
		fail func(t *testing.T, e *testEnv)
		mend func(t *testing.T, e *testEnv)
	}{
		{
			name: "the commit fails",
			fail: func(t *testing.T, e *testEnv) {
				e.exec(t, `CREATE TRIGGER refuse_audit BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
			},
			mend: func(t *testing.T, e *testEnv) { e.exec(t, `DROP TRIGGER refuse_audit`) },
		},
		{
			name: "the log is closed",
			fail: func(t *testing.T, e *testEnv) { e.audit.Close() },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, autoApproveEcho)
			cs := e.connectStdio(t, nil)
			if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
				t.Fatalf("enable_tools: %s", text)
			}
			tt.fail(t, e)
			params := &mcp.CallToolParams{Name: "echo-pack__echo", Arguments: map[string]any{"message": "unrecorded"}}
			res, err := cs.CallTool(context.Background(), params)
			if err == nil {
				t.Fatalf("tools/call answered %+v without its audit row; want a protocol error", res)
			}
			if e.hasRow("unrecorded") {
				t.Error("the refused row is in packs.db")
			}
			if tt.mend == nil {
				return
			}
			tt.mend(t, e)
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				t.Fatalf("after the log mended: %v %+v", err, res)
			}
			if !e.hasRow("unrecorded") {
				t.Error("the call after the log mended left no row")
			}
		})
	}
}

// exec runs one statement on packs.db.
func (e *testEnv) exec(t *testing.T, q string) {
	t.Helper()
	if _, err := e.app.DB.SQL().Exec(q); err != nil {
		t.Fatal(err)
	}
}
