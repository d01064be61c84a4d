package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Why a queued call cannot be decided. Check them with errors.Is.
var (
	ErrQueuedNotFound = errors.New("store: no such queued call")
	ErrQueuedDecided  = errors.New("store: the queued call was already decided")
	ErrQueuedExpired  = errors.New("store: the queued call is no longer waiting")
)

// Verdicts a queued call can end with. The first three are the gate's
// (capability.Verdict's strings); VerdictExpired is a call nobody decided
// in time, or whose client went away.
const (
	VerdictRunOnce   = "run_once"
	VerdictAllowChat = "allow_chat"
	VerdictDeny      = "deny"
	VerdictExpired   = "expired"
)

// QueuedCall is one call waiting for a person, or decided.
type QueuedCall struct {
	ID           string          `json:"id"`
	Chat         string          `json:"chat"`
	Client       string          `json:"client"`
	Pack         string          `json:"pack,omitempty"`
	Tool         string          `json:"tool"`
	Class        string          `json:"class"`
	Arguments    json.RawMessage `json:"arguments"`
	Capabilities []string        `json:"capabilities"`
	Touches      []string        `json:"touches"`
	Created      time.Time       `json:"created"`
	Expires      time.Time       `json:"expires"`
	Verdict      string          `json:"verdict,omitempty"` // empty while waiting
	DecidedBy    string          `json:"decided_by,omitempty"`
	Decided      time.Time       `json:"decided,omitzero"`
}

// Waiting reports whether q can still be decided at now.
func (q QueuedCall) Waiting(now time.Time) bool { return q.Verdict == "" && now.Before(q.Expires) }

// queueKeep is how long a queued call stays in the table after it stopped
// waiting. The audit log keeps the record of every call; the queue only
// needs its recent rows, to tell a late decider what became of a call.
const queueKeep = 24 * time.Hour

