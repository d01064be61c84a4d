package chat

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/testpg"
)

func TestMain(m *testing.M) { os.Exit(testpg.Main(m)) }

// eachBackend runs f once with harnesses whose store is a SQLite file and
// once with harnesses on a schema of a real PostgreSQL.
func eachBackend(t *testing.T, f func(t *testing.T, newHarness func(testing.TB, install) *harness)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, newHarness) })
	t.Run("postgres", func(t *testing.T) {
		f(t, func(t testing.TB, in install) *harness { return newHarnessStore(t, t.TempDir(), testpg.URL(t), in) })
	})
}

// TestList: the stored chats, the most recently active first, with the
// person's first message and the count of messages.
func TestList(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		h := newHarness(t, install{})
		srv := llmtest.NewServer(llmtest.Turn{Text: "one"}, llmtest.Turn{Text: "two"}, llmtest.Turn{Text: "three"})
		defer srv.Close()
		p := provider(t, srv, llm.ProviderOpenAI, time.Minute)
		ctx := context.Background()
		first, second := h.open(Options{}), h.open(Options{})
		for _, c := range []struct {
			s   *Session
			msg string
		}{{first, "hello\n  first"}, {second, "second"}, {first, "again"}} {
			if _, err := c.s.Send(ctx, p, c.msg, TurnOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := List(ctx, h.db, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != first.ID() || got[1].ID != second.ID() {
			t.Fatalf("List = %+v, want %s (active last) then %s", got, first.ID(), second.ID())
		}
		if got[0].FirstMessage != "hello first" || got[0].Messages != 4 || got[1].Messages != 2 || got[0].Updated.Before(got[0].Created) {
			t.Errorf("List = %+v", got)
		}
		if one, err := List(ctx, h.db, 1, nil); err != nil || len(one) != 1 || one[0].ID != first.ID() {
			t.Errorf("List with a limit of 1 = %+v, %v", one, err)
		}
	})
}

// TestRefreshTakesInAnotherReplica: two sessions of one chat, as two
// replicas of packs serve would hold it. What one adds (a message, a pack
// attached and its tools enabled) the other has after Refresh.
func TestRefreshTakesInAnotherReplica(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		h := newHarness(t, install{notesPack: nil})
		ctx := context.Background()
		a := h.open(Options{})
		b := h.open(Options{ID: a.ID()})
		if err := b.Attach(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
		if r, err := b.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{}); err != nil || r.IsError {
			t.Fatalf("enable_tools on b: %+v %v", r, err)
		}
		if err := b.appendMessages(ctx, llm.Message{Role: llm.RoleUser, Content: "from b"}); err != nil {
			t.Fatal(err)
		}
		if err := a.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got := a.Packs(); len(got) != 1 || got[0].Name != "notes" || !got[0].Enabled {
			t.Errorf("a's packs after Refresh: %+v, want notes with its tools enabled", got)
		}
		if !slices.ContainsFunc(a.Tools(), func(tl llm.Tool) bool { return tl.Name == "notes__echo" }) {
			t.Errorf("a does not offer notes' tools after Refresh")
		}
		if msgs := a.Messages(); len(msgs) == 0 || msgs[len(msgs)-1].Content != "from b" {
			t.Errorf("a's messages after Refresh: %+v", msgs)
		}
		if err := a.appendMessages(ctx, llm.Message{Role: llm.RoleUser, Content: "from a"}); err != nil {
			t.Errorf("a writes after Refresh: %v", err)
		}
	})
}
