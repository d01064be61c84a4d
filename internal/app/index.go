package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// storeIndex is dist.Home's Index in packs.db: the packs table, which
// syncDB brings in line with packs.lock and marks with the lock's file
// stamp, answers for one pack's entry, and pack_checks keeps what the
// last listing found in each installed folder.
type storeIndex struct{ db *store.DB }

var _ dist.Index = storeIndex{}

// stampKey is a file stamp as packs.db keeps it.
func stampKey(s packs.Stamp) string {
	b, _ := s.MarshalText() // never fails
	return string(b)
}

func (ix storeIndex) LockEntry(lock packs.Stamp, name string) (dist.LockEntry, bool, bool, error) {
	r, found, synced, err := ix.db.SyncedPack(context.Background(), stampKey(lock), name)
	if err != nil || !found {
		return dist.LockEntry{}, false, synced, err
	}
	e, err := lockEntry(r)
	if err != nil {
		return dist.LockEntry{}, false, false, err
	}
	return e, true, true, nil
}

func (ix storeIndex) FolderChecks(ctx context.Context) (map[string]packs.FolderCheck, error) {
	rows, err := ix.db.PackChecks(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]packs.FolderCheck, len(rows))
	for name, r := range rows {
		c := packs.FolderCheck{Digest: r.Digest}
		if err := json.Unmarshal(r.Stamps, &c.Stamps); err != nil {
			continue // checked again, and recorded anew
		}
		out[name] = c
	}
	return out, nil
}

func (ix storeIndex) RecordFolderChecks(ctx context.Context, put map[string]packs.FolderCheck, drop []string) error {
	rows := make(map[string]store.PackCheck, len(put))
	for name, c := range put {
		stamps, err := json.Marshal(c.Stamps)
		if err != nil {
			return fmt.Errorf("app: record the check of %s: %w", name, err)
		}
		rows[name] = store.PackCheck{Digest: c.Digest, Stamps: stamps}
	}
	return ix.db.RecordPackChecks(ctx, rows, drop)
}
