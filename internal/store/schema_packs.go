package store

// schemaPacks is migration 1: installed packs.
const schemaPacks = `
CREATE TABLE packs (
	name        TEXT PRIMARY KEY,
	version     TEXT NOT NULL DEFAULT '',
	source      TEXT NOT NULL,
	integrity   TEXT NOT NULL,
	installed_at TEXT NOT NULL
);`
