// Package store is the state of packs, with versioned migrations: by
// default one packs.db in the state directory, in WAL mode, through
// modernc.org/sqlite (pure Go, so the binary stays static and works
// air-gapped); for a team, a PostgreSQL database that several replicas
// share (dialect.go).
package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open store. It is safe for concurrent use.
type DB struct {
	sql     *sql.DB
	dialect Dialect

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

	// listen wakes the waiters of queued calls on PostgreSQL (notify.go).
	listen listener
}

// Open opens the store at target and migrates it to the newest schema
// version: a postgres:// URL (see IsURL) opens that PostgreSQL database,
// anything else is the path of a SQLite file, created if needed.
func Open(ctx context.Context, target string) (*DB, error) {
	if IsURL(target) {
		sqldb, err := openPostgres(target)
		if err != nil {
			return nil, err
		}
		db := &DB{sql: sqldb, dialect: Postgres}
		if err := db.migrate(ctx); err != nil {
			sqldb.Close()
			return nil, fmt.Errorf("store: migrate the PostgreSQL store: %w", err)
		}
		return db, nil
	}
	path := target
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

// Dialect is the database behind db.
func (db *DB) Dialect() Dialect { return db.dialect }

// SQL returns the underlying handle for the packages in internal/ that keep
// their own tables here.
func (db *DB) SQL() *sql.DB { return db.sql }

// Close closes the database.
func (db *DB) Close() error {
	db.listen.stop()
	return db.sql.Close()
}

// migration is one schema step. Versions start at 1 and never change once
// released; a new step gets the next number. Its sql is written once, for
// both databases, in the SQL they share (postgresDDL maps SQLite's types
// for PostgreSQL); postgresOnly replaces it there where the two must
// differ.
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
	{12, "call_durations", schemaCallDurations},
	{13, "audit_person", schemaPerson},
}

// postgresOnly holds, by version, the migrations PostgreSQL runs in place
// of the shared SQL, written for it as they are (not through postgresDDL).
var postgresOnly = map[int]string{
	4: schemaChatPostgres,   // message content that is not UTF-8 text
	7: schemaAgentsPostgres, // SQLite's NOCASE collation
}

// migrationLock is the key of the PostgreSQL advisory lock migrate holds:
// replicas that start together migrate one after the other, and each
// after the first finds nothing left to do.
const migrationLock = 0x7061636b735f6d67 // "packs_mg"

func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if db.dialect == Postgres {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, int64(migrationLock)); err != nil {
			return err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(?)`, int64(migrationLock))
	}
	if _, err := conn.ExecContext(ctx, db.ddl(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`)); err != nil {
		return err
	}
	var have int
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return err
	}
	if have > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade packs", have, len(migrations))
	}
	for _, m := range migrations[have:] {
		q := db.ddl(m.sql)
		if only, ok := postgresOnly[m.version]; ok && db.dialect == Postgres {
			q = only
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES(?, ?, ?)`,
			m.version, m.name, time.Now().UTC().Format(TimeFormat)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// ddl is a migration's SQL for db's dialect.
func (db *DB) ddl(q string) string {
	if db.dialect == Postgres {
		return postgresDDL(q)
	}
	return q
}
