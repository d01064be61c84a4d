package chat

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/store"
)

// chatStore keeps chats in the tables of migration 4
// (internal/store/schema_chat.go).
//
// Its writes commit with synchronous=NORMAL, not the FULL that packs.db
// uses otherwise: in WAL mode that is still atomic and survives a crash of
// the process, and only a power loss can drop the last commits (never
// corrupt the file). A chat message costs ~40 µs instead of an fsync
// (~1 ms on a busy disk), four times per turn. The audit log, which must
// not lose a call, keeps FULL. On PostgreSQL a commit is durable on the
// server, and a chat's writes are plain transactions.
type chatStore struct {
	db     *sql.DB
	sqlite bool
}

func newChatStore(db *store.DB) chatStore {
	return chatStore{db: db.SQL(), sqlite: db.Dialect() == store.SQLite}
}

// write runs fn in a transaction; on SQLite committed with
// synchronous=NORMAL, on a connection that goes back to the pool with FULL
// restored.
func (c chatStore) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) (err error) {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("chat: %s: %w", what, err)
	}
	defer conn.Close()
	if c.sqlite {
		if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
			return fmt.Errorf("chat: %s: %w", what, err)
		}
		defer func() {
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = FULL`); rerr != nil && err == nil {
				err = fmt.Errorf("chat: %s: %w", what, rerr)
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("chat: %s: %w", what, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return fmt.Errorf("chat: %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("chat: %s: %w", what, err)
	}
	return nil
}

func stamp3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (c chatStore) createChat(ctx context.Context, id, workspace string, p Profile, via string, o Owner) error {
	at := stamp3339(now())
	return c.write(ctx, "create "+id, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chats(id, workspace, created_at, agent, system_prompt, model, max_tokens, via, owner_subject, owner_issuer) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, workspace, at, p.Agent, p.SystemPrompt, p.Model, p.MaxTokens, via, o.Subject, o.Issuer)
		return err
	})
}

// storedChat is a chat's row, as loadChat reads it.
type storedChat struct {
	workspace       string
	profile         Profile
	via, clientName string
	owner           Owner
}

func (c chatStore) loadChat(ctx context.Context, id string) (storedChat, error) {
	var sc storedChat
	p := &sc.profile
	err := c.db.QueryRowContext(ctx, `SELECT workspace, agent, system_prompt, model, max_tokens, via, client_name, owner_subject, owner_issuer FROM chats WHERE id = ?`, id).
		Scan(&sc.workspace, &p.Agent, &p.SystemPrompt, &p.Model, &p.MaxTokens, &sc.via, &sc.clientName, &sc.owner.Subject, &sc.owner.Issuer)
	if errors.Is(err, sql.ErrNoRows) {
		return sc, fmt.Errorf("%w: no chat %q: start a new chat without --chat, or check the id", ErrNotFound, id)
	}
	if err != nil {
		return sc, fmt.Errorf("chat: load %s: %w", id, err)
	}
	return sc, nil
}

func (c chatStore) setClientName(ctx context.Context, id, name string) error {
	return c.write(ctx, "name the client of "+id, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE chats SET client_name = ? WHERE id = ?`, name, id)
		return err
	})
}

// OwnerOf returns the person chat id belongs to (ErrNotFound when there is
// no such chat).
func OwnerOf(ctx context.Context, db *store.DB, id string) (Owner, error) {
	sc, err := newChatStore(db).loadChat(ctx, id)
	return sc.owner, err
}

// appendMessages stores msgs as the messages numbered from seq on, in one
// transaction.
func (c chatStore) appendMessages(ctx context.Context, chat string, seq int, msgs ...llm.Message) error {
	at := stamp3339(now())
	return c.write(ctx, "save messages", func(tx *sql.Tx) error {
		for i, m := range msgs {
			var calls any
			if len(m.ToolCalls) > 0 {
				b, err := json.Marshal(m.ToolCalls)
				if err != nil {
					return err
				}
				calls = string(b)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages(chat, seq, role, content, tool_calls, tool_call_id, is_error, at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
				chat, seq+i, string(m.Role), c.content(m.Content), calls, m.ToolCallID, m.IsError, at); err != nil {
				return err
			}
		}
		return nil
	})
}

// content is a message's content as its column takes it: TEXT on SQLite,
// which holds any bytes; BYTEA on PostgreSQL, whose TEXT refuses a NUL and
// bytes that are not UTF-8, which a tool's output may hold
// (internal/store's schemaChatPostgres). Either scans back into a string.
func (c chatStore) content(s string) any {
	if c.sqlite {
		return s
	}
	return []byte(s)
}

// countMessages is how many messages chat has stored.
func (c chatStore) countMessages(ctx context.Context, chat string) (int, error) {
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chat_messages WHERE chat = ?`, chat).Scan(&n); err != nil {
		return 0, fmt.Errorf("chat: count messages: %w", err)
	}
	return n, nil
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
	return c.write(ctx, "save pack "+pack, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chat_packs(chat, pack, attached_at, opened, tools_enabled) VALUES(?, ?, ?, ?, ?)
			ON CONFLICT(chat, pack) DO UPDATE SET
				opened = CASE WHEN excluded.opened <> 0 THEN 1 ELSE chat_packs.opened END,
				tools_enabled = CASE WHEN excluded.tools_enabled <> 0 THEN 1 ELSE chat_packs.tools_enabled END`,
			chat, pack, stamp3339(now()), opened, enabled)
		return err
	})
}

func (c chatStore) deletePack(ctx context.Context, chat, pack string) error {
	return c.write(ctx, "detach "+pack, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM chat_packs WHERE chat = ? AND pack = ?`, chat, pack)
		return err
	})
}

func (c chatStore) saveArtifacts(ctx context.Context, chat, invocation string, arts []Artifact) error {
	if len(arts) == 0 {
		return nil
	}
	at := stamp3339(now())
	return c.write(ctx, "save artifacts", func(tx *sql.Tx) error {
		for _, a := range arts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_artifacts(chat, invocation, path, mime, size, at) VALUES(?, ?, ?, ?, ?, ?)
				ON CONFLICT(chat, invocation, path) DO UPDATE SET mime = excluded.mime, size = excluded.size, at = excluded.at`,
				chat, invocation, a.Path, a.MIME, a.Size, at); err != nil {
				return err
			}
		}
		return nil
	})
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
	return m.c.write(ctx, "remember approval", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chat_approvals(chat, class, approver, at) VALUES(?, ?, ?, ?)
			ON CONFLICT(chat, class) DO UPDATE SET approver = excluded.approver, at = excluded.at`, chat, class, approver, stamp3339(now()))
		return err
	})
}
