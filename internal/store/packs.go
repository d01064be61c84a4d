package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ErrPackNotFound is returned for a pack that has no row.
var ErrPackNotFound = errors.New("store: pack not found")

// PackRow is one installed pack, mirrored from its packs.lock entry.
type PackRow struct {
	Name         string
	Version      string
	Source       string
	Integrity    string
	InstalledAt  time.Time
	Capabilities map[string]PackCapability // by capability name; every requested one
}

// PackCapability is one requested capability of an installed pack.
type PackCapability struct {
	Granted   bool     `json:"granted"`
	Resources []string `json:"resources"`
}

func (r PackRow) equal(o PackRow) bool {
	return r.Name == o.Name && r.Version == o.Version && r.Source == o.Source &&
		r.Integrity == o.Integrity && r.InstalledAt.Equal(o.InstalledAt) &&
		maps.EqualFunc(r.Capabilities, o.Capabilities, func(a, b PackCapability) bool {
			return a.Granted == b.Granted && slices.Equal(a.Resources, b.Resources)
		})
}

// PutPack inserts or replaces the row of r.Name.
func (db *DB) PutPack(ctx context.Context, r PackRow) error {
	if err := putPack(ctx, db.sql, r); err != nil {
		return fmt.Errorf("store: put pack %s: %w", r.Name, err)
	}
	return nil
}

// execer is what putPack needs from a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func putPack(ctx context.Context, db execer, r PackRow) error {
	caps, err := json.Marshal(r.Capabilities)
	if err != nil {
		return err
	}
	if r.Capabilities == nil {
		caps = []byte("{}")
	}
	_, err = db.ExecContext(ctx, `INSERT INTO packs(name, version, source, integrity, installed_at, capabilities)
		VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET version = excluded.version, source = excluded.source,
			integrity = excluded.integrity, installed_at = excluded.installed_at, capabilities = excluded.capabilities`,
		r.Name, r.Version, r.Source, r.Integrity, r.InstalledAt.UTC().Format(time.RFC3339Nano), string(caps))
	return err
}

// DeletePack deletes the row of name. It returns ErrPackNotFound when there
// is none.
func (db *DB) DeletePack(ctx context.Context, name string) error {
	res, err := db.sql.ExecContext(ctx, `DELETE FROM packs WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("store: delete pack %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: %s", ErrPackNotFound, name)
	}
	return nil
}

// Pack returns the row of name, or an error wrapping ErrPackNotFound.
func (db *DB) Pack(ctx context.Context, name string) (PackRow, error) {
	rows, err := db.queryPacks(ctx, `WHERE name = ?`, name)
	if err != nil {
		return PackRow{}, err
	}
	if len(rows) == 0 {
		return PackRow{}, fmt.Errorf("%w: %s", ErrPackNotFound, name)
	}
	return rows[0], nil
}

// Packs returns every row, ordered by name.
func (db *DB) Packs(ctx context.Context) ([]PackRow, error) {
	return db.queryPacks(ctx, `ORDER BY name`)
}

func (db *DB) queryPacks(ctx context.Context, tail string, args ...any) ([]PackRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT name, version, source, integrity, installed_at, capabilities FROM packs `+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("store: query packs: %w", err)
	}
	defer rows.Close()
	var out []PackRow
	for rows.Next() {
		var r PackRow
		var at, caps string
		if err := rows.Scan(&r.Name, &r.Version, &r.Source, &r.Integrity, &at, &caps); err != nil {
			return nil, fmt.Errorf("store: query packs: %w", err)
		}
		if r.InstalledAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("store: pack %s: installed_at %q: %w", r.Name, at, err)
		}
		if err := json.Unmarshal([]byte(caps), &r.Capabilities); err != nil {
			return nil, fmt.Errorf("store: pack %s: capabilities: %w", r.Name, err)
		}
		if len(r.Capabilities) == 0 {
			r.Capabilities = nil
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query packs: %w", err)
	}
	return out, nil
}

// PacksSyncedWith returns the packs.lock hash recorded by MarkPacksSynced,
// or "" when none was.
func (db *DB) PacksSyncedWith(ctx context.Context) (string, error) {
	var stamp string
	err := db.sql.QueryRowContext(ctx, `SELECT stamp FROM lock_sync WHERE id = 1`).Scan(&stamp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: lock sync: %w", err)
	}
	return stamp, nil
}

// MarkPacksSynced records that the packs table mirrors the packs.lock whose
// SHA-256 is stamp.
func (db *DB) MarkPacksSynced(ctx context.Context, stamp string) error {
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO lock_sync(id, stamp) VALUES(1, ?) ON CONFLICT(id) DO UPDATE SET stamp = excluded.stamp`, stamp); err != nil {
		return fmt.Errorf("store: lock sync: %w", err)
	}
	return nil
}

// ReplacePacks makes the table hold exactly rows, in one transaction, and
// reports whether anything changed. It writes nothing when the table
// already matches, so calling it on every start is cheap.
func (db *DB) ReplacePacks(ctx context.Context, rows []PackRow) (bool, error) {
	have, err := db.Packs(ctx)
	if err != nil {
		return false, err
	}
	want := slices.SortedFunc(slices.Values(rows), func(a, b PackRow) int {
		return strings.Compare(a.Name, b.Name)
	})
	if slices.EqualFunc(have, want, PackRow.equal) {
		return false, nil
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: replace packs: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM packs`); err != nil {
		return false, fmt.Errorf("store: replace packs: %w", err)
	}
	for _, r := range want {
		if err := putPack(ctx, tx, r); err != nil {
			return false, fmt.Errorf("store: replace packs: %s: %w", r.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: replace packs: %w", err)
	}
	return true, nil
}
