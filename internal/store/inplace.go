package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/packs-run/packs/capability"
)

// InPlaceContent is the content of an in-place pack's folder that its
// grants bind: the folder, the pack's name, the folder's digest and the
// SHA-256 (hex) of each file, by slash-separated path.
type InPlaceContent struct {
	Dir, Name, Digest string
	Files             map[string]string
}

// ErrOnceInPlace refuses a once grant to a pack used in place: a grant
// there is bound to the folder's content and kept for the chat or until
// revoked (the pipeline spends once grants of installed packs only).
var ErrOnceInPlace = errors.New("store: a pack used in place takes chat or persistent grants, not once")

// PutInPlaceGrants records grants the person made to the pack in folder
// c.Dir, as its content is now (c), in chat ("" for persistent grants
// only). When the folder's grants were made at another content, they are
// deleted first: changed files are a new decision. All or nothing.
func (db *DB) PutInPlaceGrants(ctx context.Context, c InPlaceContent, chat string, grants []capability.UserGrant) error {
	files, err := json.Marshal(c.Files)
	if err != nil {
		return fmt.Errorf("store: grants to %s: %w", c.Dir, err)
	}
	for _, g := range grants {
		if err := capability.ValidateGrant(g); err != nil {
			return fmt.Errorf("store: grant to %s: %w", c.Dir, err)
		}
		switch {
		case g.Scope == capability.ScopeOnce:
			return fmt.Errorf("%w: grant %s to %s", ErrOnceInPlace, g, c.Name)
		case g.Scope == capability.ScopeChat && chat == "":
			return fmt.Errorf("store: grant %s to %s: %w", g, c.Name, ErrNoChat)
		}
	}
	err = db.grantsTx(ctx, func(tx *sql.Tx) error {
		var digest string
		err := tx.QueryRowContext(ctx, `SELECT digest FROM inplace_content WHERE dir = ?`, c.Dir).Scan(&digest)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case digest != c.Digest:
			if _, err := tx.ExecContext(ctx, `DELETE FROM inplace_content WHERE dir = ?`, c.Dir); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inplace_content(dir, name, digest, files) VALUES(?, ?, ?, ?)
			ON CONFLICT(dir) DO UPDATE SET name = excluded.name, digest = excluded.digest, files = excluded.files`,
			c.Dir, c.Name, c.Digest, string(files)); err != nil {
			return err
		}
		for _, g := range grants {
			var res any
			if g.Resources != nil {
				b, err := json.Marshal(g.Resources)
				if err != nil {
					return err
				}
				res = string(b)
			}
			ch := chat
			if g.Scope == capability.ScopePersistent {
				ch = ""
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO inplace_grants(dir, capability, resources, scope, chat, granted_at)
				VALUES(?, ?, ?, ?, ?, ?)
				ON CONFLICT(dir, capability, scope, chat) DO UPDATE SET resources = excluded.resources, granted_at = excluded.granted_at`,
				c.Dir, string(g.Capability), res, string(g.Scope), ch, grantsNow()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: grants to %s in %s: %w", c.Name, c.Dir, err)
	}
	return nil
}

// InPlaceGrants returns the grants that apply to a call of the pack in
// folder dir whose content has digest, in chat: none when the folder's
// grants were made at another content. A persistent grant granted before
// lapse (when not zero) comes back revoked, as CallGrants does.
func (db *DB) InPlaceGrants(ctx context.Context, dir, digest, chat string, lapse time.Time) ([]capability.UserGrant, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT g.capability, g.resources, g.scope, g.chat, g.granted_at
		FROM inplace_grants g JOIN inplace_content c ON c.dir = g.dir
		WHERE g.dir = ? AND c.digest = ? AND (g.chat = '' OR g.chat = ?)
		ORDER BY g.capability, g.scope, g.chat`, dir, digest, chat)
	if err != nil {
		return nil, fmt.Errorf("store: grants of %s: %w", dir, err)
	}
	defer rows.Close()
	var out []GrantRow
	for rows.Next() {
		var name, scope, ch, granted string
		var res sql.NullString
		if err := rows.Scan(&name, &res, &scope, &ch, &granted); err != nil {
			return nil, fmt.Errorf("store: grants of %s: %w", dir, err)
		}
		r, err := grantRow(dir, ch, name, res, scope, granted, sql.NullString{})
		if err != nil {
			return nil, fmt.Errorf("store: grants of %s: %w", dir, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: grants of %s: %w", dir, err)
	}
	return lapsed(out, lapse), nil
}

// InPlaceGranted returns the content the grants of folder dir were made
// at, and whether there is any.
func (db *DB) InPlaceGranted(ctx context.Context, dir string) (InPlaceContent, bool, error) {
	c := InPlaceContent{Dir: dir}
	var files string
	err := db.sql.QueryRowContext(ctx, `SELECT name, digest, files FROM inplace_content WHERE dir = ?`, dir).Scan(&c.Name, &c.Digest, &files)
	if errors.Is(err, sql.ErrNoRows) {
		return InPlaceContent{}, false, nil
	}
	if err == nil {
		err = json.Unmarshal([]byte(files), &c.Files)
	}
	if err != nil {
		return InPlaceContent{}, false, fmt.Errorf("store: grants of %s: %w", dir, err)
	}
	return c, true, nil
}

// InPlaceGrantRows returns every grant of folder dir, whatever the chat,
// for showing them and for carrying them into an install.
func (db *DB) InPlaceGrantRows(ctx context.Context, dir string) ([]GrantRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT c.name, g.chat, g.capability, g.resources, g.scope, g.granted_at, NULL
		FROM inplace_grants g JOIN inplace_content c ON c.dir = g.dir WHERE g.dir = ?
		ORDER BY g.capability, g.scope, g.chat`, dir)
	if err != nil {
		return nil, fmt.Errorf("store: grants of %s: %w", dir, err)
	}
	out, err := scanGrants(rows)
	if err != nil {
		return nil, fmt.Errorf("store: grants of %s: %w", dir, err)
	}
	return out, nil
}

// DeleteInPlaceGrants forgets the grants of folder dir and the content
// they were made at.
func (db *DB) DeleteInPlaceGrants(ctx context.Context, dir string) error {
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM inplace_content WHERE dir = ?`, dir); err != nil {
		return fmt.Errorf("store: delete grants of %s: %w", dir, err)
	}
	return nil
}

// RevokeInPlaceGrant withdraws every grant of n to the pack in folder dir,
// in every chat, and returns how many there were.
func (db *DB) RevokeInPlaceGrant(ctx context.Context, dir string, n capability.Name) (int64, error) {
	r, err := db.sql.ExecContext(ctx, `DELETE FROM inplace_grants WHERE dir = ? AND capability = ?`, dir, string(n))
	if err != nil {
		return 0, fmt.Errorf("store: revoke %s of %s: %w", n, dir, err)
	}
	return r.RowsAffected()
}
