package chat

import (
	"context"
	"os"
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
		got, err := List(ctx, h.db, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != first.ID() || got[1].ID != second.ID() {
			t.Fatalf("List = %+v, want %s (active last) then %s", got, first.ID(), second.ID())
		}
		if got[0].FirstMessage != "hello first" || got[0].Messages != 4 || got[1].Messages != 2 || got[0].Updated.Before(got[0].Created) {
			t.Errorf("List = %+v", got)
		}
		if one, err := List(ctx, h.db, 1); err != nil || len(one) != 1 || one[0].ID != first.ID() {
			t.Errorf("List with a limit of 1 = %+v, %v", one, err)
		}
	})
}
