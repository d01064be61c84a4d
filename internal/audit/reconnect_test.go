package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/testpg"
)

// TestWriterSurvivesLostConnection: the PostgreSQL server ends the audit
// writer's connection (a restart, a failover, an administrator). The
// append in flight may fail, and then says so; the appends after it
// succeed on a new connection, and the chain still verifies with every
// acknowledged row in it.
func TestWriterSurvivesLostConnection(t *testing.T) {
	url := testpg.URL(t)
	keyDirs.Store(url, t.TempDir())
	db := openDB(t, url)
	l := openLog(t, db)
	ctx := context.Background()
	record := func(i int) (int64, error) {
		return l.RecordInvocation(ctx, audit.Invocation{ID: fmt.Sprint("inv_", i), Pack: "p", Tool: "t", Arguments: json.RawMessage(`{}`)})
	}
	acked := map[int64]string{}
	for i := range 3 {
		seq, err := record(i)
		if err != nil {
			t.Fatal(err)
		}
		acked[seq] = fmt.Sprint("inv_", i)
	}
	// End every other session on this database: the writer's among them.
	admin := openDB(t, url)
	if _, err := admin.SQL().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := 3; i < 10; i++ {
		seq, err := record(i)
		if err != nil {
			failed++
			continue
		}
		acked[seq] = fmt.Sprint("inv_", i)
	}
	if failed > 1 {
		t.Fatalf("%d appends failed after the connection was lost, want at most the first", failed)
	}
	stored := map[int64]string{}
	for _, e := range entries(t, admin, audit.Filter{}) {
		stored[e.Seq] = e.Invocation
	}
	for seq, id := range acked {
		if stored[seq] != id {
			t.Errorf("acknowledged seq %d (%s) is %q in the log", seq, id, stored[seq])
		}
	}
	if rep := verify(t, admin); !rep.OK() {
		t.Errorf("chain after the lost connection: %+v", rep)
	}
}
