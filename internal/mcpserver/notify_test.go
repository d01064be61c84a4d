//lint:file-ignore SA1019 these tests hold MCP logging (deprecated by SEP-2577, still in its window) to what notify.go promises

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/store"
)

// installNotify installs testdata/notify-pack, whose work tool logs at
// debug, info and warn and reports progress 1/2 then 2/2.
func (e *testEnv) installNotify(t *testing.T) {
	t.Helper()
	if _, err := e.app.Install(context.Background(), app.InstallRequest{Source: "testdata/notify-pack", Consent: app.Granting()}); err != nil {
		t.Fatal(err)
	}
	e.srv.cfg.Attach = []string{"notify-pack"}
	e.srv.cfg.Tools = []string{"notify-pack"}
}

// heard keeps the notifications a client receives, but for the barrier's
// progress, which it signals on barrier.
type heard struct {
	mu       sync.Mutex
	logs     []string
	progress []string
	barrier  chan struct{}
}

func (h *heard) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.logs = append(h.logs, fmt.Sprintf("%s %s %v", r.Params.Level, r.Params.Logger, r.Params.Data))
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == barrierToken {
				h.barrier <- struct{}{}
				return
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.progress = append(h.progress, fmt.Sprintf("%v %v/%v %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Total, r.Params.Message))
		},
	}
}

// barrierToken is the progress token of the call that tells a test that
// every notification before it was handled: the SDK's client handles a
// session's notifications one by one, in order, but may return a call's
// result before the notifications that preceded it on the wire.
const barrierToken = "barrier"

// await returns once every notification sent before it has
// been handled, by calling tick (which only reports progress) with
// barrierToken.
func (h *heard) await(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	params := &mcp.CallToolParams{Name: "tick", Arguments: map[string]any{}}
	params.SetProgressToken(barrierToken)
	if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
		t.Fatalf("tick: %+v %v", res, err)
	}
	<-h.barrier
}

// TestGuestNotifications: what a guest logs reaches the client as
// notifications/message at and above the level it set (nothing before it
// sets one), and what it reports as notifications/progress when the call
// carries a progress token.
func TestGuestNotifications(t *testing.T) {
	tests := []struct {
		name         string
		level        mcp.LoggingLevel // "" sends no logging/setLevel
		token        any
		wantLogs     []string
		wantProgress []string
	}{
		{name: "no level, no token"},
		{name: "info and a token", level: "info", token: "tok-1",
			wantLogs:     []string{"info work info: step one", "warning work warn: almost done"},
			wantProgress: []string{"tok-1 1/2 half way", "tok-1 2/2 "}},
		{name: "debug", level: "debug",
			wantLogs: []string{"debug work debug: counting", "info work info: step one", "warning work warn: almost done"}},
		{name: "errors only, numeric token", level: "error", token: 7,
			wantProgress: []string{"7 1/2 half way", "7 2/2 "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "[approval]\nauto_approve = [\"notify-pack__work\", \"notify-pack__tick\"]\n")
			e.installNotify(t)
			h := &heard{barrier: make(chan struct{}, 1)}
			// logging/setLevel is how a 2025-11-25 client sets its level;
			// TestRoundTripLogLevel covers 2026-07-28's per-request level.
			cs := e.connectVersion(t, "listener", syncProtocol, h.options())
			if tt.level != "" {
				if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: tt.level}); err != nil {
					t.Fatal(err)
				}
			}
			params := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}}
			if tt.token != nil {
				params.SetProgressToken(tt.token)
			}
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				t.Fatalf("work: %+v %v", res, err)
			}
			if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"done":true}` {
				t.Errorf("structured content %s, want the result", b)
			}
			h.await(t, cs)
			h.mu.Lock()
			defer h.mu.Unlock()
			if !slices.Equal(h.logs, tt.wantLogs) {
				t.Errorf("log notifications %q, want %q", h.logs, tt.wantLogs)
			}
			if !slices.Equal(h.progress, tt.wantProgress) {
				t.Errorf("progress notifications %q, want %q", h.progress, tt.wantProgress)
			}
		})
	}
}

// TestQueuedThenGuestProgressGrows: a call that waits in the approval
// queue reports that it waits, then its guest's progress: the client sees
// one token whose value only grows, the guest's values sent after the
// queue's.
func TestQueuedThenGuestProgressGrows(t *testing.T) {
	e := newEnv(t, "")
	e.installNotify(t)
	e.srv.cfg.ApprovalTimeout = 30 * time.Second
	person := e.personDB(t)
	type note struct {
		progress, total float64
		msg             string
	}
	notes := make(chan note, 16)
	cs := e.connect(t, "patient", &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		notes <- note{r.Params.Progress, r.Params.Total, r.Params.Message}
	}})
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}}
		p.SetProgressToken("tok-q")
		res, err := cs.CallTool(context.Background(), p)
		if err == nil && res.IsError {
			err = fmt.Errorf("work failed: %+v", res.Content)
		}
		done <- err
	}()
	next := func() note {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no progress notification")
		}
		return note{}
	}
	first := next()
	if !strings.Contains(first.msg, "waiting for your approval") {
		t.Fatalf("first progress %+v, want the queue's", first)
	}
	q := waitingCall(t, person)
	if err := person.DecideQueued(context.Background(), q.ID, store.VerdictRunOnce, "packs-approve", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := []note{first}
	for got[len(got)-1].msg != "" || len(got) < 2 {
		got = append(got, next())
	}
	queued := len(got) - 2
	want := []note{{float64(queued) + 1, float64(queued) + 2, "half way"}, {float64(queued) + 2, float64(queued) + 2, ""}}
	if g := got[queued:]; g[0] != want[0] || g[1] != want[1] {
		t.Fatalf("the guest's progress came as %+v, want %+v after %d of the queue's", g, want, queued)
	}
	for i := 1; i < len(got); i++ {
		if got[i].progress <= got[i-1].progress {
			t.Fatalf("progress %+v does not grow", got)
		}
	}
}
