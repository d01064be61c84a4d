package store

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

func TestPlaceholders(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?`, `a = $1 AND b = $2`},
		{`a = ?1 OR b = ?1 AND c = ?2`, `a = $1 OR b = $1 AND c = $2`},
		{`a = ?2 AND b = ?`, `a = $2 AND b = $3`},
		{`a = '?' AND b = ?`, `a = '?' AND b = $1`},
		{`a = 'it''s ?' AND b = ?`, `a = 'it''s ?' AND b = $1`},
		{`"odd?name" = ?`, `"odd?name" = $1`},
		{"a = ? -- why?\n AND b = ?", "a = $1 -- why?\n AND b = $2"},
		{`a = ? /* ? */ AND b = ?`, `a = $1 /* ? */ AND b = $2`},
		{`a = '?`, `a = '?`}, // unterminated: kept as it is
	} {
		if got := placeholders(c.in); got != c.want {
			t.Errorf("placeholders(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPostgresDDL(t *testing.T) {
	got := postgresDDL("CREATE TABLE t (\n\tid INTEGER PRIMARY KEY, -- an INTEGER\n\tname text NOT NULL DEFAULT 'TEXT',\n\tx REAL, b BLOB, texts INTEGER);\nALTER TABLE t ADD COLUMN n INTEGER NOT NULL DEFAULT 0")
	want := "CREATE TABLE t (\n\tid BIGINT PRIMARY KEY, -- an INTEGER\n\tname text COLLATE \"C\" NOT NULL DEFAULT 'TEXT',\n\tx DOUBLE PRECISION, b BYTEA, texts BIGINT);\nALTER TABLE t ADD COLUMN n BIGINT NOT NULL DEFAULT 0"
	if got != want {
		t.Errorf("postgresDDL:\n got %q\nwant %q", got, want)
	}
}

// FuzzPlaceholders: the rewrite never panics, and keeps everything but
// the placeholders.
func FuzzPlaceholders(f *testing.F) {
	for _, s := range []string{`a = ?1 AND b = ?`, `'?' "?" -- ?` + "\n?", `/* ? */ ?`, `'`, `/*`, `?99999999999999999999`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := placeholders(q)
		if !strings.Contains(q, "?") && got != q {
			t.Fatalf("placeholders(%q) = %q: changed a query without placeholders", q, got)
		}
	})
}

// TestStoreURLErrorHoldsNoPassword: a URL that does not parse is refused
// without quoting it.
func TestStoreURLErrorHoldsNoPassword(t *testing.T) {
	_, err := Open(context.Background(), "postgres://u:s3cret-pw@host:notaport/db")
	if err == nil {
		t.Fatal("a malformed URL opened")
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("the error holds the password: %v", err)
	}
}

// TestMigrateOnceUnderLock: replicas that start together on one
// PostgreSQL each open the store; the migrations run once.
func TestMigrateOnceUnderLock(t *testing.T) {
	url := testURL(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			db, err := Open(context.Background(), url)
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, versions int
	if err := db.sql.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows != len(migrations) || versions != len(migrations) {
		t.Fatalf("schema_migrations holds %d rows of %d versions, want %d once each", rows, versions, len(migrations))
	}
}

// TestGrantSeenByAnotherReplica: a grant written through one handle of a
// store (one replica) is in the grants the other reads for its very next
// call, and so is its revocation: nothing caches grants between calls.
func TestGrantSeenByAnotherReplica(t *testing.T) {
	for name, target := range map[string]func(*testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "packs.db") },
		"postgres": testURL,
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			at := target(t)
			var dbs [2]*DB
			for i := range dbs {
				db, err := Open(ctx, at)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				dbs[i] = db
			}
			a, b := dbs[0], dbs[1]
			has := func() bool {
				t.Helper()
				gs, err := b.CallGrants(ctx, "p", "chat_1", false, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				return slices.ContainsFunc(gs, func(g capability.UserGrant) bool { return g.Capability == capability.Network && !g.Revoked })
			}
			if has() {
				t.Fatal("a grant before any was made")
			}
			if err := a.PutGrant(ctx, "p", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
				t.Fatal(err)
			}
			if !has() {
				t.Fatal("the grant made through the other handle is not seen")
			}
			if _, err := a.RevokeGrant(ctx, "p", capability.Network); err != nil {
				t.Fatal(err)
			}
			if has() {
				t.Fatal("the grant revoked through the other handle is still live")
			}
		})
	}
}

// TestChatContentIsBytesOnPostgres: the override of migration 4 still
// finds the column it changes.
func TestChatContentIsBytesOnPostgres(t *testing.T) {
	if !strings.Contains(schemaChatPostgres, "content      BYTEA") || strings.Count(schemaChatPostgres, "BYTEA") != 1 {
		t.Fatalf("schemaChatPostgres does not make chat_messages.content BYTEA:\n%s", schemaChatPostgres)
	}
}
