package store

// schemaApprovals is migration 6: calls waiting for a person who approves
// them elsewhere than the client that made them (an MCP client that cannot
// elicit): `packs approve` in a terminal or the web app's queue. The
// process that serves the call and the one where the person decides are
// different processes; this table is where they meet. A row is decided at
// most once: verdict goes from NULL to run_once, allow_chat, deny or expired,
// and never back.
const schemaApprovals = `
CREATE TABLE approval_queue (
	id           TEXT PRIMARY KEY,          -- the call's invocation id
	chat         TEXT NOT NULL DEFAULT '',
	client       TEXT NOT NULL DEFAULT '',  -- "mcp:claude-ai"
	pack         TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL,
	class        TEXT NOT NULL,             -- "read_file", "json-tools__query"
	arguments    TEXT NOT NULL,             -- JSON, redacted as the audit log redacts it
	capabilities TEXT NOT NULL DEFAULT '[]',-- JSON array of capability names
	touches      TEXT NOT NULL DEFAULT '[]',-- JSON array: paths, hosts, commands
	created_at   TEXT NOT NULL,             -- TimeFormat, UTC
	expires_at   TEXT NOT NULL,
	verdict      TEXT CHECK (verdict IN ('run_once', 'allow_chat', 'deny', 'expired')),
	decided_by   TEXT NOT NULL DEFAULT '',
	decided_at   TEXT
);
CREATE INDEX approval_queue_open ON approval_queue(verdict, expires_at);`
