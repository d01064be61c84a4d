package store

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"
)

func row(name, integrity string) PackRow {
	return PackRow{
		Name: name, Version: "1.0.0", Source: "file:///src/" + name, Integrity: integrity,
		InstalledAt: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC),
		Capabilities: map[string]PackCapability{
			"network":  {Granted: true, Resources: []string{"api.example.com"}},
			"env_read": {Granted: false, Resources: []string{"HOME"}},
		},
		Resolved: "git:0123456789abcdef0123456789abcdef01234567", Signer: "ssh-ed25519 AAAA" + name,
	}
}

func TestPackRowsRoundTrip(t *testing.T) {
	EachBackend(t, func(t *testing.T, openTest func(*testing.T) *DB) {
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
	})
}

func TestReplacePacks(t *testing.T) {
	EachBackend(t, func(t *testing.T, openTest func(*testing.T) *DB) {
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
	})
}

// TestSyncedPack: a row is an answer only for the packs.lock file stamp the
// table was marked with.
func TestSyncedPack(t *testing.T) {
	EachBackend(t, func(t *testing.T, openTest func(*testing.T) *DB) {
		ctx := context.Background()
		db := openTest(t)
		want := row("weather", "sha256:aa")
		if err := db.PutPack(ctx, want); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkPacksSynced(ctx, "hash", "1:2:420:10:100:200"); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			stamp, name   string
			found, synced bool
		}{
			{"1:2:420:10:100:200", "weather", true, true},
			{"1:2:420:10:100:200", "other", false, true},
			{"1:3:420:10:100:200", "weather", false, false},
			{"", "weather", false, false},
		}
		for _, c := range cases {
			got, found, synced, err := db.SyncedPack(ctx, c.stamp, c.name)
			if err != nil || found != c.found || synced != c.synced || found && !got.equal(want) {
				t.Errorf("SyncedPack(%q, %q) = %+v, %t, %t, %v; want found %t, synced %t", c.stamp, c.name, got, found, synced, err, c.found, c.synced)
			}
		}
		if hash, stamp, err := db.PacksSyncedWith(ctx); err != nil || hash != "hash" || stamp != "1:2:420:10:100:200" {
			t.Errorf("PacksSyncedWith = %q, %q, %v", hash, stamp, err)
		}
	})
}

// TestPackChecks: checks are stored, replaced and dropped by pack name.
func TestPackChecks(t *testing.T) {
	EachBackend(t, func(t *testing.T, openTest func(*testing.T) *DB) {
		ctx := context.Background()
		db := openTest(t)
		steps := []struct {
			put  map[string]PackCheck
			drop []string
			want map[string]string // name: digest
		}{
			{map[string]PackCheck{"a": {Digest: "d1", Stamps: []byte(`{}`)}, "b": {Digest: "d2", Stamps: []byte(`{}`)}}, nil, map[string]string{"a": "d1", "b": "d2"}},
			{map[string]PackCheck{"a": {Digest: "d3", Stamps: []byte(`{"x":"1:2:3:4:5:6"}`)}}, []string{"b"}, map[string]string{"a": "d3"}},
		}
		for i, s := range steps {
			if err := db.RecordPackChecks(ctx, s.put, s.drop); err != nil {
				t.Fatal(err)
			}
			got, err := db.PackChecks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			digests := map[string]string{}
			for n, c := range got {
				digests[n] = c.Digest
				if want := s.put[n].Stamps; want != nil && string(c.Stamps) != string(want) {
					t.Errorf("step %d: %s stamps %s, want %s", i, n, c.Stamps, want)
				}
			}
			if !maps.Equal(digests, s.want) {
				t.Errorf("step %d: checks %v, want %v", i, digests, s.want)
			}
		}
	})
}

// TestPackSummaries: summaries are per program, replaced by integrity, and
// those of integrities no longer kept are deleted.
func TestPackSummaries(t *testing.T) {
	EachBackend(t, func(t *testing.T, openTest func(*testing.T) *DB) {
		ctx := context.Background()
		db := openTest(t)
		steps := []struct {
			program string
			put     map[string][]byte
			keep    []string
			want    map[string]map[string]string // program: integrity: summary
		}{
			{"p1", map[string][]byte{"sha256:a": []byte(`{"description":"a"}`), "sha256:b": []byte(`{}`)}, []string{"sha256:a", "sha256:b"},
				map[string]map[string]string{"p1": {"sha256:a": `{"description":"a"}`, "sha256:b": `{}`}, "p2": {}}},
			{"p2", map[string][]byte{"sha256:a": []byte(`{"description":"a2"}`)}, []string{"sha256:a", "sha256:b"},
				map[string]map[string]string{"p1": {"sha256:b": `{}`}, "p2": {"sha256:a": `{"description":"a2"}`}}},
			{"p2", nil, []string{"sha256:a"},
				map[string]map[string]string{"p1": {}, "p2": {"sha256:a": `{"description":"a2"}`}}},
		}
		for i, s := range steps {
			keep := map[string]bool{}
			for _, k := range s.keep {
				keep[k] = true
			}
			if err := db.RecordPackSummaries(ctx, s.program, s.put, keep); err != nil {
				t.Fatal(err)
			}
			for program, want := range s.want {
				got, err := db.PackSummaries(ctx, program)
				if err != nil {
					t.Fatal(err)
				}
				gotS := map[string]string{}
				for k, v := range got {
					gotS[k] = string(v)
				}
				if !maps.Equal(gotS, want) {
					t.Errorf("step %d: %s's summaries %v, want %v", i, program, gotS, want)
				}
			}
		}
	})
}
