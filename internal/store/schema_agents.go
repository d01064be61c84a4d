package store

// schemaAgents is the agents migration: agents (spec 003) and what a chat started
// from. An agent is a name, a system prompt, model settings and an ordered
// list of capabilities (installed packs, built-ins included, by name); the
// names are checked by internal/app when the agent is written, not by a
// constraint, so that a pack can be installed and removed without a
// migration. A chat keeps a copy of its agent's prompt and model settings:
// editing or deleting the agent later changes no conversation already
// under way.
const schemaAgents = `
CREATE TABLE agents (
	id            TEXT PRIMARY KEY,                 -- "agent_…"
	name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
	system_prompt TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',         -- '': the configured model
	max_tokens    INTEGER NOT NULL DEFAULT 0,       -- 0: the configured limit
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL
);
CREATE TABLE agent_capabilities (
	agent      TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	capability TEXT NOT NULL,                       -- a pack name
	position   INTEGER NOT NULL,                    -- lower comes first
	PRIMARY KEY (agent, capability)
);
CREATE INDEX agent_capabilities_position ON agent_capabilities(agent, position);
ALTER TABLE chats ADD COLUMN agent TEXT NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN system_prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 0;`

// schemaAgentsPostgres is schemaAgents on PostgreSQL, which has no NOCASE
// collation: a unique index on lower(name) keeps the names unique
// whatever their case, and the queries compare lower(name) on both
// databases. (An ICU collation would need a UTF-8 database.) Like
// postgresDDL's output, INTEGER is BIGINT and TEXT compares bytewise.
const schemaAgentsPostgres = `
CREATE TABLE agents (
	id            TEXT COLLATE "C" PRIMARY KEY,
	name          TEXT COLLATE "C" NOT NULL,
	system_prompt TEXT COLLATE "C" NOT NULL DEFAULT '',
	model         TEXT COLLATE "C" NOT NULL DEFAULT '',
	max_tokens    BIGINT NOT NULL DEFAULT 0,
	created_at    TEXT COLLATE "C" NOT NULL,
	updated_at    TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX agents_name ON agents(lower(name));
CREATE TABLE agent_capabilities (
	agent      TEXT COLLATE "C" NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	capability TEXT COLLATE "C" NOT NULL,
	position   BIGINT NOT NULL,
	PRIMARY KEY (agent, capability)
);
CREATE INDEX agent_capabilities_position ON agent_capabilities(agent, position);
ALTER TABLE chats ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN system_prompt TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN model TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN max_tokens BIGINT NOT NULL DEFAULT 0;`
