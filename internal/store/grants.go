package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/packs-run/packs/capability"
)

// TimeFormat is how every timestamp is stored: UTC, fixed width, so text
// order is time order.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// ErrNoChat is returned for a chat-scoped grant without a chat id.
var ErrNoChat = errors.New("store: a chat grant needs a chat id")

// GrantRow is one stored grant of one capability to one pack.
type GrantRow struct {
	Pack       string
	Chat       string // the chat of a chat grant (or of a once grant made in a chat)
	Capability capability.Name
	Resources  []string // nil: everything the pack requests
	Scope      capability.Scope
	GrantedAt  time.Time
	RevokedAt  time.Time // zero while the grant is live
}

// UserGrant is the row as capability.Resolve takes it.
func (r GrantRow) UserGrant() capability.UserGrant {
	return capability.UserGrant{Capability: r.Capability, Resources: r.Resources, Scope: r.Scope, Revoked: !r.RevokedAt.IsZero()}
}

// UserGrants converts rows for capability.Resolve or capability.ToLock.
func UserGrants(rows []GrantRow) []capability.UserGrant {
	out := make([]capability.UserGrant, len(rows))
	for i, r := range rows {
		out[i] = r.UserGrant()
	}
	return out
}

// PutGrant stores what a person granted pack: a new grant, or a new value
// for the same capability, scope and chat (which also lifts a revocation).
// A persistent grant ignores chat; a chat grant needs one.
func (db *DB) PutGrant(ctx context.Context, pack, chat string, g capability.UserGrant) error {
	if err := capability.ValidateGrant(g); err != nil {
		return fmt.Errorf("store: grant to %s: %w", pack, err)
	}
	switch g.Scope {
	case capability.ScopePersistent:
		chat = ""
	case capability.ScopeChat:
		if chat == "" {
			return fmt.Errorf("store: grant %s to %s: %w", g, pack, ErrNoChat)
		}
	}
	var res any
	if g.Resources != nil {
		b, err := json.Marshal(g.Resources)
		if err != nil {
			return fmt.Errorf("store: grant to %s: %w", pack, err)
		}
		res = string(b)
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO grants(pack, capability, resources, scope, chat, granted_at, revoked_at)
		VALUES(?, ?, ?, ?, ?, ?, NULL)
		ON CONFLICT(pack, capability, scope, chat) DO UPDATE SET
			resources = excluded.resources, granted_at = excluded.granted_at, revoked_at = NULL`,
		pack, string(g.Capability), res, string(g.Scope), chat, grantsNow())
	if err != nil {
		return fmt.Errorf("store: grant %s to %s: %w", g, pack, err)
	}
	return nil
}

// RevokeGrant withdraws every grant of n to pack, in every scope and chat.
// The rows stay, marked revoked, so a later denial says why; when there was
// nothing to revoke, a revoked persistent row is written so that a policy
// pre-approval of n is withheld too. It returns how many live grants it
// revoked.
func (db *DB) RevokeGrant(ctx context.Context, pack string, n capability.Name) (int64, error) {
	if _, err := capability.ParseName(string(n)); err != nil {
		return 0, fmt.Errorf("store: revoke from %s: %w", pack, err)
	}
	var revoked int64
	err := db.grantsTx(ctx, func(tx *sql.Tx) error {
		at := grantsNow()
		r, err := tx.ExecContext(ctx, `UPDATE grants SET revoked_at = ? WHERE pack = ? AND capability = ? AND revoked_at IS NULL`, at, pack, string(n))
		if err != nil {
			return err
		}
		if revoked, err = r.RowsAffected(); err != nil || revoked > 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO grants(pack, capability, resources, scope, chat, granted_at, revoked_at)
			VALUES(?, ?, NULL, 'persistent', '', ?, ?) ON CONFLICT DO NOTHING`, pack, string(n), at, at)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: revoke %s from %s: %w", n, pack, err)
	}
	return revoked, nil
}

