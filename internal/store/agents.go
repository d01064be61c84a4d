package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrAgentNotFound is returned for an agent that has no row.
	ErrAgentNotFound = errors.New("store: agent not found")
	// ErrAgentExists is returned when another agent has the name (names
	// compare without case).
	ErrAgentExists = errors.New("store: an agent of that name exists")
)

// AgentRow is one agent: a system prompt, model settings and an ordered
// list of capabilities (pack names), earlier first.
type AgentRow struct {
	ID           string
	Name         string
	SystemPrompt string
	Model        string // "" for the configured model
	MaxTokens    int    // 0 for the configured limit
	Capabilities []string
	Created      time.Time
	Updated      time.Time
}

// PutAgent inserts r, or replaces the agent of r.ID with it, capabilities
// included, in one transaction. Another agent with the same name (in any
// case) is ErrAgentExists.
func (db *DB) PutAgent(ctx context.Context, r AgentRow) error {
	if err := db.putAgent(ctx, r); err != nil {
		return fmt.Errorf("store: put agent %s: %w", r.Name, err)
	}
	return nil
}

func (db *DB) putAgent(ctx context.Context, r AgentRow) error {
	// On SQLite (_txlock=immediate) the name check and the write are one
	// step; on PostgreSQL the unique index on lower(name) refuses the
	// second of two replicas that race past the check.
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var other string
	switch err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE lower(name) = lower(?) AND id != ?`, r.Name, r.ID).Scan(&other); {
	case err == nil:
		return ErrAgentExists
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO agents(id, name, system_prompt, model, max_tokens, created_at, updated_at)
		VALUES(?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, system_prompt = excluded.system_prompt, model = excluded.model,
			max_tokens = excluded.max_tokens, updated_at = excluded.updated_at`,
		r.ID, r.Name, r.SystemPrompt, r.Model, r.MaxTokens, stamp(r.Created), stamp(r.Updated))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM agent_capabilities WHERE agent = ?`, r.ID); err != nil {
		return err
	}
	for i, c := range r.Capabilities {
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_capabilities(agent, capability, position) VALUES(?, ?, ?)`, r.ID, c, i); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Agent returns the agent whose id is ref, or else whose name is ref (in
// any case), or an error wrapping ErrAgentNotFound.
func (db *DB) Agent(ctx context.Context, ref string) (AgentRow, error) {
	rows, err := db.queryAgents(ctx, `WHERE id = ? OR lower(name) = lower(?) ORDER BY id = ? DESC LIMIT 1`, ref, ref, ref)
	if err != nil {
		return AgentRow{}, err
	}
	if len(rows) == 0 {
		return AgentRow{}, fmt.Errorf("%w: %q", ErrAgentNotFound, ref)
	}
	return rows[0], nil
}

// Agents returns every agent, ordered by name.
func (db *DB) Agents(ctx context.Context) ([]AgentRow, error) {
	return db.queryAgents(ctx, `ORDER BY lower(name)`)
}

// DeleteAgent deletes the agent of id and its capability list. Chats
// started from it keep their copy of its settings.
func (db *DB) DeleteAgent(ctx context.Context, id string) error {
	res, err := db.sql.ExecContext(ctx, `DELETE FROM agents WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("store: delete agent %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: %q", ErrAgentNotFound, id)
	}
	return nil
}

func (db *DB) queryAgents(ctx context.Context, tail string, args ...any) ([]AgentRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, name, system_prompt, model, max_tokens, created_at, updated_at FROM agents `+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("store: query agents: %w", err)
	}
	var out []AgentRow
	for rows.Next() {
		var r AgentRow
		var created, updated string
		if err := rows.Scan(&r.ID, &r.Name, &r.SystemPrompt, &r.Model, &r.MaxTokens, &created, &updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: query agents: %w", err)
		}
		if r.Created, err = time.Parse(time.RFC3339Nano, created); err == nil {
			r.Updated, err = time.Parse(time.RFC3339Nano, updated)
		}
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: agent %s: %w", r.ID, err)
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query agents: %w", err)
	}
	for i := range out {
		if out[i].Capabilities, err = db.agentCapabilities(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *DB) agentCapabilities(ctx context.Context, id string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT capability FROM agent_capabilities WHERE agent = ? ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("store: agent %s: capabilities: %w", id, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("store: agent %s: capabilities: %w", id, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
