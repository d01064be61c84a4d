package store

// schemaAudit is migration 3: the hash-chained audit log.
const schemaAudit = `
CREATE TABLE audit (
	seq        INTEGER PRIMARY KEY,
	kind       TEXT NOT NULL,
	at         TEXT NOT NULL,
	body       TEXT NOT NULL,
	prev_hash  TEXT NOT NULL,
	hash       TEXT NOT NULL
);`
