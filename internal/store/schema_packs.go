package store

// schemaPacks is migration 1: installed packs. It mirrors packs.lock, which
// stays the source of truth for integrity; internal/app rewrites these rows
// from the lockfile whenever they differ.
const schemaPacks = `
CREATE TABLE packs (
	name         TEXT PRIMARY KEY,
	version      TEXT NOT NULL DEFAULT '',
	source       TEXT NOT NULL,
	integrity    TEXT NOT NULL,
	installed_at TEXT NOT NULL,  -- RFC 3339, UTC, nanoseconds
	capabilities TEXT NOT NULL DEFAULT '{}'  -- JSON: {"network": {"granted": true, "resources": [...]}, ...}
);`
