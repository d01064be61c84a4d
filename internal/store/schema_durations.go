package store

// schemaCallDurations is migration 12. An invocation row of the audit log
// keeps how long the gate waited for a decision and how long the approved
// call ran (waited_us, ran_us, in microseconds; 0 in rows written before),
// so "waited 12 s for you, ran 41 ms" can be read back and queried. The
// same figures are in the row's hashed body; audit.Verify reports a row
// whose columns disagree with it. A chat records which front end opened it
// (via: "" for the person's own, packs chat or the web app; "mcp" for an
// MCP session) and the client's name from MCP's initialize, so the web
// app lists an MCP session as such and attaching a pack there is not taken
// for the person's consent (capability.Consent).
const schemaCallDurations = `
ALTER TABLE audit ADD COLUMN waited_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE audit ADD COLUMN ran_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE chats ADD COLUMN via TEXT NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN client_name TEXT NOT NULL DEFAULT '';`
