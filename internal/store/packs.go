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
	Resolved     string                    // what the source named when fetched (dist.LockEntry.Resolved)
	Signer       string                    // the verified signer's key, or ""
}

// PackCapability is one requested capability of an installed pack.
type PackCapability struct {
	Granted   bool     `json:"granted"`
	Resources []string `json:"resources"`
}

func (r PackRow) equal(o PackRow) bool {
	return r.Name == o.Name && r.Version == o.Version && r.Source == o.Source &&
		r.Integrity == o.Integrity && r.InstalledAt.Equal(o.InstalledAt) && r.Resolved == o.Resolved && r.Signer == o.Signer &&
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
	_, err = db.ExecContext(ctx, `INSERT INTO packs(name, version, source, integrity, installed_at, capabilities, resolved, signer)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET version = excluded.version, source = excluded.source,
			integrity = excluded.integrity, installed_at = excluded.installed_at, capabilities = excluded.capabilities,
			resolved = excluded.resolved, signer = excluded.signer`,
		r.Name, r.Version, r.Source, r.Integrity, r.InstalledAt.UTC().Format(time.RFC3339Nano), string(caps), r.Resolved, r.Signer)
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
	rows, err := db.sql.QueryContext(ctx, `SELECT name, version, source, integrity, installed_at, capabilities, resolved, signer FROM packs `+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("store: query packs: %w", err)
	}
	defer rows.Close()
	var out []PackRow
	for rows.Next() {
		var name, version, source, integrity, at, caps, resolved, signer string
		if err := rows.Scan(&name, &version, &source, &integrity, &at, &caps, &resolved, &signer); err != nil {
			return nil, fmt.Errorf("store: query packs: %w", err)
		}
		r, err := scanPack(name, version, source, integrity, at, caps)
		if err != nil {
			return nil, err
		}
		r.Resolved, r.Signer = resolved, signer
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query packs: %w", err)
	}
	return out, nil
}

// scanPack builds a row from its columns' text.
func scanPack(name, version, source, integrity, at, caps string) (PackRow, error) {
	r := PackRow{Name: name, Version: version, Source: source, Integrity: integrity}
	var err error
	if r.InstalledAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return PackRow{}, fmt.Errorf("store: pack %s: installed_at %q: %w", name, at, err)
	}
	if err := json.Unmarshal([]byte(caps), &r.Capabilities); err != nil {
		return PackRow{}, fmt.Errorf("store: pack %s: capabilities: %w", name, err)
	}
	if len(r.Capabilities) == 0 {
		r.Capabilities = nil
	}
	return r, nil
}

// PacksSyncedWith returns the packs.lock hash and file stamp recorded by
// MarkPacksSynced, or "" when none was.
func (db *DB) PacksSyncedWith(ctx context.Context) (hash, fileStamp string, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT stamp, file_stamp FROM lock_sync WHERE id = 1`).Scan(&hash, &fileStamp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("store: lock sync: %w", err)
	}
	return hash, fileStamp, nil
}

// MarkPacksSynced records that the packs table mirrors the packs.lock whose
// SHA-256 is hash and whose file stamp (packs.Stamp's text) is fileStamp;
// fileStamp is "" when the stamp is too recent to trust.
func (db *DB) MarkPacksSynced(ctx context.Context, hash, fileStamp string) error {
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO lock_sync(id, stamp, file_stamp) VALUES(1, ?, ?)
		ON CONFLICT(id) DO UPDATE SET stamp = excluded.stamp, file_stamp = excluded.file_stamp`, hash, fileStamp); err != nil {
		return fmt.Errorf("store: lock sync: %w", err)
	}
	return nil
}

// SyncedPack returns the row of name when the packs table mirrors the
// packs.lock whose file stamp is fileStamp (see MarkPacksSynced): synced
// is false when it does not, found false when there is no such row. It is
// one read, whatever the number of packs.
func (db *DB) SyncedPack(ctx context.Context, fileStamp, name string) (r PackRow, found, synced bool, err error) {
	if fileStamp == "" {
		return PackRow{}, false, false, nil
	}
	// One statement, so the stamp and the row are read from the same
	// snapshot: no row means another packs.lock, a NULL name no such pack.
	var n, version, source, integrity, at, caps, resolved, signer sql.NullString
	err = db.sql.QueryRowContext(ctx, `SELECT p.name, p.version, p.source, p.integrity, p.installed_at, p.capabilities, p.resolved, p.signer
		FROM lock_sync s LEFT JOIN packs p ON p.name = ? WHERE s.id = 1 AND s.file_stamp = ?`, name, fileStamp).
		Scan(&n, &version, &source, &integrity, &at, &caps, &resolved, &signer)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return PackRow{}, false, false, nil
	case err != nil:
		return PackRow{}, false, false, fmt.Errorf("store: synced pack %s: %w", name, err)
	case !n.Valid:
		return PackRow{}, false, true, nil
	}
	r, err = scanPack(n.String, version.String, source.String, integrity.String, at.String, caps.String)
	r.Resolved, r.Signer = resolved.String, signer.String
	return r, err == nil, err == nil, err
}

