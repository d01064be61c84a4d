package store

// schemaPerson is migration 13: who did it. Each audit row records the
// person (the OIDC subject and issuer; both empty for the token holder and
// the person at the terminal) and the client (web, cli, or the MCP
// client's name); a row with a person is chained under packs-audit-v2,
// which covers these fields (internal/audit). Each chat belongs to the
// person who started it.
const schemaPerson = `
ALTER TABLE audit ADD COLUMN person TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_person ON audit(person, issuer);
ALTER TABLE chats ADD COLUMN owner_subject TEXT NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN owner_issuer TEXT NOT NULL DEFAULT '';
CREATE INDEX chats_owner ON chats(owner_subject, owner_issuer);`
