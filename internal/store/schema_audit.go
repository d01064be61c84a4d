package store

// schemaAudit is migration 3: the hash-chained audit log (written by
// internal/audit). Each row's hash covers the previous row's hash and the
// row's canonical content, so an edit, a deletion or a reordering breaks the
// chain. audit_head holds the newest seq and hash, written in the same
// transaction as the rows, so cutting rows off the end is detected too.
const schemaAudit = `
CREATE TABLE audit (
	seq        INTEGER PRIMARY KEY,
	kind       TEXT NOT NULL,             -- invocation | exercise
	at         TEXT NOT NULL,             -- store.TimeFormat, UTC
	pack       TEXT NOT NULL DEFAULT '',
	tool       TEXT NOT NULL DEFAULT '',
	invocation TEXT NOT NULL DEFAULT '',
	body       TEXT NOT NULL,             -- JSON, redacted before it is stored
	prev_hash  TEXT NOT NULL,
	hash       TEXT NOT NULL
);
CREATE INDEX audit_pack_at ON audit(pack, at);
CREATE INDEX audit_at ON audit(at);
CREATE TABLE audit_head (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	seq  INTEGER NOT NULL,
	hash TEXT NOT NULL
);`
