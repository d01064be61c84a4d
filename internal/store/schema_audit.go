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

// schemaAuditMAC is migration 5: each row gets an HMAC-SHA256 of its seq
// and hash under a key kept outside packs.db (the state directory's
// audit.key), so the chain cannot be recomputed by someone who can write
// packs.db but cannot read the key. Rows written before the key existed keep
// an empty mac. audit_key records which key the log is under and from which
// seq, so a missing or foreign key file is named as such.
const schemaAuditMAC = `
ALTER TABLE audit ADD COLUMN mac TEXT NOT NULL DEFAULT '';
CREATE TABLE audit_key (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	key_id    TEXT NOT NULL,
	first_seq INTEGER NOT NULL
);`
