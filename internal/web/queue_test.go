package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/store"
)

// TestQueueDecidedFromTheWebApp: a call of another process (packs mcp, a
// client that cannot elicit) waits in packs.db; the web app lists it and
// the person's POST decides it; the waiting process sees the verdict.
func TestQueueDecidedFromTheWebApp(t *testing.T) {
	for _, tt := range []struct {
		name, path string
		body       any
		want       capability.Verdict
	}{
		{"run once", "approve", nil, capability.RunOnce},
		{"allow for the session", "approve", map[string]bool{"always": true}, capability.AllowChat},
		{"deny", "deny", nil, capability.Deny},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{noModel: true})
			other, err := store.Open(context.Background(), e.app.Home.DBPath())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			w := approve.New(other, approve.Options{Client: "mcp:plain", Timeout: 20 * time.Second, Poll: 10 * time.Millisecond}).Waiter()
			got := make(chan capability.Verdict, 1)
			go func() {
				v, err := w.Approve(context.Background(), capability.Pending{Invocation: "inv_web", Pack: "notes", Tool: "echo",
					Arguments: json.RawMessage(`{"text":"hi"}`), Touches: []string{"notes/SKILL.md"}})
				if err != nil {
					t.Errorf("Approve: %v", err)
				}
				got <- v
			}()
			var list struct {
				Items []store.QueuedCall
				Total int
			}
			for deadline := time.Now().Add(10 * time.Second); list.Total == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("GET /v1/queue never listed the waiting call")
				}
				e.must(http.StatusOK, "GET", "/v1/queue", nil, &list)
			}
			if q := list.Items[0]; q.ID != "inv_web" || q.Class != "notes__echo" || q.Client != "mcp:plain" || q.Touches[0] != "notes/SKILL.md" {
				t.Errorf("listed %+v", q)
			}
			e.must(http.StatusOK, "POST", "/v1/queue/inv_web/"+tt.path, tt.body, nil)
			select {
			case v := <-got:
				if v != tt.want || (v != capability.Deny && w.Name() != "queue:web") {
					t.Errorf("verdict %v by %s, want %v by queue:web", v, w.Name(), tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting call never saw the web app's decision")
			}
			if code := e.do("POST", "/v1/queue/inv_web/approve", nil, nil); code != http.StatusConflict {
				t.Errorf("deciding twice: %d, want 409", code)
			}
			if code := e.do("POST", "/v1/queue/inv_nope/deny", nil, nil); code != http.StatusNotFound {
				t.Errorf("an unknown id: %d, want 404", code)
			}
			if code := e.doAuth("", "GET", "/v1/queue", nil, nil); code != http.StatusUnauthorized {
				t.Errorf("GET /v1/queue without the token: %d, want 401", code)
			}
		})
	}
}
