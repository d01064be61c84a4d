package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
)

// BenchmarkServe is packs serve under load: clients=N has N clients, each
// with its own chat, calling the notes pack's echo tool through POST
// /v1/chats/{id}/calls as fast as answers come back, over loopback, against
// the real runtime (a fresh instance per call) and the real audit log
// (SQLite, synchronous=FULL). It reports calls/s, p50-ns and p99-ns of the
// answers, and errors (answers other than 200 with the tool's result).
// Every acknowledged call must have its invocation row in the audit log,
// read through a second connection to the database once the load is over,
// and the chain must verify: the benchmark fails otherwise.
func BenchmarkServe(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			e := newEnv(b, envOptions{noModel: true})
			e.install()
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
			defer hc.CloseIdleConnections()
			chats := make([]string, clients)
			for i := range chats {
				var c chatJSON
				e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
				e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}, nil)
				chats[i] = c.ID
			}
			body, err := json.Marshal(map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}})
			if err != nil {
				b.Fatal(err)
			}
			call := func(chat string) (string, error) {
				req, err := http.NewRequest("POST", e.url+"/v1/chats/"+chat+"/calls", bytes.NewReader(body))
				if err != nil {
					return "", err
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.token)
				resp, err := hc.Do(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				raw, err := io.ReadAll(resp.Body)
				if err != nil {
					return "", err
				}
				if resp.StatusCode != http.StatusOK {
					return "", fmt.Errorf("status %d: %s", resp.StatusCode, raw)
				}
				var r toolResultJSON
				if err := json.Unmarshal(raw, &r); err != nil {
					return "", err
				}
				if r.IsError || r.Invocation == "" {
					return "", fmt.Errorf("the call failed: %s", raw)
				}
				return r.Invocation, nil
			}
			if _, err := call(chats[0]); err != nil { // compiles, starts the pool
				b.Fatal(err)
			}

			var (
				next   atomic.Int64
				errs   atomic.Int64
				mu     sync.Mutex
				durs   = make([]time.Duration, 0, b.N)
				acked  = make([]string, 0, b.N)
				first  error
				wg     sync.WaitGroup
				failed = func(err error) {
					errs.Add(1)
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			)
			b.ResetTimer()
			begin := time.Now()
			for _, chat := range chats {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					var ids []string
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						id, err := call(chat)
						if err != nil {
							failed(err)
							continue
						}
						mine = append(mine, time.Since(t0))
						ids = append(ids, id)
					}
					mu.Lock()
					durs = append(durs, mine...)
					acked = append(acked, ids...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(begin)
			b.StopTimer()

			b.ReportMetric(float64(len(acked))/elapsed.Seconds(), "calls/s")
			slices.Sort(durs)
			if len(durs) > 0 {
				b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
			}
			b.ReportMetric(float64(errs.Load()), "errors")
			if first != nil {
				b.Errorf("%d calls failed; the first: %v", errs.Load(), first)
			}
			checkAudited(b, e, acked)
		})
	}
}

// checkAudited fails b unless every invocation in acked has its row in the
// audit log, as read through a connection of its own, and the chain holds.
func checkAudited(b *testing.B, e *env, acked []string) {
	b.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, e.app.Home.DBPath())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows := map[string]bool{}
	for en, err := range audit.Entries(ctx, db, audit.Filter{Pack: "notes", Kind: audit.KindInvocation}) {
		if err != nil {
			b.Fatal(err)
		}
		rows[en.Invocation] = true
	}
	missing := 0
	for _, id := range acked {
		if !rows[id] {
			missing++
		}
	}
	if missing > 0 {
		b.Fatalf("%d of %d acknowledged calls have no audit row", missing, len(acked))
	}
	rep, err := audit.Verify(ctx, db)
	if err != nil {
		b.Fatalf("audit chain: %v (%+v)", err, rep)
	}
}
