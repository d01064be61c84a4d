package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/store"
)

// queueDB opens home's packs.db as the serving process would.
func queueDB(t *testing.T, home string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func enqueue(t *testing.T, db *store.DB, id, client string, ttl time.Duration) {
	t.Helper()
	now := time.Now()
	err := db.Enqueue(context.Background(), store.QueuedCall{
		ID: id, Chat: "chat_1", Client: client, Pack: "notes", Tool: "echo", Class: "notes__echo",
		Arguments: json.RawMessage(`{"text":"hi"}`), Capabilities: []string{"filesystem_read"}, Touches: []string{"notes/SKILL.md"},
		Created: now, Expires: now.Add(ttl),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestApproveCreatesNoStateDirectory(t *testing.T) {
	home := filepath.Join(t.TempDir(), "fresh")
	r := withHome(t, home, "approve").mustCode(t, exitOK)
	if r.stdout != "" || !strings.Contains(r.stderr, "no calls are waiting") {
		t.Errorf("approve on a fresh home: %+v", r)
	}
	if r := withHome(t, home, "approve", "--json").mustCode(t, exitOK); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("approve --json on a fresh home: %q, want []", r.stdout)
	}
	withHome(t, home, "approve", "inv_x").mustCode(t, exitFailure)
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("packs approve created the state directory: %v", err)
	}
}

func TestApproveListsAndDecides(t *testing.T) {
	home := t.TempDir()
	db := queueDB(t, home)

	r := withHome(t, home, "approve").mustCode(t, exitOK)
	if r.stdout != "" || !strings.Contains(r.stderr, "no calls are waiting") {
		t.Errorf("empty queue: %+v", r)
	}
	enqueue(t, db, "inv_a", "mcp:claude-ai\x1b[2J", time.Minute)
	enqueue(t, db, "inv_b", "mcp:claude-ai", time.Minute)
	enqueue(t, db, "inv_c", "mcp:claude-ai", time.Minute)
	enqueue(t, db, "inv_old", "mcp:claude-ai", -time.Second)

	r = withHome(t, home, "approve").mustCode(t, exitOK)
	for _, want := range []string{"inv_a  notes__echo  from mcp:claude-ai", "filesystem_read", "notes/SKILL.md", `{"text":"hi"}`, "packs approve ID"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list does not show %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\x1b") || strings.Contains(r.stdout, "inv_old") {
		t.Errorf("list shows a terminal escape or an expired call:\n%q", r.stdout)
	}
	var listed []store.QueuedCall
	decodeOne(t, withHome(t, home, "approve", "--json").mustCode(t, exitOK).stdout, &listed)
	if len(listed) != 3 || listed[0].ID != "inv_a" || listed[0].Touches[0] != "notes/SKILL.md" {
		t.Errorf("approve --json = %+v, want the three waiting calls", listed)
	}

	for _, tt := range []struct {
		id, verdict string
		args        []string
	}{
		{"inv_a", store.VerdictRunOnce, nil},
		{"inv_b", store.VerdictDeny, []string{"--deny"}},
		{"inv_c", store.VerdictAllowChat, []string{"--session", "--json"}},
	} {
		r := withHome(t, home, append([]string{"approve", tt.id}, tt.args...)...).mustCode(t, exitOK)
		q, err := db.Queued(context.Background(), tt.id)
		if err != nil || q.Verdict != tt.verdict || q.DecidedBy != approveBy {
			t.Errorf("%s after approve %v: %+v %v, want %s by %s", tt.id, tt.args, q, err, tt.verdict, approveBy)
		}
		if strings.Contains(r.stdout, "\x1b") {
			t.Errorf("approve printed a terminal escape: %q", r.stdout)
		}
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"approve", "inv_a"}, exitFailure, "already decided"},
		{[]string{"approve", "inv_old"}, exitFailure, "no longer waits"},
		{[]string{"approve", "inv_nope"}, exitFailure, "packs approve lists"},
		{[]string{"approve", "--deny"}, exitUsage, "name its id"},
		{[]string{"approve", "inv_x", "--deny", "--session"}, exitUsage, "exclude"},
	} {
		line := withHome(t, home, tt.args...).mustCode(t, tt.code).oneLineError(t)
		if !strings.Contains(line, tt.want) {
			t.Errorf("%v: %q, want it to say %q", tt.args, line, tt.want)
		}
	}
}

// TestMCPCallWaitsForPacksApprove: a client that cannot elicit calls a
// tool of packs mcp; the call waits until packs approve, run against the
// same state directory as another process would, approves it, then runs.
func TestMCPCallWaitsForPacksApprove(t *testing.T) {
	home := installedNotes(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	c := &cli{stdin: bufio.NewReader(inR), stdout: outW, rawStdout: outW, stderr: &errb, getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan int, 1)
	go func() {
		served <- c.run(ctx, []string{"--home", home, "mcp", "--approval-timeout", "1m"})
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "no-elicitation", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		<-served
	})
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_docs", Arguments: map[string]any{"pack_id": "notes"}})
		done <- outcome{res, err}
	}()
	var listed []store.QueuedCall
	for deadline := time.Now().Add(20 * time.Second); len(listed) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no call waits for approval; packs mcp said:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
		decodeOne(t, withHome(t, home, "approve", "--json").mustCode(t, exitOK).stdout, &listed)
	}
	select {
	case o := <-done:
		t.Fatalf("the call returned before anyone approved it: %+v %v", o.res, o.err)
	default:
	}
	if listed[0].Class != "open_docs" || listed[0].Client != "mcp:no-elicitation" {
		t.Errorf("waiting call %+v, want open_docs from mcp:no-elicitation", listed[0])
	}
	withHome(t, home, "approve", listed[0].ID).mustCode(t, exitOK)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call still waits after packs approve")
	}
	if o.err != nil || o.res.IsError {
		t.Fatalf("open_docs after approval: %+v %v", o.res, o.err)
	}
	r := withHome(t, home, "audit", "--json").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, `"approver":"queue:packs-approve"`) || !strings.Contains(r.stdout, listed[0].ID) {
		t.Errorf("the audit log does not record the approval by packs approve:\n%s", r.stdout)
	}
}
