package store

// schemaGrants is migration 2: the person's capability grants. (The call
// classes allowed "for this chat" live with the chat, in schema_chat.go.)
//
// A grant row is keyed by pack, capability, scope and chat: a persistent
// grant has an empty chat, a chat grant names its chat, a once grant is deleted by
// the call that uses it. Revoking keeps the row with revoked_at set, so a
// denial can say "revoked" rather than "never granted"; granting again
// clears it.
const schemaGrants = `
CREATE TABLE grants (
	pack       TEXT NOT NULL,
	capability TEXT NOT NULL,
	resources  TEXT,            -- JSON array, NULL for everything requested
	scope      TEXT NOT NULL CHECK (scope IN ('once', 'chat', 'persistent')),
	chat       TEXT NOT NULL DEFAULT '',
	granted_at TEXT NOT NULL,
	revoked_at TEXT,
	PRIMARY KEY (pack, capability, scope, chat),
	CHECK ((scope = 'chat') = (chat <> '') OR scope = 'once')
);`
