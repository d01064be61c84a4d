package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/internal/testpg"
)

func TestMain(m *testing.M) { os.Exit(testpg.Main(m)) }

// EachBackend runs f as one subtest per store: a SQLite file and a
// schema of a real PostgreSQL (internal/testpg). open opens a fresh,
// migrated store of that subtest's kind.
func EachBackend(t *testing.T, f func(t *testing.T, open func(*testing.T) *DB)) {
	t.Helper()
	for _, b := range []struct {
		name   string
		target func(*testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "packs.db") }},
		{"postgres", testURL},
	} {
		t.Run(b.name, func(t *testing.T) {
			f(t, func(t *testing.T) *DB {
				t.Helper()
				db, err := Open(context.Background(), b.target(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			})
		})
	}
}

// testURL is the URL of a new schema on the tests' PostgreSQL.
func testURL(t *testing.T) string { return testpg.URL(t) }