// Enqueue records a call waiting for a person, and drops the calls that
// stopped waiting more than a day ago. Its arguments must already be
// redacted.
func (db *DB) Enqueue(ctx context.Context, q QueuedCall) error {
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM approval_queue WHERE expires_at < ?`, q.Created.Add(-queueKeep).UTC().Format(TimeFormat)); err != nil {
		return fmt.Errorf("store: queue %s: pruning: %w", q.ID, err)
	}
	caps, err := json.Marshal(nonNil(q.Capabilities))
	if err != nil {
		return fmt.Errorf("store: queue %s: %w", q.ID, err)
	}
	touches, err := json.Marshal(nonNil(q.Touches))
	if err != nil {
		return fmt.Errorf("store: queue %s: %w", q.ID, err)
	}
	args := string(q.Arguments)
	if args == "" {
		args = "{}"
	}
	_, err = db.sql.ExecContext(ctx, `INSERT INTO approval_queue(id, chat, client, pack, tool, class, arguments, capabilities, touches, created_at, expires_at)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		q.ID, q.Chat, q.Client, q.Pack, q.Tool, q.Class, args, string(caps), string(touches),
		q.Created.UTC().Format(TimeFormat), q.Expires.UTC().Format(TimeFormat))
	if err != nil {
		return fmt.Errorf("store: queue %s: %w", q.ID, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const queuedColumns = `id, chat, client, pack, tool, class, arguments, capabilities, touches, created_at, expires_at, COALESCE(verdict, ''), decided_by, COALESCE(decided_at, '')`

// Queued returns one queued call, waiting or decided.
func (db *DB) Queued(ctx context.Context, id string) (QueuedCall, error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+queuedColumns+` FROM approval_queue WHERE id = ?`, id)
	q, err := scanQueued(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return QueuedCall{}, fmt.Errorf("%w: %s", ErrQueuedNotFound, id)
	}
	return q, err
}

// WaitingCalls lists the calls still waiting for a person at now, oldest
// first.
func (db *DB) WaitingCalls(ctx context.Context, now time.Time) ([]QueuedCall, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+queuedColumns+` FROM approval_queue
		WHERE verdict IS NULL AND expires_at > ? ORDER BY created_at, id`, now.UTC().Format(TimeFormat))
	if err != nil {
		return nil, fmt.Errorf("store: queued calls: %w", err)
	}
	defer rows.Close()
	var out []QueuedCall
	for rows.Next() {
		q, err := scanQueued(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: queued calls: %w", err)
	}
	return out, nil
}

func scanQueued(scan func(...any) error) (QueuedCall, error) {
	var q QueuedCall
	var args, caps, touches, created, expires, decided string
	if err := scan(&q.ID, &q.Chat, &q.Client, &q.Pack, &q.Tool, &q.Class, &args, &caps, &touches, &created, &expires, &q.Verdict, &q.DecidedBy, &decided); err != nil {
		return QueuedCall{}, err
	}
	q.Arguments = json.RawMessage(args)
	if err := json.Unmarshal([]byte(caps), &q.Capabilities); err != nil {
		return QueuedCall{}, fmt.Errorf("store: queued call %s: capabilities: %w", q.ID, err)
	}
	if err := json.Unmarshal([]byte(touches), &q.Touches); err != nil {
		return QueuedCall{}, fmt.Errorf("store: queued call %s: touches: %w", q.ID, err)
	}
	var err error
	if q.Created, err = time.Parse(TimeFormat, created); err != nil {
		return QueuedCall{}, fmt.Errorf("store: queued call %s: %w", q.ID, err)
	}
	if q.Expires, err = time.Parse(TimeFormat, expires); err != nil {
		return QueuedCall{}, fmt.Errorf("store: queued call %s: %w", q.ID, err)
	}
	if decided != "" {
		if q.Decided, err = time.Parse(TimeFormat, decided); err != nil {
			return QueuedCall{}, fmt.Errorf("store: queued call %s: %w", q.ID, err)
		}
	}
	return q, nil
}

// DecideQueued records a person's verdict (run_once, allow_chat or deny) on
// a waiting call, once: a call already decided, expired at now, or unknown
// is refused with ErrQueuedDecided, ErrQueuedExpired or ErrQueuedNotFound.
// The check and the write are one statement, so of two deciders (or a
// decider and the expiry) exactly one wins.
func (db *DB) DecideQueued(ctx context.Context, id, verdict, by string, now time.Time) error {
	switch verdict {
	case VerdictRunOnce, VerdictAllowChat, VerdictDeny:
	default:
		return fmt.Errorf("store: decide %s: unknown verdict %q", id, verdict)
	}
	return db.closeQueued(ctx, id, verdict, by, now, true)
}

// ExpireQueued ends a call nobody decided: its waiter gave up (timeout, or
// the client went away). It returns ErrQueuedDecided when a verdict came
// first, which the waiter then reads and honours.
func (db *DB) ExpireQueued(ctx context.Context, id string, now time.Time) error {
	return db.closeQueued(ctx, id, VerdictExpired, "", now, false)
}

func (db *DB) closeQueued(ctx context.Context, id, verdict, by string, now time.Time, beforeExpiry bool) error {
	at := now.UTC().Format(TimeFormat)
	q := `UPDATE approval_queue SET verdict = ?, decided_by = ?, decided_at = ? WHERE id = ? AND verdict IS NULL`
	args := []any{verdict, by, at, id}
	if beforeExpiry {
		q += ` AND expires_at > ?`
		args = append(args, at)
	}
	res, err := db.sql.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: decide %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: decide %s: %w", id, err)
	} else if n == 1 {
		if db.dialect == Postgres {
			// Wakes the waiter, on whichever replica it is, at once; a
			// lost notification costs it one poll, so it is not an error.
			db.sql.ExecContext(context.WithoutCancel(ctx), `SELECT pg_notify(?, ?)`, queueChannel, id)
		}
		return nil
	}
	cur, err := db.Queued(ctx, id)
	switch {
	case err != nil:
		return err
	case cur.Verdict == VerdictExpired || cur.Verdict == "":
		return fmt.Errorf("%w: %s", ErrQueuedExpired, id)
	}
	return fmt.Errorf("%w: %s (%s by %s)", ErrQueuedDecided, id, cur.Verdict, cur.DecidedBy)
}
