package audit_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
)

// writeRows opens a Log on db, appends n exercises and closes it.
func writeRows(t *testing.T, db *store.DB, n int) {
	t.Helper()
	l, err := audit.Open(context.Background(), db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.RecordExercise(exercise(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// recompute rewrites the unkeyed SHA-256 chain of every row from seq on,
// and the head, exactly as an attacker who knows the format but not the key
// would after deleting or renumbering rows.
func recompute(t *testing.T, db *store.DB, from int64) {
	t.Helper()
	prev := ""
	var last audit.Entry
	for _, e := range entries(t, db, audit.Filter{}) {
		if e.Seq >= from {
			if prev != "" {
				e.PrevHash = prev
			}
			e.Hash = audit.HashEntry(e)
			tamper(t, db, fmt.Sprintf(`UPDATE audit SET prev_hash = '%s', hash = '%s' WHERE seq = %d`, e.PrevHash, e.Hash, e.Seq))
		}
		prev, last = e.Hash, e
	}
	tamper(t, db, fmt.Sprintf(`UPDATE audit_head SET seq = %d, hash = '%s'`, last.Seq, last.Hash))
}

// TestRewrittenHistoryIsDetected is defect 5 of issue 11: someone with write
// access to packs.db alone deletes rows and recomputes the unkeyed chain and
// the head, or cuts the tail off and repoints the head. Verify must name
// the first seq that no longer holds.
func TestRewrittenHistoryIsDetected(t *testing.T) {
	tests := []struct {
		name    string
		attack  func(t *testing.T, db *store.DB)
		wantSeq int64
		want    audit.BreakKind
	}{
		{"delete rows, renumber and recompute the chain and head", func(t *testing.T, db *store.DB) {
			tamper(t, db, `DELETE FROM audit WHERE seq IN (4, 5)`, `UPDATE audit SET seq = seq - 2 WHERE seq > 5`)
			recompute(t, db, 4)
		}, 4, audit.Forged},
		{"edit a row and recompute everything after it", func(t *testing.T, db *store.DB) {
			tamper(t, db, `UPDATE audit SET body = replace(body, '"allowed":false', '"allowed":true') WHERE seq = 6`)
			recompute(t, db, 6)
		}, 6, audit.Forged},
		{"rewrite the whole chain from the first row", func(t *testing.T, db *store.DB) {
			tamper(t, db, `DELETE FROM audit WHERE seq = 1`, `UPDATE audit SET seq = seq - 1`)
			recompute(t, db, 1)
		}, 1, audit.Forged},
		{"cut the tail and repoint the head", func(t *testing.T, db *store.DB) {
			tamper(t, db, `DELETE FROM audit WHERE seq >= 8`)
			recompute(t, db, 100) // only the head moves
		}, 8, audit.Deleted},
		{"empty the log, as a fresh packs.db would be", func(t *testing.T, db *store.DB) {
			tamper(t, db, `DELETE FROM audit`, `DELETE FROM audit_head`, `DELETE FROM audit_key`)
		}, 1, audit.Deleted},
		{"cut the tail, repoint the head and the history of the last row", func(t *testing.T, db *store.DB) {
			tamper(t, db, `DELETE FROM audit WHERE seq >= 9`, `UPDATE audit SET body = '{}' WHERE seq = 8`)
			recompute(t, db, 8)
		}, 8, audit.Forged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t, "")
			writeRows(t, db, 10)
			if rep := verify(t, db); !rep.OK() {
				t.Fatalf("untouched log: %+v", rep)
			}
			tt.attack(t, db)
			rep := verify(t, db)
			if rep.OK() {
				t.Fatalf("verify says ok after the attack: %+v", rep)
			}
			if b := rep.Breaks[0]; b.Seq != tt.wantSeq || b.Kind != tt.want {
				t.Errorf("first break = %v, want seq %d %s (all: %v)", b, tt.wantSeq, tt.want, rep.Breaks)
			}
		})
	}
}

// dirOf is the key directory of a test database: the directory of packs.db.
func dirOf(t *testing.T, db *store.DB) string {
	t.Helper()
	var file string
	if err := db.SQL().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(file)
}

// TestKeyFile: the key is made on first use in a 0600 file beside packs.db
// and never reaches packs.db; a log whose key is missing, foreign, open to
// others or malformed is refused by Open and Verify alike, with an error
// that names the file.
func TestKeyFile(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	writeRows(t, db, 3)
	dir := dirOf(t, db)
	keyPath := filepath.Join(dir, audit.KeyFile)
	fi, err := os.Stat(keyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	var kf struct {
		Key      string `json:"key"`
		FirstSeq int64  `json:"first_seq"`
	}
	b, _ := os.ReadFile(keyPath)
	if err := json.Unmarshal(b, &kf); err != nil || len(kf.Key) != 64 || kf.FirstSeq != 1 {
		t.Fatalf("key file = %s (%v): want a 32-byte hex key from seq 1", b, err)
	}
	raw, _ := hex.DecodeString(kf.Key)
	for _, name := range []string{"packs.db", "packs.db-wal"} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if bytes.Contains(data, []byte(kf.Key)) || bytes.Contains(bytes.ToLower(data), []byte(kf.Key)) || bytes.Contains(data, raw) {
			t.Errorf("the key is stored in %s", name)
		}
	}

	other := openDB(t, "")
	writeRows(t, other, 1)
	foreign, _ := os.ReadFile(filepath.Join(dirOf(t, other), audit.KeyFile))
	tests := []struct {
		name    string
		content []byte // nil: no key file at all
		mode    os.FileMode
		want    error
	}{
		{"missing", nil, 0, audit.ErrKeyMissing},
		{"foreign", foreign, 0o600, audit.ErrWrongKey},
		{"open to others", b, 0o644, audit.ErrBadKey},
		{"malformed", []byte(`{"version":1,"key":"abcd","first_seq":1}`), 0o600, audit.ErrBadKey},
		{"not JSON", raw, 0o600, audit.ErrBadKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.Remove(keyPath); err != nil {
				t.Fatal(err)
			}
			if tt.content != nil {
				if err := os.WriteFile(keyPath, tt.content, tt.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(keyPath, tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			if l, err := audit.Open(ctx, db, audit.Options{}); !errors.Is(err, tt.want) || !strings.Contains(fmt.Sprint(err), keyPath) {
				if l != nil {
					l.Close()
				}
				t.Errorf("Open: %v, want %v naming %s", err, tt.want, keyPath)
			}
			if _, err := audit.Verify(ctx, db); !errors.Is(err, tt.want) || !strings.Contains(err.Error(), keyPath) {
				t.Errorf("Verify: %v, want %v naming %s", err, tt.want, keyPath)
			}
			if tt.content == nil {
				os.WriteFile(keyPath, b, 0o600) // the next case removes it
			}
		})
	}
	os.Remove(keyPath)
	if err := os.WriteFile(keyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(keyPath, 0o600); err != nil {
		t.Fatal(err)
	}
	if rep := verify(t, db); !rep.OK() || rep.Rows != 3 {
		t.Fatalf("with the right key back: %+v", rep)
	}
	cpPath := filepath.Join(dir, audit.CheckpointFile)
	cp, _ := os.ReadFile(cpPath)
	if err := os.WriteFile(cpPath, bytes.Replace(cp, []byte(`"seq":3`), []byte(`"seq":2`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Verify(ctx, db); !errors.Is(err, audit.ErrBadCheckpoint) {
		t.Errorf("Verify with an altered checkpoint: %v, want ErrBadCheckpoint", err)
	}
}

// TestMigrateUnkeyed starts from a packs.db written before the key existed:
// Verify checks its chain and says it is unkeyed; the first write makes the
// key, starting at the next seq; from then on a rewrite of the old rows is
// caught at the first keyed row, whose MAC covers the chain before it.
func TestMigrateUnkeyed(t *testing.T) {
	db := openDB(t, "")
	writeRows(t, db, 5)
	dir := dirOf(t, db)
	// What a packs.db of an earlier release holds: no MACs, no key.
	tamper(t, db, `UPDATE audit SET mac = ''`, `DELETE FROM audit_key`)
	for _, f := range []string{audit.KeyFile, audit.CheckpointFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	rep := verify(t, db)
	if !rep.OK() || rep.KeyID != "" || rep.Unkeyed != 5 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "unkeyed") {
		t.Fatalf("Verify of an unkeyed log = %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, audit.KeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Verify made a key: %v", err)
	}
	writeRows(t, db, 3)
	rep = verify(t, db)
	if !rep.OK() || rep.Rows != 8 || rep.FirstKeyed != 6 || rep.Unkeyed != 5 || rep.Checkpoint == nil || rep.Checkpoint.Seq != 8 {
		t.Fatalf("Verify after the first keyed write = %+v", rep)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "rows 1 to 5 were written before the audit key existed") {
		t.Errorf("warnings = %q", rep.Warnings)
	}
	tamper(t, db, `UPDATE audit SET body = replace(body, '"allowed":false', '"allowed":true') WHERE seq = 2`)
	recompute(t, db, 2)
	rep = verify(t, db)
	if rep.OK() || rep.Breaks[0].Seq != 6 || rep.Breaks[0].Kind != audit.Forged {
		t.Errorf("Verify after rewriting the unkeyed rows = %+v, want seq 6 forged first", rep)
	}
}

// TestWriterKeepsTheEvidence: after the tail was cut and the head
// repointed, packs goes on writing; the checkpoint must not move past the
// cut, so Verify still finds it.
func TestWriterKeepsTheEvidence(t *testing.T) {
	db := openDB(t, "")
	writeRows(t, db, 10)
	tamper(t, db, `DELETE FROM audit WHERE seq >= 8`)
	recompute(t, db, 100)
	writeRows(t, db, 5) // seqs 8 to 12 again, validly keyed
	rep := verify(t, db)
	if rep.OK() || rep.Checkpoint == nil || rep.Checkpoint.Seq != 10 {
		t.Fatalf("Verify = %+v, want a break at the checkpoint at seq 10", rep)
	}
	if b := rep.Breaks[0]; b.Seq != 10 || b.Kind != audit.Forged {
		t.Errorf("first break = %v, want seq 10 forged", b)
	}
}

// TestExportRoundTrip exports the log, checks each line's seq, hash and
// MAC, verifies the export with and without the key, and finds a forged or
// cut export.
func TestExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	writeRows(t, db, 6)
	dir := dirOf(t, db)
	keyPath := filepath.Join(dir, audit.KeyFile)
	var buf bytes.Buffer
	res, err := audit.Export(ctx, db, &buf, "")
	if err != nil || res.Rows != 6 || res.Checkpoint == nil || res.Checkpoint.Seq != 6 || res.Checkpoint.By != "export" {
		t.Fatalf("Export = %+v, %v", res, err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("export has %d lines, want 6", len(lines))
	}
	var prev string
	for i, line := range lines {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if e.Seq != int64(i+1) || len(e.MAC) != 64 || audit.HashEntry(e) != e.Hash || (i > 0 && e.PrevHash != prev) {
			t.Errorf("line %d: %+v does not carry its seq, linked hash and MAC", i, e)
		}
		prev = e.Hash
	}
	if rep := verify(t, db); !rep.OK() || rep.Checkpoint == nil || rep.Checkpoint.By != "export" {
		t.Errorf("Verify after export = %+v", rep)
	}
	if rep, err := audit.VerifyExport(strings.NewReader(buf.String()), keyPath); err != nil || !rep.OK() || rep.Rows != 6 || len(rep.Warnings) != 0 {
		t.Errorf("VerifyExport = %+v, %v", rep, err)
	}
	if rep, err := audit.VerifyJSONL(strings.NewReader(buf.String())); err != nil || !rep.OK() || len(rep.Warnings) != 1 {
		t.Errorf("VerifyJSONL without the key = %+v, %v; want ok with one warning", rep, err)
	}

	// An export edited and re-hashed passes without the key, not with it.
	var forged bytes.Buffer
	prev = ""
	for i, line := range lines {
		var e audit.Entry
		json.Unmarshal([]byte(line), &e)
		if i == 2 {
			e.Body = json.RawMessage(`{"capability":"network","resource":"nothing.example","allowed":true,"reason":"r"}`)
		}
		if prev != "" {
			e.PrevHash = prev
		}
		e.Hash = audit.HashEntry(e)
		prev = e.Hash
		out, _ := json.Marshal(e)
		forged.Write(append(out, '\n'))
	}
	if rep, _ := audit.VerifyJSONL(bytes.NewReader(forged.Bytes())); !rep.OK() {
		t.Errorf("VerifyJSONL of a recomputed export: %+v (the links alone cannot tell)", rep)
	}
	if rep, err := audit.VerifyExport(bytes.NewReader(forged.Bytes()), keyPath); err != nil || rep.OK() || rep.Breaks[0].Seq != 3 || rep.Breaks[0].Kind != audit.Forged {
		t.Errorf("VerifyExport of a recomputed export = %+v, %v; want seq 3 forged", rep, err)
	}
	cut := strings.Join(lines[:4], "\n") + "\n"
	if rep, err := audit.VerifyExport(strings.NewReader(cut), keyPath); err != nil || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "before the checkpoint at seq 6") {
		t.Errorf("VerifyExport of a cut export = %+v, %v", rep, err)
	}
	if _, err := audit.VerifyExport(strings.NewReader(cut), filepath.Join(t.TempDir(), audit.KeyFile)); !errors.Is(err, audit.ErrKeyMissing) {
		t.Errorf("VerifyExport without the key file: %v", err)
	}

	// A broken log is exported all the same, and the checkpoint stays.
	tamper(t, db, `DELETE FROM audit WHERE seq = 2`)
	writeRows(t, db, 1)
	buf.Reset()
	res, err = audit.Export(ctx, db, &buf, "")
	if !errors.Is(err, audit.ErrBroken) || res.Rows != 6 || res.Checkpoint != nil || strings.Count(buf.String(), "\n") != 6 {
		t.Errorf("Export of a broken log = %+v, %v", res, err)
	}
	if rep := verify(t, db); rep.OK() || rep.Breaks[0].Seq != 2 {
		t.Errorf("Verify after exporting a broken log = %+v", rep)
	}
}
