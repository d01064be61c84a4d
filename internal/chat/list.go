package chat

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/packs-run/packs/internal/store"
)

// Summary describes a stored chat in a list of chats.
type Summary struct {
	ID      string
	Created time.Time
	// Updated is when its last message was stored, else Created.
	Updated time.Time
	// FirstMessage is the person's first message, cut to one line of at
	// most 80 characters; empty when the person has written nothing.
	FirstMessage string
	Messages     int
	// Via is the front end that opened the chat (Options.Via), and
	// ClientName the name an MCP client gave in initialize.
	Via, ClientName string
	// Enabled names the packs whose tools the chat enabled, in
	// attachment order.
	Enabled []string
}

// List returns the chats stored in db, the most recently active first, at
// most limit of them (all when limit <= 0); only those of owner when it is
// not nil.
func List(ctx context.Context, db *store.DB, limit int, owner *Owner) ([]Summary, error) {
	q := `SELECT c.id, c.created_at,
		COALESCE((SELECT MAX(m.at) FROM chat_messages m WHERE m.chat = c.id), c.created_at),
		COALESCE((SELECT m.content FROM chat_messages m WHERE m.chat = c.id AND m.role = 'user' ORDER BY m.seq LIMIT 1), ''),
		(SELECT COUNT(*) FROM chat_messages m WHERE m.chat = c.id),
		c.via, c.client_name
		FROM chats c`
	var args []any
	if owner != nil {
		q += ` WHERE c.owner_subject = ? AND c.owner_issuer = ?`
		args = append(args, owner.Subject, owner.Issuer)
	}
	q += ` ORDER BY 3 DESC, c.id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := db.SQL().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("chat: list: %w", err)
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var (
			s                Summary
			created, updated string
			first            sql.NullString
		)
		if err := rows.Scan(&s.ID, &created, &updated, &first, &s.Messages, &s.Via, &s.ClientName); err != nil {
			return nil, fmt.Errorf("chat: list: %w", err)
		}
		s.Created, _ = time.Parse(time.RFC3339Nano, created)
		s.Updated, _ = time.Parse(time.RFC3339Nano, updated)
		s.FirstMessage = oneLineCut(first.String, 80)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chat: list: %w", err)
	}
	rows.Close()
	return out, enabledPacks(ctx, db, out)
}

// enabledPacks fills each summary's Enabled, in one query.
func enabledPacks(ctx context.Context, db *store.DB, list []Summary) error {
	if len(list) == 0 {
		return nil
	}
	at := make(map[string]int, len(list))
	for i, s := range list {
		at[s.ID] = i
	}
	rows, err := db.SQL().QueryContext(ctx, `SELECT chat, pack FROM chat_packs WHERE tools_enabled = 1 ORDER BY chat, attached_at, pack`)
	if err != nil {
		return fmt.Errorf("chat: list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, pack string
		if err := rows.Scan(&id, &pack); err != nil {
			return fmt.Errorf("chat: list: %w", err)
		}
		if i, ok := at[id]; ok {
			list[i].Enabled = append(list[i].Enabled, pack)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("chat: list: %w", err)
	}
	return nil
}

// oneLineCut is s on one line, cut at n runes with an ellipsis.
func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
