package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func row(name, integrity string) PackRow {
	return PackRow{
		Name: name, Version: "1.0.0", Source: "file:///src/" + name, Integrity: integrity,
		InstalledAt: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC),
		Capabilities: map[string]PackCapability{
			"network":  {Granted: true, Resources: []string{"api.example.com"}},
			"env_read": {Granted: false, Resources: []string{"HOME"}},
		},
	}
}

func TestPackRowsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	want := row("weather", "sha256:aa")
	if err := db.PutPack(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := db.Pack(ctx, "weather")
	if err != nil {
		t.Fatal(err)
	}
	if !got.equal(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Put replaces.
	want.Integrity = "sha256:bb"
	want.Capabilities = nil
	if err := db.PutPack(ctx, want); err != nil {
		t.Fatal(err)
	}
	all, err := db.Packs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !all[0].equal(want) {
		t.Fatalf("got %+v, want one row %+v", all, want)
	}
	if err := db.DeletePack(ctx, "weather"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pack(ctx, "weather"); !errors.Is(err, ErrPackNotFound) {
		t.Fatalf("Pack after delete: got %v, want ErrPackNotFound", err)
	}
	if err := db.DeletePack(ctx, "weather"); !errors.Is(err, ErrPackNotFound) {
		t.Fatalf("second delete: got %v, want ErrPackNotFound", err)
	}
}

func TestReplacePacks(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if err := db.PutPack(ctx, row("stale", "sha256:00")); err != nil {
		t.Fatal(err)
	}
	want := []PackRow{row("zeta", "sha256:22"), row("alpha", "sha256:11")}
	changed, err := db.ReplacePacks(ctx, want)
	if err != nil || !changed {
		t.Fatalf("first replace: changed=%v err=%v, want changed", changed, err)
	}
	got, err := db.Packs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "alpha" || got[1].Name != "zeta" || !got[0].equal(want[1]) {
		t.Fatalf("got %+v, want alpha and zeta", got)
	}
	changed, err = db.ReplacePacks(ctx, want)
	if err != nil || changed {
		t.Fatalf("second replace: changed=%v err=%v, want unchanged", changed, err)
	}
	changed, err = db.ReplacePacks(ctx, nil)
	if err != nil || !changed {
		t.Fatalf("replace with none: changed=%v err=%v", changed, err)
	}
	if got, _ := db.Packs(ctx); len(got) != 0 {
		t.Fatalf("got %d rows, want 0", len(got))
	}
}
