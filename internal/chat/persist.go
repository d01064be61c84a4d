package chat

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/packs-run/packs/internal/llm"
)

// chatStore keeps chats in the tables of migration 4
// (internal/store/schema_chat.go).
type chatStore struct {
	db *sql.DB
}

func stamp3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (c chatStore) createChat(ctx context.Context, id, workspace string) error {
	at := stamp3339(now())
	if _, err := c.db.ExecContext(ctx, `INSERT INTO chats(id, workspace, created_at, updated_at) VALUES(?, ?, ?, ?)`, id, workspace, at, at); err != nil {
		return fmt.Errorf("chat: create %s: %w", id, err)
	}
	return nil
}

func (c chatStore) loadChat(ctx context.Context, id string) (workspace string, err error) {
	err = c.db.QueryRowContext(ctx, `SELECT workspace FROM chats WHERE id = ?`, id).Scan(&workspace)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: no chat %q: start a new chat without --chat, or check the id", ErrNotFound, id)
	}
	if err != nil {
		return "", fmt.Errorf("chat: load %s: %w", id, err)
	}
	return workspace, nil
}

// appendMessages stores msgs as the messages numbered from seq on, in one
// transaction.
func (c chatStore) appendMessages(ctx context.Context, chat string, seq int, msgs ...llm.Message) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("chat: save messages: %w", err)
	}
	defer tx.Rollback()
	at := stamp3339(now())
	for i, m := range msgs {
		var calls any
		if len(m.ToolCalls) > 0 {
			b, err := json.Marshal(m.ToolCalls)
			if err != nil {
				return fmt.Errorf("chat: save messages: %w", err)
			}
			calls = string(b)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages(chat, seq, role, content, tool_calls, tool_call_id, is_error, at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
			chat, seq+i, string(m.Role), m.Content, calls, m.ToolCallID, m.IsError, at); err != nil {
			return fmt.Errorf("chat: save messages: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chats SET updated_at = ? WHERE id = ?`, at, chat); err != nil {
		return fmt.Errorf("chat: save messages: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("chat: save messages: %w", err)
	}
	return nil
}

func (c chatStore) loadMessages(ctx context.Context, chat string) ([]llm.Message, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT role, content, tool_calls, tool_call_id, is_error FROM chat_messages WHERE chat = ? ORDER BY seq`, chat)
	if err != nil {
		return nil, fmt.Errorf("chat: load messages: %w", err)
	}
	defer rows.Close()
	var out []llm.Message
	for rows.Next() {
		var (
			m     llm.Message
			role  string
			calls sql.NullString
		)
		if err := rows.Scan(&role, &m.Content, &calls, &m.ToolCallID, &m.IsError); err != nil {
			return nil, fmt.Errorf("chat: load messages: %w", err)
		}
		m.Role = llm.Role(role)
		if calls.Valid {
			if err := json.Unmarshal([]byte(calls.String), &m.ToolCalls); err != nil {
				return nil, fmt.Errorf("chat: load messages: tool calls of message %d: %w", len(out), err)
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

type packRow struct {
	pack            string
	opened, enabled bool
}

func (c chatStore) loadPacks(ctx context.Context, chat string) ([]packRow, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT pack, opened, tools_enabled FROM chat_packs WHERE chat = ? ORDER BY attached_at, pack`, chat)
	if err != nil {
		return nil, fmt.Errorf("chat: load packs: %w", err)
	}
	defer rows.Close()
	var out []packRow
	for rows.Next() {
		var r packRow
		if err := rows.Scan(&r.pack, &r.opened, &r.enabled); err != nil {
			return nil, fmt.Errorf("chat: load packs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// savePack records an attached pack; opened and enabled only ever turn on.
func (c chatStore) savePack(ctx context.Context, chat, pack string, opened, enabled bool) error {
	_, err := c.db.ExecContext(ctx, `INSERT INTO chat_packs(chat, pack, attached_at, opened, tools_enabled) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(chat, pack) DO UPDATE SET opened = opened OR excluded.opened, tools_enabled = tools_enabled OR excluded.tools_enabled`,
		chat, pack, stamp3339(now()), opened, enabled)
	if err != nil {
		return fmt.Errorf("chat: save pack %s: %w", pack, err)
	}
	return nil
}

func (c chatStore) deletePack(ctx context.Context, chat, pack string) error {
	if _, err := c.db.ExecContext(ctx, `DELETE FROM chat_packs WHERE chat = ? AND pack = ?`, chat, pack); err != nil {
		return fmt.Errorf("chat: detach %s: %w", pack, err)
	}
	return nil
}

func (c chatStore) saveArtifacts(ctx context.Context, chat, invocation string, arts []Artifact) error {
	if len(arts) == 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("chat: save artifacts: %w", err)
	}
	defer tx.Rollback()
	at := stamp3339(now())
	for _, a := range arts {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO chat_artifacts(chat, invocation, path, mime, size, at) VALUES(?, ?, ?, ?, ?, ?)`,
			chat, invocation, a.Path, a.MIME, a.Size, at); err != nil {
			return fmt.Errorf("chat: save artifacts: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("chat: save artifacts: %w", err)
	}
	return nil
}

// loadArtifacts lists the chat's artifacts, newest version of each path
// last.
func (c chatStore) loadArtifacts(ctx context.Context, chat string) ([]Artifact, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT path, mime, size FROM chat_artifacts WHERE chat = ? ORDER BY at, path`, chat)
	if err != nil {
		return nil, fmt.Errorf("chat: load artifacts: %w", err)
	}
	defer rows.Close()
	var out []Artifact
	for rows.Next() {
		a := Artifact{Type: "file"}
		if err := rows.Scan(&a.Path, &a.MIME, &a.Size); err != nil {
			return nil, fmt.Errorf("chat: load artifacts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// chatMemory keeps "allow for this chat" in chat_approvals, so a resumed
// chat remembers it. It implements capability.ChatMemory.
type chatMemory struct{ c chatStore }

func (m chatMemory) Allowed(ctx context.Context, chat, class string) (string, bool, error) {
	var who string
	err := m.c.db.QueryRowContext(ctx, `SELECT approver FROM chat_approvals WHERE chat = ? AND class = ?`, chat, class).Scan(&who)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("chat: approvals: %w", err)
	}
	return who, true, nil
}

func (m chatMemory) Remember(ctx context.Context, chat, class, approver string) error {
	_, err := m.c.db.ExecContext(ctx, `INSERT OR REPLACE INTO chat_approvals(chat, class, approver, at) VALUES(?, ?, ?, ?)`, chat, class, approver, stamp3339(now()))
	if err != nil {
		return fmt.Errorf("chat: approvals: %w", err)
	}
	return nil
}
