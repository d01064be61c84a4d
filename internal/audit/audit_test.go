package audit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/testpg"
)

func openDB(t testing.TB, path string) *store.DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "packs.db")
	}
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if dir, ok := keyDirs.Load(path); ok {
		keyDirs.Store(db, dir)
	}
	return db
}

func TestMain(m *testing.M) { os.Exit(testpg.Main(m)) }

// keyDirs holds, by store URL and by *store.DB, where the audit key of a
// PostgreSQL store lives in a test: such a store is no file beside which
// it could be found.
var keyDirs sync.Map

// keyDirOf is the key directory of db: "" for a SQLite file (beside it).
func keyDirOf(db *store.DB) string {
	dir, _ := keyDirs.Load(db)
	s, _ := dir.(string)
	return s
}

// eachBackend runs f once on SQLite and once on PostgreSQL; target makes
// a new, empty store of that kind and returns what openDB opens.
func eachBackend(t *testing.T, f func(t *testing.T, target func(testing.TB) string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(t testing.TB) string { return filepath.Join(t.TempDir(), "packs.db") })
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, func(t testing.TB) string {
			url := testpg.URL(t)
			keyDirs.Store(url, t.TempDir())
			return url
		})
	})
}

func openLog(t testing.TB, db *store.DB) *audit.Log {
	t.Helper()
	l, err := audit.Open(context.Background(), db, audit.Options{KeyDir: keyDirOf(db)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func entries(t testing.TB, db *store.DB, f audit.Filter) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for e, err := range audit.Entries(context.Background(), db, f) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func verify(t testing.TB, db *store.DB) audit.Report {
	t.Helper()
	rep, err := audit.Verify(context.Background(), db)
	if dir := keyDirOf(db); dir != "" {
		rep, err = audit.VerifyWithKey(context.Background(), db, dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func exercise(i int) capability.Exercise {
	return capability.Exercise{Pack: "p", Tool: "t", Invocation: fmt.Sprint("inv-", i), Capability: capability.Network,
		Resource: fmt.Sprintf("https://h%d.example/x", i), Allowed: i%2 == 0, Layer: capability.LayerUser, Reason: "r", Time: time.Now()}
}

func TestRecordAndRead(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		ctx := context.Background()
		db := openDB(t, target(t))
		l := openLog(t, db)
		if err := l.RecordExercise(exercise(0)); err != nil {
			t.Fatal(err)
		}
		start := time.Now().Add(-50 * time.Millisecond)
		inv := audit.Invocation{
			ID: "inv-1", Chat: "c1", Pack: "web-reader", Tool: "fetch",
			Arguments: json.RawMessage(`{"url":"https://api.example.com","headers":{"Authorization":"Bearer abcdefgh"},"api_key":"k-123456","note":"` + strings.Repeat("x", 1000) + `"}`),
			Output:    []byte(`{"ok":true}`),
			Started:   start, Finished: start.Add(42 * time.Millisecond), ExitCode: 0, Status: audit.StatusOK,
			Artifacts: []audit.Artifact{{Path: "out/page.md", MIME: "text/markdown", Size: 1234}},
		}
		p := &approver{v: capability.AllowChat}
		a, err := capability.NewGate(p).Decide(ctx, capability.Pending{Invocation: "inv-1", Chat: "c1", Pack: "web-reader", Tool: "fetch"})
		if err != nil {
			t.Fatal(err)
		}
		inv.Approved(a)
		seq, err := l.RecordInvocation(ctx, inv)
		if err != nil || seq != 2 {
			t.Fatalf("RecordInvocation = %d, %v; want seq 2", seq, err)
		}
		got := entries(t, db, audit.Filter{})
		if len(got) != 2 || got[0].Kind != audit.KindExercise || got[1].Kind != audit.KindInvocation {
			t.Fatalf("entries = %+v", got)
		}
		if got[0].PrevHash != strings.Repeat("0", 64) || got[1].PrevHash != got[0].Hash {
			t.Error("rows are not chained")
		}
		e := got[1]
		if e.Pack != "web-reader" || e.Tool != "fetch" || e.Invocation != "inv-1" || !e.At.Equal(inv.Finished.UTC().Truncate(time.Nanosecond)) {
			t.Errorf("invocation row = %+v", e)
		}
		var body map[string]any
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatal(err)
		}
		args := body["arguments"].(map[string]any)
		if args["api_key"] != audit.Redacted || args["headers"].(map[string]any)["Authorization"] != audit.Redacted {
			t.Errorf("secrets stored: %v", args)
		}
		if note := args["note"].(string); len(note) > 300 || !strings.Contains(note, "[cut 744 bytes]") {
			t.Errorf("long value stored whole: %d bytes", len(note))
		}
		if strings.Contains(string(e.Body), "abcdefgh") || strings.Contains(string(e.Body), "k-123456") {
			t.Errorf("a secret reached the database: %s", e.Body)
		}
		for k, want := range map[string]any{"approver": "terminal", "decision": "allow_chat", "status": "ok", "duration_ms": 42.0, "chat": "c1",
			"input_sha256": sha(inv.Arguments), "output_sha256": sha(inv.Output)} {
			if body[k] != want {
				t.Errorf("body[%q] = %v, want %v", k, body[k], want)
			}
		}
		if arts := body["artifacts"].([]any); len(arts) != 1 || arts[0].(map[string]any)["path"] != "out/page.md" {
			t.Errorf("artifacts = %v", body["artifacts"])
		}
		if rep := verify(t, db); !rep.OK() || rep.Rows != 2 || rep.HeadSeq != 2 || rep.HeadHash != e.Hash {
			t.Errorf("Verify = %+v", rep)
		}
	})
}

type approver struct{ v capability.Verdict }

func (a *approver) Name() string { return "terminal" }
func (a *approver) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return a.v, nil
}

// TestConcurrentAppend is the hammer: eight goroutines append at once; every
// row gets its own seq, none is lost, and the chain holds.
func TestConcurrentAppend(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		db := openDB(t, target(t))
		l := openLog(t, db)
		const workers, each = 8, 150
		seqs := make([][]int64, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					var seq int64
					var err error
					if i%3 == 0 {
						seq, err = l.RecordInvocation(context.Background(), audit.Invocation{ID: fmt.Sprintf("w%d-%d", w, i), Pack: fmt.Sprint("pack", w), Tool: "t", Arguments: json.RawMessage(`{}`)})
					} else {
						err = l.RecordExercise(exercise(w*each + i))
					}
					if err != nil {
						t.Errorf("worker %d: %v", w, err)
						return
					}
					if seq != 0 {
						seqs[w] = append(seqs[w], seq)
					}
				}
			})
		}
		wg.Wait()
		rep := verify(t, db)
		if !rep.OK() || rep.Rows != workers*each {
			t.Fatalf("Verify = %+v, want %d rows and no breaks", rep, workers*each)
		}
		var all []int64
		for _, s := range seqs {
			if !slices.IsSorted(s) {
				t.Errorf("one goroutine's seqs are out of order: %v", s)
			}
			all = append(all, s...)
		}
		slices.Sort(all)
		if len(slices.Compact(all)) != len(all) {
			t.Error("two appends got the same seq")
		}
	})
}