// PackCheck is what hashing an installed pack's folder found (packs.FolderCheck):
// its digest and, as JSON, the stamp of each file.
type PackCheck struct {
	Digest string
	Stamps []byte
}

// PackChecks returns every recorded check, by pack name.
func (db *DB) PackChecks(ctx context.Context) (map[string]PackCheck, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT name, digest, stamps FROM pack_checks`)
	if err != nil {
		return nil, fmt.Errorf("store: pack checks: %w", err)
	}
	defer rows.Close()
	out := map[string]PackCheck{}
	for rows.Next() {
		var name string
		var c PackCheck
		if err := rows.Scan(&name, &c.Digest, &c.Stamps); err != nil {
			return nil, fmt.Errorf("store: pack checks: %w", err)
		}
		out[name] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pack checks: %w", err)
	}
	return out, nil
}

// RecordPackChecks stores put, by pack name, and deletes the checks of the
// packs in drop, in one transaction.
func (db *DB) RecordPackChecks(ctx context.Context, put map[string]PackCheck, drop []string) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: record pack checks: %w", err)
	}
	defer tx.Rollback()
	for name, c := range put {
		if _, err := tx.ExecContext(ctx, `INSERT INTO pack_checks(name, digest, stamps) VALUES(?, ?, ?)
			ON CONFLICT(name) DO UPDATE SET digest = excluded.digest, stamps = excluded.stamps`, name, c.Digest, string(c.Stamps)); err != nil {
			return fmt.Errorf("store: record pack checks: %s: %w", name, err)
		}
	}
	for _, name := range drop {
		if _, err := tx.ExecContext(ctx, `DELETE FROM pack_checks WHERE name = ?`, name); err != nil {
			return fmt.Errorf("store: record pack checks: %s: %w", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: record pack checks: %w", err)
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

// PackSummaries returns the summaries the program recorded, by integrity.
func (db *DB) PackSummaries(ctx context.Context, program string) (map[string][]byte, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT integrity, summary FROM pack_summaries WHERE program = ?`, program)
	if err != nil {
		return nil, fmt.Errorf("store: pack summaries: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var integrity string
		var summary []byte
		if err := rows.Scan(&integrity, &summary); err != nil {
			return nil, fmt.Errorf("store: pack summaries: %w", err)
		}
		out[integrity] = summary
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pack summaries: %w", err)
	}
	return out, nil
}

// RecordPackSummaries stores put (summaries by integrity) for the program,
// replacing any other program's, and deletes every summary whose integrity
// is not in keep, in one transaction.
func (db *DB) RecordPackSummaries(ctx context.Context, program string, put map[string][]byte, keep map[string]bool) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: record pack summaries: %w", err)
	}
	defer tx.Rollback()
	for integrity, summary := range put {
		if _, err := tx.ExecContext(ctx, `INSERT INTO pack_summaries(integrity, program, summary) VALUES(?, ?, ?)
			ON CONFLICT(integrity) DO UPDATE SET program = excluded.program, summary = excluded.summary`, integrity, program, string(summary)); err != nil {
			return fmt.Errorf("store: record pack summaries: %w", err)
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT integrity FROM pack_summaries`)
	if err != nil {
		return fmt.Errorf("store: record pack summaries: %w", err)
	}
	var stale []string
	for rows.Next() {
		var integrity string
		if err := rows.Scan(&integrity); err != nil {
			rows.Close()
			return fmt.Errorf("store: record pack summaries: %w", err)
		}
		if !keep[integrity] {
			stale = append(stale, integrity)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return fmt.Errorf("store: record pack summaries: %w", err)
	}
	rows.Close()
	for _, integrity := range stale {
		if _, err := tx.ExecContext(ctx, `DELETE FROM pack_summaries WHERE integrity = ?`, integrity); err != nil {
			return fmt.Errorf("store: record pack summaries: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: record pack summaries: %w", err)
	}
	return nil
}