// Grants lists every stored grant of pack, revoked ones included, ordered by
// capability, scope and chat.
func (db *DB) Grants(ctx context.Context, pack string) ([]GrantRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT pack, chat, capability, resources, scope, granted_at, revoked_at
		FROM grants WHERE pack = ? ORDER BY capability, scope, chat`, pack)
	if err != nil {
		return nil, fmt.Errorf("store: grants of %s: %w", pack, err)
	}
	out, err := scanGrants(rows)
	if err != nil {
		return nil, fmt.Errorf("store: grants of %s: %w", pack, err)
	}
	return out, nil
}

// PeekGrants returns the grants that apply to a call of pack in chat, as
// TakeGrants does, without spending the once grants: for showing what a call
// would hold. Grants lapse as in CallGrants.
func (db *DB) PeekGrants(ctx context.Context, pack, chat string, lapse time.Time) ([]capability.UserGrant, error) {
	return db.callGrants(ctx, pack, chat, false, false, lapse)
}

// TakeGrants returns the grants that apply to one call of pack in chat (""
// outside a chat): persistent ones, chat ones of that chat, and once ones,
// revoked rows included so a denial can say so. The once grants it returns
// are spent: deleted in the same transaction, so two calls never share one.
// Call it after the gate approved the call, right before resolving its grant.
//
// Most calls hold no once grant: those are answered by one read, without
// taking the database's write lock. A once grant made after that read is
// not this call's: it stays for the next.
func (db *DB) TakeGrants(ctx context.Context, pack, chat string) ([]capability.UserGrant, error) {
	return db.callGrants(ctx, pack, chat, true, false, time.Time{})
}

// CallGrants is the grants of one call of an installed pack: those of
// TakeGrants (take) or PeekGrants, refused as CheckEnabled refuses a
// disabled pack. Whether the pack is disabled and its grants are one read,
// the only one of a call that spends no once grant.
//
// A persistent grant granted (or last kept, see KeepGrant) before lapse
// comes back revoked: the policy's [review] lapse; a zero lapse lapses
// nothing.
func (db *DB) CallGrants(ctx context.Context, pack, chat string, take bool, lapse time.Time) ([]capability.UserGrant, error) {
	return db.callGrants(ctx, pack, chat, take, true, lapse)
}

// callGrantsSQL reads, for one call of a pack (the first parameter) in a
// chat (the second), whether the pack is disabled (the first column) and
// the grants that apply: persistent ones, and chat and once ones of that
// chat, revoked rows included. It returns one row at least: when no grant
// applies, a row whose grant columns are NULL.
const callGrantsSQL = `SELECT EXISTS(SELECT 1 FROM disabled_packs WHERE name = ?1),
		g.pack, g.chat, g.capability, g.resources, g.scope, g.granted_at, g.revoked_at
	FROM (SELECT 1) AS one LEFT JOIN grants g ON g.pack = ?1 AND (g.chat = '' OR g.chat = ?2)
	ORDER BY g.capability, g.scope, g.chat`

// callGrants reads the grants of one call through callGrantsSQL's prepared
// statement; with take, it spends the once grants among them; with
// enabled, a disabled pack is refused.
func (db *DB) callGrants(ctx context.Context, pack, chat string, take, enabled bool, lapse time.Time) ([]capability.UserGrant, error) {
	db.callGrantsOnce.Do(func() {
		db.callGrantsStmt, db.callGrantsErr = db.sql.PrepareContext(context.WithoutCancel(ctx), callGrantsSQL)
	})
	if db.callGrantsErr != nil {
		return nil, fmt.Errorf("store: grants for a call of %s: %w", pack, db.callGrantsErr)
	}
	disabled, out, err := scanCallGrants(db.callGrantsStmt.QueryContext(ctx, pack, chat))
	if err != nil {
		return nil, fmt.Errorf("store: grants for a call of %s: %w", pack, err)
	}
	if enabled && disabled {
		return nil, disabledError(pack)
	}
	if !take || !slices.ContainsFunc(out, liveOnce) {
		return lapsed(out, lapse), nil
	}
	err = db.grantsTx(ctx, func(tx *sql.Tx) error {
		if disabled, out, err = scanCallGrants(tx.QueryContext(ctx, callGrantsSQL, pack, chat)); err != nil || (enabled && disabled) {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM grants WHERE pack = ? AND scope = 'once' AND (chat = '' OR chat = ?) AND revoked_at IS NULL`, pack, chat)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: grants for a call of %s: %w", pack, err)
	}
	if enabled && disabled {
		// Disabled between the read and the transaction: nothing was spent.
		return nil, disabledError(pack)
	}
	return lapsed(out, lapse), nil
}

// lapsed is UserGrants of rows, with each live persistent grant granted
// before lapse (when not zero) revoked.
func lapsed(rows []GrantRow, lapse time.Time) []capability.UserGrant {
	out := UserGrants(rows)
	if lapse.IsZero() {
		return out
	}
	for i, r := range rows {
		if r.Scope == capability.ScopePersistent && r.GrantedAt.Before(lapse) {
			out[i].Revoked = true
		}
	}
	return out
}

// KeepGrant records that the person reviewed the live persistent grant of
// n to pack and keeps it as it is: its grant time becomes now, so the
// policy's [review] counts its age from today. It reports whether there
// was such a grant.
func (db *DB) KeepGrant(ctx context.Context, pack string, n capability.Name) (bool, error) {
	r, err := db.sql.ExecContext(ctx, `UPDATE grants SET granted_at = ? WHERE pack = ? AND capability = ? AND scope = 'persistent' AND revoked_at IS NULL`,
		grantsNow(), pack, string(n))
	if err != nil {
		return false, fmt.Errorf("store: keep %s of %s: %w", n, pack, err)
	}
	k, err := r.RowsAffected()
	return k > 0, err
}

