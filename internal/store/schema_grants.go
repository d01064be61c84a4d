package store

// schemaGrants is migration 2: the person's capability grants.
const schemaGrants = `
CREATE TABLE grants (
	pack       TEXT NOT NULL,
	capability TEXT NOT NULL,
	resources  TEXT,            -- JSON array, NULL for everything requested
	scope      TEXT NOT NULL,   -- once | chat | persistent
	chat       TEXT NOT NULL DEFAULT '',
	granted_at TEXT NOT NULL,
	PRIMARY KEY (pack, capability, chat)
);`
