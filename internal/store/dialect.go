package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Dialect is the SQL database behind a DB. The queries in internal/ are
// written once, in the SQL that SQLite and PostgreSQL share; the few
// places where the two must differ ask the DB which one it is.
type Dialect int

const (
	SQLite   Dialect = iota // modernc.org/sqlite: one packs.db file, the default
	Postgres                // PostgreSQL through pgx: a store shared by replicas
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// IsURL reports whether target names a PostgreSQL store rather than a
// SQLite file.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// openPostgres opens a pool on the PostgreSQL database at url, through the
// dialect layer below.
func openPostgres(url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message quotes the URL, its password only masked at best:
		// say what is expected instead.
		return nil, errors.New("store: the store URL does not parse: write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMS]")
	}
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
	// Each connection is a server process that costs milliseconds to
	// start: keep as many idle as may be open (database/sql keeps two),
	// so a burst of calls does not open and close them by the dozen.
	db.SetMaxOpenConns(postgresConns)
	db.SetMaxIdleConns(postgresConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// postgresConns is the most connections one packs process opens to a
// PostgreSQL store; docs/deploy.md sizes max_connections from it.
const postgresConns = 16

// pgConnector hands out pgConns: pgx's database/sql connections, with
// each query's SQLite placeholders rewritten for PostgreSQL.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{cn.(*stdlib.Conn)}, nil
}

// pgConn is a pgx connection that takes SQLite's SQL: "?" and "?N"
// placeholders become "$N", and a Go bool becomes 0 or 1, as SQLite stores
// it (the schema's flags are INTEGER columns on both). Everything else is
// pgx's own.
type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(context.Background(), placeholders(query))
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, placeholders(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, placeholders(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, placeholders(query), args)
}

func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return c.Conn.CheckNamedValue(nv)
}

// scanSQL calls word for each bare word of q outside string literals,
// quoted identifiers and comments, and param for each "?" or "?N" there;
// each returns what replaces its token. A nil word or param keeps the
// token.
func scanSQL(q string, word func(string) string, param func(n int, numbered bool) string) string {
	var b strings.Builder
	b.Grow(len(q) + 8)
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			j = min(j+1, len(q)) // '' inside a literal is two literals back to back
			b.WriteString(q[i:j])
			i = j
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				j = len(q) - i - 4
			}
			b.WriteString(q[i : i+j+4])
			i += j + 4
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(q[i+1 : j])
			if param == nil {
				b.WriteString(q[i:j])
			} else {
				b.WriteString(param(n, j > i+1))
			}
			i = j
		case isWordByte(c) && (i == 0 || !isWordByte(q[i-1])):
			j := i
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			if word == nil {
				b.WriteString(q[i:j])
			} else {
				b.WriteString(word(q[i:j]))
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '$'
}

// placeholders rewrites SQLite's "?" and "?N" parameters as PostgreSQL's
// "$N". A bare "?" takes the number after the largest one so far, as in
// SQLite.
func placeholders(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	last := 0
	return scanSQL(q, nil, func(n int, numbered bool) string {
		if !numbered {
			n = last + 1
		}
		last = max(last, n)
		return "$" + strconv.Itoa(n)
	})
}

// postgresDDL is a migration's SQL for PostgreSQL. The migrations are
// written in SQLite's types, which mean something else there: INTEGER is
// 64 bits in SQLite and 32 in PostgreSQL, REAL 8 bytes and 4, and TEXT
// compares byte by byte in SQLite but by the database's locale in
// PostgreSQL. So INTEGER becomes BIGINT, REAL DOUBLE PRECISION, BLOB
// BYTEA, and TEXT compares in the "C" collation (bytewise), so an ORDER BY
// lists in the same order on both.
func postgresDDL(q string) string {
	return scanSQL(q, func(w string) string {
		switch strings.ToUpper(w) {
		case "INTEGER":
			return "BIGINT"
		case "REAL":
			return "DOUBLE PRECISION"
		case "BLOB":
			return "BYTEA"
		case "TEXT":
			return w + ` COLLATE "C"`
		}
		return w
	}, nil)
}
