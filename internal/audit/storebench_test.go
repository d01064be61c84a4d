package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
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

// BenchmarkReplicaCalls is the same per-call work spread over two
// replicas on one PostgreSQL (two pools, two audit logs, one chain under
// one lock) against one replica doing it all, sixteen callers either way:
// calls/s, and p99-ns, the 99th percentile of one call's time.
func BenchmarkReplicaCalls(b *testing.B) {
	for _, n := range []struct {
		name     string
		replicas int
	}{{"two", 2}, {"peer=one", 1}} {
		b.Run(n.name, func(b *testing.B) {
			ctx := context.Background()
			url := testpg.DurableURL(b)
			keyDirs.Store(url, b.TempDir())
			type replica struct {
				call func(i int) error
			}
			var rs []replica
			for range n.replicas {
				db := openDB(b, url)
				l := openLog(b, db)
				rs = append(rs, replica{func(i int) error {
					if _, err := db.CallGrants(ctx, "p", "chat_1", false, time.Time{}); err != nil {
						return err
					}
					_, err := l.RecordInvocation(ctx, audit.Invocation{ID: fmt.Sprint("inv_", i), Chat: "chat_1", Pack: "p", Tool: "t", Arguments: json.RawMessage(`{"q":1}`)})
					return err
				}})
			}
			var mu sync.Mutex
			var durs []time.Duration
			var next atomic.Int64
			b.SetParallelism(8) // 16 callers on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rs[int(next.Add(1))%len(rs)]
				var mine []time.Duration
				for i := 0; pb.Next(); i++ {
					start := time.Now()
					if err := r.call(i); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(start))
				}
				mu.Lock()
				durs = append(durs, mine...)
				mu.Unlock()
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			if len(durs) > 0 {
				slices.Sort(durs)
				b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
			}
			rep := verify(b, openDB(b, url))
			if !rep.OK() {
				b.Fatalf("the chain of two replicas: %+v", rep)
			}
		})
	}
}
