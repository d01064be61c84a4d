package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func agentRow(id, name string, caps ...string) AgentRow {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	return AgentRow{ID: id, Name: name, SystemPrompt: "You help.", Model: "m1", MaxTokens: 512, Capabilities: caps, Created: at, Updated: at}
}

func TestAgentsRoundTrip(t *testing.T) {
	EachBackend(t, func(t *testing.T, openTest func(*testing.T) *DB) {
		ctx := context.Background()
		db := openTest(t)
		want := agentRow("agent_1", "Research Assistant", "web_fetch", "current_time", "notes")
		if err := db.PutAgent(ctx, want); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{"agent_1", "Research Assistant", "research assistant"} {
			got, err := db.Agent(ctx, ref)
			if err != nil {
				t.Fatalf("Agent(%q): %v", ref, err)
			}
			if got.ID != want.ID || got.Name != want.Name || got.SystemPrompt != want.SystemPrompt || got.Model != want.Model ||
				got.MaxTokens != want.MaxTokens || !slices.Equal(got.Capabilities, want.Capabilities) ||
				!got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) {
				t.Errorf("Agent(%q) = %+v, want %+v", ref, got, want)
			}
		}
		// Replacing keeps the order given, drops what is gone, keeps created.
		upd := want
		upd.Capabilities = []string{"notes", "web_fetch"}
		upd.Updated = want.Updated.Add(time.Hour)
		upd.Created = time.Time{}
		if err := db.PutAgent(ctx, upd); err != nil {
			t.Fatal(err)
		}
		got, err := db.Agent(ctx, "agent_1")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Capabilities, upd.Capabilities) || !got.Updated.Equal(upd.Updated) || !got.Created.Equal(want.Created) {
			t.Errorf("after update: %+v", got)
		}
		// A second agent may not take the name, in any case.
		if err := db.PutAgent(ctx, agentRow("agent_2", "RESEARCH assistant")); !errors.Is(err, ErrAgentExists) {
			t.Errorf("same name: got %v, want ErrAgentExists", err)
		}
		if err := db.PutAgent(ctx, agentRow("agent_2", "Writer")); err != nil {
			t.Fatal(err)
		}
		list, err := db.Agents(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "Research Assistant" || list[1].Name != "Writer" || len(list[1].Capabilities) != 0 {
			t.Fatalf("Agents = %+v, %v", list, err)
		}
		if err := db.DeleteAgent(ctx, "agent_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Agent(ctx, "agent_1"); !errors.Is(err, ErrAgentNotFound) {
			t.Errorf("deleted: got %v", err)
		}
		if err := db.DeleteAgent(ctx, "agent_1"); !errors.Is(err, ErrAgentNotFound) {
			t.Errorf("deleted twice: got %v", err)
		}
		var n int
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM agent_capabilities WHERE agent = 'agent_1'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("capabilities of a deleted agent: %d rows, %v", n, err)
		}
	})
}

// TestMigrateAgentsOnExistingDB: a packs.db at the schema before the
// agents migration, with a chat in it, migrates to the newest: the chat
// keeps its rows and gets empty agent settings.
func TestMigrateAgentsOnExistingDB(t *testing.T) {
	ctx := context.Background()
	before := slices.IndexFunc(migrations, func(m migration) bool { return m.name == "agents" })
	if before < 0 {
		t.Fatal("no agents migration")
	}
	path := filepath.Join(t.TempDir(), "packs.db")
	old, err := sql.Open("sqlite", "file:"+uriPath(path)+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:before] {
		if _, err := old.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("migration %d: %v", m.version, err)
		}
		if _, err := old.ExecContext(ctx, `INSERT INTO schema_migrations VALUES(?, ?, 'then')`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO chats(id, workspace, created_at) VALUES('chat_old', '/w', '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO chat_messages(chat, seq, role, content, at) VALUES('chat_old', 0, 'user', 'hi', '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version int
	if err := db.SQL().QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&version); err != nil || version != len(migrations) {
		t.Fatalf("schema version = %d, %v; want %d", version, err, len(migrations))
	}
	var ws, agent, prompt, model string
	var maxTokens, msgs int
	if err := db.SQL().QueryRowContext(ctx, `SELECT workspace, agent, system_prompt, model, max_tokens FROM chats WHERE id = 'chat_old'`).
		Scan(&ws, &agent, &prompt, &model, &maxTokens); err != nil {
		t.Fatal(err)
	}
	if ws != "/w" || agent != "" || prompt != "" || model != "" || maxTokens != 0 {
		t.Errorf("old chat = %q %q %q %q %d", ws, agent, prompt, model, maxTokens)
	}
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM chat_messages WHERE chat = 'chat_old'`).Scan(&msgs); err != nil || msgs != 1 {
		t.Errorf("old chat's messages: %d, %v", msgs, err)
	}
	if err := db.PutAgent(ctx, agentRow("agent_1", "A", "x")); err != nil {
		t.Errorf("an agent in the migrated db: %v", err)
	}
}