// TestTwoWriters shares one store between two Logs on two pools, as two
// packs processes (or replicas on one PostgreSQL) would: the head is read
// under the chain's lock inside each write transaction, so the chain stays
// one, without gaps.
func TestTwoWriters(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		path := target(t)
		db1, db2 := openDB(t, path), openDB(t, path)
		l1, l2 := openLog(t, db1), openLog(t, db2)
		var wg sync.WaitGroup
		for _, l := range []*audit.Log{l1, l2, l1, l2, l1, l2, l1, l2} {
			wg.Go(func() {
				for i := range 100 {
					if err := l.RecordExercise(exercise(i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if rep := verify(t, db1); !rep.OK() || rep.Rows != 800 || rep.HeadSeq != 800 {
			t.Fatalf("Verify = %+v", rep)
		}
	})
}

func TestClose(t *testing.T) {
	db := openDB(t, "")
	before := runtime.NumGoroutine()
	l, err := audit.Open(context.Background(), db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RecordExercise(exercise(1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.RecordExercise(exercise(2)); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("append after Close: %v, want ErrClosed", err)
	}
	if _, err := l.RecordInvocation(context.Background(), audit.Invocation{ID: "x"}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("invocation after Close: %v, want ErrClosed", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

func TestAppendCanceled(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		db := openDB(t, target(t))
		l := openLog(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.RecordInvocation(ctx, audit.Invocation{ID: "x"}); !errors.Is(err, context.Canceled) {
			t.Errorf("canceled append: %v", err)
		}
	})
}

func TestAppendFailsWithoutSchema(t *testing.T) {
	db := openDB(t, "")
	l := openLog(t, db)
	if _, err := db.SQL().Exec(`DROP TABLE audit`); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordExercise(exercise(1)); err == nil {
		t.Error("append to a dropped table: nil error")
	}
	if _, err := db.SQL().Exec(`DROP TABLE audit_head`); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Open(context.Background(), db, audit.Options{}); err == nil {
		t.Error("Open without the audit tables: nil error")
	}
}

// tamper edits packs.db behind the log's back.
func tamper(t *testing.T, db *store.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.SQL().Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		tests := []struct {
			name   string
			stmts  []string
			rehash int64 // re-hash this seq after tampering, as a careful attacker would
			want   []audit.Break
		}{
			{name: "edit a body", stmts: []string{`UPDATE audit SET body = replace(body, '"allowed":false', '"allowed":true') WHERE seq = 4`},
				want: []audit.Break{{Seq: 4, Kind: audit.Edited}}},
			{name: "edit the pack column", stmts: []string{`UPDATE audit SET pack = 'other' WHERE seq = 7`},
				want: []audit.Break{{Seq: 7, Kind: audit.Edited}}},
			{name: "edit and re-hash", stmts: []string{`UPDATE audit SET body = replace(body, '"allowed":false', '"allowed":true') WHERE seq = 4`}, rehash: 4,
				want: []audit.Break{{Seq: 4, Kind: audit.Edited}}},
			{name: "delete a row", stmts: []string{`DELETE FROM audit WHERE seq = 5`},
				want: []audit.Break{{Seq: 5, Kind: audit.Deleted}}},
			{name: "delete three rows", stmts: []string{`DELETE FROM audit WHERE seq BETWEEN 3 AND 5`},
				want: []audit.Break{{Seq: 3, Kind: audit.Deleted}}},
			{name: "delete the first row", stmts: []string{`DELETE FROM audit WHERE seq = 1`},
				want: []audit.Break{{Seq: 1, Kind: audit.Deleted}}},
			{name: "cut off the end", stmts: []string{`DELETE FROM audit WHERE seq >= 9`},
				want: []audit.Break{{Seq: 9, Kind: audit.Deleted}}},
			{name: "delete the head record", stmts: []string{`DELETE FROM audit_head`},
				want: []audit.Break{{Seq: 10, Kind: audit.Deleted}}},
			{name: "swap two rows", stmts: []string{
				`UPDATE audit SET seq = 100 WHERE seq = 3`, `UPDATE audit SET seq = 3 WHERE seq = 7`, `UPDATE audit SET seq = 7 WHERE seq = 100`},
				want: []audit.Break{{Seq: 3, Kind: audit.Reordered}, {Seq: 7, Kind: audit.Reordered}}},
			{name: "swap neighbours", stmts: []string{
				`UPDATE audit SET seq = 100 WHERE seq = 5`, `UPDATE audit SET seq = 5 WHERE seq = 6`, `UPDATE audit SET seq = 6 WHERE seq = 100`},
				want: []audit.Break{{Seq: 5, Kind: audit.Reordered}, {Seq: 6, Kind: audit.Reordered}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				db := openDB(t, target(t))
				l := openLog(t, db)
				for i := range 10 {
					if err := l.RecordExercise(exercise(i)); err != nil {
						t.Fatal(err)
					}
				}
				if rep := verify(t, db); !rep.OK() {
					t.Fatalf("untouched log: %+v", rep)
				}
				tamper(t, db, tt.stmts...)
				if tt.rehash != 0 {
					rehash(t, db, tt.rehash)
				}
				rep := verify(t, db)
				var got []audit.Break
				for _, b := range rep.Breaks {
					got = append(got, audit.Break{Seq: b.Seq, Kind: b.Kind})
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("breaks = %v, want %v", rep.Breaks, tt.want)
				}
			})
		}
	})
}

// rehash recomputes the hash of row seq from its tampered content, as an
// attacker who knows the format would.
func rehash(t *testing.T, db *store.DB, seq int64) {
	t.Helper()
	var e audit.Entry
	for x := range audit.Entries(context.Background(), db, audit.Filter{}) {
		if x.Seq == seq {
			e = x
		}
	}
	h := audit.HashEntry(e)
	tamper(t, db, fmt.Sprintf(`UPDATE audit SET hash = '%s' WHERE seq = %d`, h, seq))
}

func TestEntriesFilter(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		db := openDB(t, target(t))
		l := openLog(t, db)
		old := time.Now().Add(-48 * time.Hour)
		for i, pack := range []string{"a", "b", "a", "c", "a"} {
			at := time.Now()
			if i < 2 {
				at = old
			}
			if err := l.RecordExercise(capability.Exercise{Pack: pack, Tool: "t", Invocation: fmt.Sprint(i), Capability: capability.EnvRead, Resource: "HOME", Allowed: true, Time: at}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.RecordInvocation(context.Background(), audit.Invocation{ID: "9", Pack: "a", Tool: "t"}); err != nil {
			t.Fatal(err)
		}
		seqs := func(f audit.Filter) []int64 {
			var s []int64
			for _, e := range entries(t, db, f) {
				s = append(s, e.Seq)
			}
			return s
		}
		tests := []struct {
			f    audit.Filter
			want []int64
		}{
			{audit.Filter{}, []int64{1, 2, 3, 4, 5, 6}},
			{audit.Filter{Pack: "a"}, []int64{1, 3, 5, 6}},
			{audit.Filter{Since: time.Now().Add(-time.Hour)}, []int64{3, 4, 5, 6}},
			{audit.Filter{Pack: "a", Since: time.Now().Add(-time.Hour)}, []int64{3, 5, 6}},
			{audit.Filter{Kind: audit.KindInvocation}, []int64{6}},
			{audit.Filter{Invocation: "3"}, []int64{4}},
			{audit.Filter{Limit: 2}, []int64{5, 6}},
			{audit.Filter{Pack: "zzz"}, nil},
		}
		for _, tt := range tests {
			if got := seqs(tt.f); !slices.Equal(got, tt.want) {
				t.Errorf("Entries(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		}
	})
}

func TestWriteJSONLAndText(t *testing.T) {
	eachBackend(t, func(t *testing.T, target func(testing.TB) string) {
		db := openDB(t, target(t))
		l := openLog(t, db)
		if err := l.RecordExercise(capability.Exercise{Pack: "p", Tool: "t", Invocation: "i", Capability: capability.Network, Resource: "evil.org", Layer: capability.LayerPolicy, Reason: "beyond the ceiling"}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.RecordInvocation(context.Background(), audit.Invocation{ID: "i", Pack: "p", Tool: "t", Approver: "terminal", Verdict: capability.RunOnce, Status: audit.StatusToolError, ExitCode: 2}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := audit.WriteJSONL(&buf, audit.Entries(context.Background(), db, audit.Filter{})); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("JSONL has %d lines, want 2:\n%s", len(lines), buf.String())
		}
		for i, line := range lines {
			var e audit.Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			if e.Seq != int64(i+1) || audit.HashEntry(e) != e.Hash {
				t.Errorf("line %d: seq %d, exported row does not re-hash to its hash", i, e.Seq)
			}
		}
		rep, err := audit.VerifyJSONL(strings.NewReader(buf.String()))
		if err != nil || !rep.OK() || rep.Rows != 2 {
			t.Errorf("VerifyJSONL of a fresh export: %+v, %v", rep, err)
		}
		edited := strings.Replace(buf.String(), `"exit_code":2`, `"exit_code":0`, 1)
		if rep, _ := audit.VerifyJSONL(strings.NewReader(edited)); len(rep.Breaks) != 1 || rep.Breaks[0].Kind != audit.Edited || rep.Breaks[0].Seq != 2 {
			t.Errorf("VerifyJSONL of an edited export: %+v", rep)
		}
		if rep, _ := audit.VerifyJSONL(strings.NewReader(lines[1] + "\n")); len(rep.Breaks) != 1 || rep.Breaks[0].Kind != audit.Deleted || rep.Breaks[0].Seq != 1 {
			t.Errorf("VerifyJSONL without its first line: %+v", rep)
		}
		if _, err := audit.VerifyJSONL(strings.NewReader(lines[0] + "\n{oops\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("VerifyJSONL of bad JSON: %v", err)
		}
		buf.Reset()
		if err := audit.WriteText(&buf, audit.Entries(context.Background(), db, audit.Filter{})); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"p/t", "network evil.org DENIED by policy: beyond the ceiling", "approved by terminal (run_once), tool_error, the tool exited 2"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("text output lacks %q:\n%s", want, buf.String())
			}
		}
	})
}

func TestParseSince(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{in: "2025-05-01T10:00:00Z", want: time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)},
		{in: "24h", want: now.Add(-24 * time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "2025-05-01", want: time.Date(2025, 5, 1, 0, 0, 0, 0, time.Local)},
		{in: "yesterday", err: true},
		{in: "-5h", err: true},
	}
	for _, tt := range tests {
		got, err := audit.ParseSince(tt.in, now)
		if (err != nil) != tt.err || (err == nil && !got.Equal(tt.want)) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, audit.ErrBadSince) {
			t.Errorf("ParseSince(%q) error %v does not wrap ErrBadSince", tt.in, err)
		}
	}
}

// BenchmarkAuditAppend appends from many goroutines at once; every append
// waits until its row is durable. rows/s is the figure to watch.
func BenchmarkAuditAppend(b *testing.B) {
	db := openDB(b, "")
	l := openLog(b, db)
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if err := l.RecordExercise(exercise(i)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkAuditAppendSerial is one appender alone: every row pays its own
// fsync, the worst case group commit cannot help.
func BenchmarkAuditAppendSerial(b *testing.B) {
	db := openDB(b, "")
	l := openLog(b, db)
	for i := 0; b.Loop(); i++ {
		if err := l.RecordExercise(exercise(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