// scanCallGrants reads the rows of callGrantsSQL.
func scanCallGrants(rows *sql.Rows, err error) (disabled bool, out []GrantRow, _ error) {
	if err != nil {
		return false, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pack, chat, name, res, scope, granted, revoked sql.NullString
		if err := rows.Scan(&disabled, &pack, &chat, &name, &res, &scope, &granted, &revoked); err != nil {
			return false, nil, err
		}
		if !pack.Valid {
			continue // the row of a pack with no grant
		}
		r, err := grantRow(pack.String, chat.String, name.String, res, scope.String, granted.String, revoked)
		if err != nil {
			return false, nil, err
		}
		out = append(out, r)
	}
	return disabled, out, rows.Err()
}

// liveOnce reports whether r is a once grant not revoked: one TakeGrants
// spends.
func liveOnce(r GrantRow) bool { return r.Scope == capability.ScopeOnce && r.RevokedAt.IsZero() }

// DeleteGrants forgets every grant of pack, for `packs remove`.
func (db *DB) DeleteGrants(ctx context.Context, pack string) error {
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM grants WHERE pack = ?`, pack); err != nil {
		return fmt.Errorf("store: delete grants of %s: %w", pack, err)
	}
	return nil
}

// DeleteChatGrants deletes the chat and once grants made in one chat, when
// the chat is deleted.
func (db *DB) DeleteChatGrants(ctx context.Context, chat string) error {
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM grants WHERE chat = ? AND chat <> ''`, chat); err != nil {
		return fmt.Errorf("store: delete grants of chat %s: %w", chat, err)
	}
	return nil
}

func scanGrants(rows *sql.Rows) ([]GrantRow, error) {
	defer rows.Close()
	var out []GrantRow
	for rows.Next() {
		var pack, chat, name, scope, granted string
		var res, revoked sql.NullString
		if err := rows.Scan(&pack, &chat, &name, &res, &scope, &granted, &revoked); err != nil {
			return nil, err
		}
		r, err := grantRow(pack, chat, name, res, scope, granted, revoked)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// grantRow decodes the columns of one row of the grants table.
func grantRow(pack, chat, name string, res sql.NullString, scope, granted string, revoked sql.NullString) (GrantRow, error) {
	r := GrantRow{Pack: pack, Chat: chat, Capability: capability.Name(name), Scope: capability.Scope(scope)}
	if res.Valid {
		r.Resources = []string{}
		if err := json.Unmarshal([]byte(res.String), &r.Resources); err != nil {
			return GrantRow{}, fmt.Errorf("grant %s of %s: resources: %w", name, pack, err)
		}
	}
	var err error
	if r.GrantedAt, err = time.Parse(TimeFormat, granted); err != nil {
		return GrantRow{}, fmt.Errorf("grant %s of %s: %w", name, pack, err)
	}
	if revoked.Valid {
		if r.RevokedAt, err = time.Parse(TimeFormat, revoked.String); err != nil {
			return GrantRow{}, fmt.Errorf("grant %s of %s: %w", name, pack, err)
		}
	}
	return r, nil
}

// grantsTx runs fn in one transaction (BEGIN IMMEDIATE: the DSN sets _txlock).
func (db *DB) grantsTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func grantsNow() string { return time.Now().UTC().Format(TimeFormat) }

// RestoreGrants makes rows the only grants of pack, exactly as they were
// read by Grants (times and revocations included), in one transaction: it
// undoes a change whose other half (the packs.lock mirror) failed.
func (db *DB) RestoreGrants(ctx context.Context, pack string, rows []GrantRow) error {
	return db.grantsTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM grants WHERE pack = ?`, pack); err != nil {
			return fmt.Errorf("store: restore grants of %s: %w", pack, err)
		}
		for _, r := range rows {
			var res, revoked any
			if r.Resources != nil {
				b, err := json.Marshal(r.Resources)
				if err != nil {
					return fmt.Errorf("store: restore grants of %s: %w", pack, err)
				}
				res = string(b)
			}
			if !r.RevokedAt.IsZero() {
				revoked = r.RevokedAt.UTC().Format(TimeFormat)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO grants(pack, capability, resources, scope, chat, granted_at, revoked_at)
				VALUES(?, ?, ?, ?, ?, ?, ?)`, pack, string(r.Capability), res, string(r.Scope), r.Chat, r.GrantedAt.UTC().Format(TimeFormat), revoked); err != nil {
				return fmt.Errorf("store: restore grants of %s: %w", pack, err)
			}
		}
		return nil
	})
}
