package audit_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
)

// v1Hash is the chain's hash as packs wrote it before rows named a person
// (packs-audit-v1), written out here so that the test does not lean on the
// code it checks.
func v1Hash(prev string, seq int64, kind, at, pack, tool, inv, body string) string {
	h := sha256.New()
	var buf [binary.MaxVarintLen64]byte
	for _, s := range []string{"packs-audit-v1", prev, strconv.FormatInt(seq, 10), kind, at, pack, tool, inv, body} {
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestPersonInChain: rows name the person and the client, under the
// chain's hash (packs-audit-v2); rows an earlier packs wrote (v1) still
// verify beside them; changing or blanking a row's person is an edit;
// Filter.Person selects a person's rows.
func TestPersonInChain(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	// Two rows of an earlier release: v1 hashes, no person, no key.
	prev := "0000000000000000000000000000000000000000000000000000000000000000"
	for seq := int64(1); seq <= 2; seq++ {
		at := time.Now().UTC().Format(store.TimeFormat)
		body := fmt.Sprintf(`{"capability":"env_read","resource":"HOME","allowed":true,"reason":"r%d"}`, seq)
		h := v1Hash(prev, seq, "exercise", at, "p", "t", "inv-old", body)
		tamper(t, db, fmt.Sprintf(`INSERT INTO audit(seq, kind, at, pack, tool, invocation, body, prev_hash, hash) VALUES(%d, 'exercise', '%s', 'p', 't', 'inv-old', '%s', '%s', '%s')`, seq, at, body, prev, h),
			fmt.Sprintf(`INSERT INTO audit_head(id, seq, hash) VALUES(1, %d, '%s') ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`, seq, h))
		prev = h
	}
	l := openLog(t, db)
	const iss = "https://idp.example"
	if err := l.RecordExercise(capability.Exercise{Pack: "p", Tool: "t", Invocation: "inv-a", Capability: capability.EnvRead, Resource: "HOME", Allowed: true, Person: "alice", Issuer: iss, Client: "web"}); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordCall(ctx, capability.CallRecord{Invocation: "inv-a", Pack: "p", Tool: "t", Client: "web", Person: "alice", Issuer: iss}); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordCall(ctx, capability.CallRecord{Invocation: "inv-b", Pack: "p", Tool: "t", Person: "bob", Issuer: iss}); err != nil {
		t.Fatal(err)
	}
	if rep := verify(t, db); !rep.OK() || rep.Rows != 5 {
		t.Fatalf("Verify = %+v", rep)
	}
	got := entries(t, db, audit.Filter{Person: "alice"})
	if len(got) != 2 || got[0].Seq != 3 || got[1].Seq != 4 || got[1].Person != "alice" || got[1].Issuer != iss || got[1].Client != "web" {
		t.Errorf("alice's rows: %+v", got)
	}
	if bob := entries(t, db, audit.Filter{Person: "bob"}); len(bob) != 1 || bob[0].Client != "cli" {
		t.Errorf("bob's rows (made at the terminal): %+v", bob)
	}
	for _, stmt := range []string{
		`UPDATE audit SET person = 'mallory' WHERE seq = 4`,
		`UPDATE audit SET issuer = 'https://evil.example' WHERE seq = 4`,
		`UPDATE audit SET client = 'cli' WHERE seq = 4`,
		`UPDATE audit SET person = '', issuer = '', client = '' WHERE seq = 4`,
	} {
		tamper(t, db, stmt)
		rep := verify(t, db)
		if i := slices.IndexFunc(rep.Breaks, func(b audit.Break) bool { return b.Seq == 4 }); i < 0 || rep.Breaks[i].Kind != audit.Edited {
			t.Errorf("%s: Verify = %+v, want seq 4 edited", stmt, rep.Breaks)
		}
		tamper(t, db, fmt.Sprintf(`UPDATE audit SET person = 'alice', issuer = '%s', client = 'web' WHERE seq = 4`, iss))
	}
	if rep := verify(t, db); !rep.OK() {
		t.Fatalf("Verify after restoring = %+v", rep)
	}
}
