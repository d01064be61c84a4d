package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOpenPathWithURICharacters: a state directory whose path holds "#"
// or "?" (a test named "x#01", a folder a person named) opens packs.db in
// that directory, not a file named by the part before the "#".
func TestOpenPathWithURICharacters(t *testing.T) {
	for _, name := range []string{"a#01", "b?x=1", "c%20d", "e&f"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "packs.db")
			db, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Enqueue(context.Background(), QueuedCall{ID: "inv_1", Tool: "t", Class: "t", Created: time.Now(), Expires: time.Now().Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("packs.db is not where it was asked for: %v", err)
			}
			var mode string
			if err := db.SQL().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
				t.Errorf("journal_mode = %q %v, want wal (the DSN's pragmas apply)", mode, err)
			}
		})
	}
}

func TestEnqueuePrunesOldCalls(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	for _, q := range []QueuedCall{
		{ID: "inv_old", Created: now.Add(-50 * time.Hour), Expires: now.Add(-48 * time.Hour)},
		{ID: "inv_recent", Created: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)},
		{ID: "inv_new", Created: now, Expires: now.Add(time.Minute)},
	} {
		q.Tool, q.Class = "t", "t"
		if err := db.Enqueue(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]bool{"inv_old": false, "inv_recent": true, "inv_new": true} {
		_, err := db.Queued(context.Background(), id)
		if got := err == nil; got != want {
			t.Errorf("%s kept = %v (%v), want %v", id, got, err, want)
		}
	}
}
