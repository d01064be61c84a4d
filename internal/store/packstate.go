package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packs-run/packs/capability"
)

// schemaPackState is a migration (see migrations): the packs the person disabled. A disabled
// pack stays installed (its files, its packs.lock entry and its grants are
// untouched) and is refused wherever a pack is attached, listed to a model
// or run (see DB.CheckEnabled). The state is the person's, on this
// machine: it lives here, beside the grants, and not in packs.lock, which a
// bundle carries to another machine.
const schemaPackState = `
CREATE TABLE disabled_packs (
	name        TEXT PRIMARY KEY,
	disabled_at TEXT NOT NULL  -- TimeFormat
);`

// ErrPackDisabled is wrapped, with capability.ErrDenied, by the error of
// every use of a disabled pack.
var ErrPackDisabled = errors.New("store: pack is disabled")

// SetDisabled disables or enables the pack name. It reports whether that
// changed anything.
func (db *DB) SetDisabled(ctx context.Context, name string, disabled bool) (bool, error) {
	q, args := `DELETE FROM disabled_packs WHERE name = ?`, []any{name}
	if disabled {
		q, args = `INSERT INTO disabled_packs(name, disabled_at) VALUES(?, ?) ON CONFLICT(name) DO NOTHING`, []any{name, time.Now().UTC().Format(TimeFormat)}
	}
	res, err := db.sql.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("store: disable %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// DisabledPacks returns the disabled packs and when each was disabled.
func (db *DB) DisabledPacks(ctx context.Context) (map[string]time.Time, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT name, disabled_at FROM disabled_packs`)
	if err != nil {
		return nil, fmt.Errorf("store: disabled packs: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var name, at string
		if err := rows.Scan(&name, &at); err != nil {
			return nil, fmt.Errorf("store: disabled packs: %w", err)
		}
		out[name], _ = time.Parse(TimeFormat, at)
	}
	return out, rows.Err()
}

// CheckEnabled is the one rule for a disabled pack, applied by every path
// that attaches, lists or runs an installed pack: nil when name is not
// disabled, else a *capability.DeniedError (layer user) wrapping
// ErrPackDisabled.
func (db *DB) CheckEnabled(ctx context.Context, name string) error {
	db.disabledOnce.Do(func() {
		db.disabled, db.disabledErr = db.sql.PrepareContext(context.WithoutCancel(ctx), `SELECT EXISTS(SELECT 1 FROM disabled_packs WHERE name = ?)`)
	})
	if db.disabledErr != nil {
		return fmt.Errorf("store: is %s disabled: %w", name, db.disabledErr)
	}
	var disabled bool
	if err := db.disabled.QueryRowContext(ctx, name).Scan(&disabled); err != nil {
		return fmt.Errorf("store: is %s disabled: %w", name, err)
	}
	if !disabled {
		return nil
	}
	return disabledError(name)
}

// disabledError is how a use of the disabled pack name is refused.
func disabledError(name string) error {
	return &capability.DeniedError{Layer: capability.LayerUser, Cause: ErrPackDisabled,
		Reason: "pack " + name + " is disabled: packs enable " + name + " turns it back on"}
}
