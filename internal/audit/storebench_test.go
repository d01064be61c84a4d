package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/testpg"
)

// BenchmarkStoreCall is the store's share of one tool call on one node:
// read the grants that apply to it (CallGrants) and append its audit row,
// durable before the call returns. PostgreSQL (fsync on, over a Unix
// socket on the same machine) is measured against SQLite (packs.db,
// synchronous FULL) in the same run: one caller at a time (serial), and
// sixteen at once (parallel), where the audit log's group commit gathers
// appends. calls/s is the figure to compare.
func BenchmarkStoreCall(b *testing.B) {
	for _, mode := range []string{"serial", "parallel"} {
		for _, be := range []struct {
			name   string
			target func(testing.TB) string
		}{
			{"postgres", func(tb testing.TB) string {
				url := testpg.DurableURL(tb)
				keyDirs.Store(url, tb.TempDir())
				return url
			}},
			{"peer=sqlite", func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "packs.db") }},
		} {
			b.Run(mode+"/"+be.name, func(b *testing.B) {
				ctx := context.Background()
				db := openDB(b, be.target(b))
				l := openLog(b, db)
				if err := db.PutGrant(ctx, "p", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
					b.Fatal(err)
				}
				call := func(i int) error {
					gs, err := db.CallGrants(ctx, "p", "chat_1", false, time.Time{})
					if err != nil || len(gs) != 1 {
						return fmt.Errorf("grants %v: %w", gs, err)
					}
					_, err = l.RecordInvocation(ctx, audit.Invocation{ID: fmt.Sprint("inv_", i), Chat: "chat_1", Pack: "p", Tool: "t", Arguments: json.RawMessage(`{"q":1}`)})
					return err
				}
				if mode == "serial" {
					for i := 0; b.Loop(); i++ {
						if err := call(i); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(16)
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						for i := 0; pb.Next(); i++ {
							if err := call(i); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			})
		}
	}
}
