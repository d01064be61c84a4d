package approve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/testpg"
)

func TestMain(m *testing.M) { os.Exit(testpg.Main(m)) }

// eachBackend runs f on a packs.db and on a PostgreSQL store, with
// twoHandles opening a new store of that kind twice.
func eachBackend(t *testing.T, f func(t *testing.T, twoHandles func(*testing.T) (server, person *store.DB))) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(t *testing.T) (server, person *store.DB) {
			return twoHandles(t, filepath.Join(t.TempDir(), "packs.db"))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, func(t *testing.T) (server, person *store.DB) { return twoHandles(t, testpg.URL(t)) })
	})
}

// twoHandles opens the store at target twice: the serving process and
// the person's (packs approve, the web app) are different processes; on
// PostgreSQL, different replicas.
func twoHandles(t *testing.T, path string) (server, person *store.DB) {
	t.Helper()
	var dbs [2]*store.DB
	for i := range dbs {
		db, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

func pending(inv string) capability.Pending {
	return capability.Pending{
		Invocation: inv, Chat: "chat_1", Pack: "notes", Tool: "save",
		Arguments:    json.RawMessage(`{"text":"hi","api_key":"sk-live-0123456789abcdef0123456789"}`),
		Capabilities: []capability.Name{capability.FilesystemWrite}, Touches: []string{"notes.txt"},
	}
}

// waitQueued returns the call once the waiter has queued it.
func waitQueued(t *testing.T, db *store.DB) store.QueuedCall {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
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
	t.Fatal("the call was never queued")
	return store.QueuedCall{}
}

func TestQueueWaitsForAPersonInAnotherProcess(t *testing.T) {
	eachBackend(t, func(t *testing.T, twoHandles func(*testing.T) (server, person *store.DB)) {
		for _, tt := range []struct {
			verdict string
			want    capability.Verdict
		}{
			{store.VerdictRunOnce, capability.RunOnce},
			{store.VerdictAllowChat, capability.AllowChat},
			{store.VerdictDeny, capability.Deny},
		} {
			t.Run(tt.verdict, func(t *testing.T) {
				server, person := twoHandles(t)
				w := New(server, Options{Client: "mcp:plain", Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}).Waiter()
				type answer struct {
					v   capability.Verdict
					err error
				}
				done := make(chan answer, 1)
				go func() {
					v, err := w.Approve(context.Background(), pending("inv_1"))
					done <- answer{v, err}
				}()
				q := waitQueued(t, person)
				if q.ID != "inv_1" || q.Class != "notes__save" || q.Client != "mcp:plain" || q.Touches[0] != "notes.txt" || q.Capabilities[0] != "filesystem_write" {
					t.Errorf("queued %+v, want the call's id, class, client, touches and capabilities", q)
				}
				if strings.Contains(string(q.Arguments), "sk-live") {
					t.Errorf("queued arguments %s hold the secret; they must be redacted", q.Arguments)
				}
				if err := person.DecideQueued(context.Background(), q.ID, tt.verdict, "packs-approve", time.Now()); err != nil {
					t.Fatal(err)
				}
				got := <-done
				if got.err != nil || got.v != tt.want || w.Name() != "queue:packs-approve" || w.TimedOut() {
					t.Errorf("got %v %v (name %s, timed out %v), want %v by queue:packs-approve", got.v, got.err, w.Name(), w.TimedOut(), tt.want)
				}
				err := person.DecideQueued(context.Background(), q.ID, store.VerdictRunOnce, "again", time.Now())
				if !errors.Is(err, store.ErrQueuedDecided) {
					t.Errorf("deciding twice: %v, want ErrQueuedDecided", err)
				}
			})
		}
	})
}

func TestQueueTimeoutDeniesAndRefusesLateDecision(t *testing.T) {
	eachBackend(t, func(t *testing.T, twoHandles func(*testing.T) (server, person *store.DB)) {
		server, person := twoHandles(t)
		w := New(server, Options{Timeout: 100 * time.Millisecond, Poll: 10 * time.Millisecond}).Waiter()
		start := time.Now()
		v, err := w.Approve(context.Background(), pending("inv_2"))
		if v != capability.Deny || err != nil || !w.TimedOut() {
			t.Fatalf("got %v %v timed out %v, want a denial by timeout", v, err, w.TimedOut())
		}
		if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
			t.Errorf("waited %v, want about the timeout", d)
		}
		if calls, _ := person.WaitingCalls(context.Background(), time.Now()); len(calls) != 0 {
			t.Errorf("still waiting after the timeout: %+v", calls)
		}
		err = person.DecideQueued(context.Background(), "inv_2", store.VerdictRunOnce, "late", time.Now())
		if !errors.Is(err, store.ErrQueuedExpired) {
			t.Errorf("a late decision: %v, want ErrQueuedExpired", err)
		}
		if err := person.DecideQueued(context.Background(), "inv_nope", store.VerdictRunOnce, "x", time.Now()); !errors.Is(err, store.ErrQueuedNotFound) {
			t.Errorf("an unknown id: %v, want ErrQueuedNotFound", err)
		}
	})
}

func TestQueueCancelledCallIsClosed(t *testing.T) {
	eachBackend(t, func(t *testing.T, twoHandles func(*testing.T) (server, person *store.DB)) {
		server, person := twoHandles(t)
		w := New(server, Options{Timeout: time.Minute, Poll: 10 * time.Millisecond}).Waiter()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := w.Approve(ctx, pending("inv_3"))
			done <- err
		}()
		waitQueued(t, person)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Approve after the client went away: %v, want context.Canceled", err)
		}
		q, err := person.Queued(context.Background(), "inv_3")
		if err != nil || q.Verdict != store.VerdictExpired {
			t.Errorf("row after cancel = %+v %v, want expired", q, err)
		}
	})
}

// TestQueueWakesOnNotify: on PostgreSQL a decision made through another
// handle (another replica) wakes the waiting call at once, through
// LISTEN/NOTIFY, long before its next poll.
func TestQueueWakesOnNotify(t *testing.T) {
	server, person := twoHandles(t, testpg.URL(t))
	const poll = time.Minute
	w := New(server, Options{Timeout: 2 * poll, Poll: poll}).Waiter()
	done := make(chan capability.Verdict, 1)
	go func() {
		v, _ := w.Approve(context.Background(), pending("inv_n"))
		done <- v
	}()
	q := waitQueued(t, person)
	start := time.Now()
	if err := person.DecideQueued(context.Background(), q.ID, store.VerdictRunOnce, "replica-b", time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-done:
		if v != capability.RunOnce {
			t.Errorf("verdict %v, want run_once", v)
		}
		t.Logf("woken %v after the decision", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the decision: it waits for its next poll, a minute away")
	}
}
