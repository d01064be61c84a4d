package store

import "strings"

// schemaChat is migration 4: chats. A chat keeps its conversation (the
// messages exactly as the model saw them, tool results included), its
// Active Pack Set, which packs it opened and enabled, and the call classes
// the person allowed "for this chat". Pack bodies are never state: they live
// in the conversation, as the tool results that revealed them.
const schemaChat = `
CREATE TABLE chats (
	id         TEXT PRIMARY KEY,
	workspace  TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE TABLE chat_messages (
	chat         TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	role         TEXT NOT NULL,            -- user | assistant | tool
	content      TEXT NOT NULL DEFAULT '',
	tool_calls   TEXT,                     -- JSON array, assistant messages only
	tool_call_id TEXT NOT NULL DEFAULT '',
	is_error     INTEGER NOT NULL DEFAULT 0,
	at           TEXT NOT NULL,
	PRIMARY KEY (chat, seq)
);
CREATE TABLE chat_packs (
	chat          TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
	pack          TEXT NOT NULL,
	attached_at   TEXT NOT NULL,
	opened        INTEGER NOT NULL DEFAULT 0, -- open_docs succeeded: the docs are in the conversation
	tools_enabled INTEGER NOT NULL DEFAULT 0, -- enable_tools succeeded: its tools are offered
	PRIMARY KEY (chat, pack)
);
CREATE TABLE chat_approvals (
	chat     TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
	class    TEXT NOT NULL,                -- "read_file", "json-tools__query"
	approver TEXT NOT NULL,
	at       TEXT NOT NULL,
	PRIMARY KEY (chat, class)
);
CREATE TABLE chat_artifacts (
	chat       TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
	invocation TEXT NOT NULL,
	path       TEXT NOT NULL,              -- relative to the chat's workspace
	mime       TEXT NOT NULL,
	size       INTEGER NOT NULL,
	at         TEXT NOT NULL,
	PRIMARY KEY (chat, invocation, path)
);`

// schemaChatPostgres is schemaChat on PostgreSQL, but for a message's
// content, which is BYTEA: a message holds what a tool printed, and
// PostgreSQL's TEXT refuses a NUL byte and bytes that are not UTF-8, where
// SQLite's keeps them. A refused write would fail the turn.
var schemaChatPostgres = strings.Replace(postgresDDL(schemaChat),
	`content      TEXT COLLATE "C" NOT NULL DEFAULT ''`, `content      BYTEA NOT NULL DEFAULT ''`, 1)
