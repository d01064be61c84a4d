// Package store is the SQLite state of packs: one packs.db in the state
// directory, in WAL mode, with versioned migrations. It uses modernc.org/sqlite
// (pure Go) so the binary stays static and works air-gapped.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open packs.db. It is safe for concurrent use.
type DB struct {
	sql *sql.DB

	// callGrantsStmt reads the grants that apply to one call (see
	// CallGrants): prepared once, since every tool call runs it.
	callGrantsOnce sync.Once
	callGrantsStmt *sql.Stmt
	callGrantsErr  error

	// disabled asks whether one pack is disabled (see CheckEnabled):
	// prepared once, since every tool call asks.
	disabledOnce sync.Once
	disabled     *sql.Stmt
	disabledErr  error
}

// Open opens (creating if needed) the database at path and migrates it to the
// newest schema version.
func Open(ctx context.Context, path string) (*DB, error) {
	dsn := "file:" + uriPath(path) + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := &DB{sql: sqldb}
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("store: migrate %s: %w", path, err)
	}
	return db, nil
}

// uriPath escapes path for a "file:" URI: SQLite ends the file name at "?"
// or "#" and decodes "%XX", so a directory named "a#1" would otherwise open
// a file named "a", without the DSN's pragmas.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// SQL returns the underlying handle for the packages in internal/ that keep
// their own tables here.
func (db *DB) SQL() *sql.DB { return db.sql }

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// migration is one schema step. Versions start at 1 and never change once
// released; a new step gets the next number.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations is the whole schema history, oldest first.
var migrations = []migration{
	{1, "packs", schemaPacks},
	{2, "grants", schemaGrants},
	{3, "audit", schemaAudit},
	{4, "chat", schemaChat},
	{5, "audit_mac", schemaAuditMAC},
	{6, "approval_queue", schemaApprovals},
	{7, "agents", schemaAgents},
	{8, "disabled_packs", schemaPackState},
	{9, "lock_sync", schemaLockSync},
	{10, "pack_index", schemaPackIndex},
	{11, "inplace_grants", schemaInPlaceGrants},
	{12, "reserved", schemaReserved12},
	{13, "audit_person", schemaPerson},
}

func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return err
	}
	var have int
	if err := db.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return err
	}
	if have > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade packs", have, len(migrations))
	}
	for _, m := range migrations[have:] {
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES(?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))`, m.version, m.name); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
