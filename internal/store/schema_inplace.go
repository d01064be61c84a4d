package store

// schemaInPlaceGrants is migration 11: the person's grants to packs used
// in place (discovered in a skills folder, not installed). A grant binds a
// folder at one content: inplace_grants holds the grants of each folder,
// all at the digest inplace_content records for it, with the SHA-256 of
// every file then, so a call after an edit can say which files changed.
// Granting a folder at another content starts over: its earlier grants go
// (RATIONALE.md, "Why are in-place grants kept apart from installed
// ones?").
const schemaInPlaceGrants = `
CREATE TABLE inplace_content (
	dir    TEXT PRIMARY KEY,   -- the pack's folder, absolute
	name   TEXT NOT NULL,
	digest TEXT NOT NULL,      -- packs.Digest of the folder when granted
	files  TEXT NOT NULL       -- JSON object: slash path -> hex SHA-256
);
CREATE TABLE inplace_grants (
	dir        TEXT NOT NULL REFERENCES inplace_content(dir) ON DELETE CASCADE,
	capability TEXT NOT NULL,
	resources  TEXT,            -- JSON array, NULL for everything requested
	scope      TEXT NOT NULL CHECK (scope IN ('chat', 'persistent')),
	chat       TEXT NOT NULL DEFAULT '',
	granted_at TEXT NOT NULL,
	PRIMARY KEY (dir, capability, scope, chat),
	CHECK ((scope = 'chat') = (chat <> ''))
);`
