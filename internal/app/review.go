package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// ErrNothingToKeep: the pack holds no live persistent grant of that
// capability to keep.
var ErrNothingToKeep = errors.New("app: no grant to keep")

// DueGrant is a person's persistent grant that the policy's [review] says
// is due for review: granted (or last kept) longer ago than
// capability.Policy.ReviewAfter.
type DueGrant struct {
	Pack       string          `json:"pack"`
	Capability capability.Name `json:"capability"`
	Resources  []string        `json:"resources"` // empty: everything the pack asks for
	Since      time.Time       `json:"since"`     // granted or last kept
	Due        time.Time       `json:"due"`       // Since plus the review age
	// Lapsed: the policy lapses grants due for review, so this one holds
	// no more until the person keeps it.
	Lapsed bool `json:"lapsed"`
}

// Review lists the grants due for review under the policy's [review],
// by pack and capability; none when the policy asks for no review. now is
// the time to judge by.
func (a *App) Review(ctx context.Context, now time.Time) ([]DueGrant, error) {
	after := a.Policy.ReviewAfter()
	if after == 0 {
		return nil, nil
	}
	l, err := a.Home.ReadLock()
	if err != nil {
		return nil, err
	}
	var out []DueGrant
	for _, e := range l.Packs {
		rows, err := a.DB.Grants(ctx, e.Name)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Scope != capability.ScopePersistent || !r.RevokedAt.IsZero() || now.Sub(r.GrantedAt) < after {
				continue
			}
			out = append(out, DueGrant{Pack: e.Name, Capability: r.Capability, Resources: append([]string{}, r.Resources...),
				Since: r.GrantedAt, Due: r.GrantedAt.Add(after), Lapsed: a.Policy.ReviewLapse()})
		}
	}
	slices.SortFunc(out, func(x, y DueGrant) int {
		if c := x.Due.Compare(y.Due); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Pack, y.Pack); c != 0 {
			return c
		}
		return cmp.Compare(x.Capability, y.Capability)
	})
	return out, nil
}

// KeepGrant records the person's review of the installed pack name's
// persistent grant of n: it stays as it is, and its age counts from now
// (a lapsed grant holds again). Nothing to keep is an error wrapping
// ErrNothingToKeep; a pack not installed wraps dist.ErrNotInstalled.
func (a *App) KeepGrant(ctx context.Context, name string, n capability.Name) error {
	if _, err := a.Home.Entry(name); err != nil {
		return err
	}
	kept, err := a.DB.KeepGrant(ctx, name, n)
	if err != nil {
		return err
	}
	if !kept {
		return fmt.Errorf("%w: %s holds no grant of %s: grant it with packs grant", ErrNothingToKeep, name, n)
	}
	return nil
}

// RevokeGrant withdraws every grant of n from the installed pack name (in
// packs.db, where every check reads) and mirrors the change into its
// packs.lock entry. A pack modified since install keeps its entry (it
// does not run anyway): the revoke stands.
func (a *App) RevokeGrant(ctx context.Context, name string, n capability.Name) (int64, error) {
	k, err := a.DB.RevokeGrant(ctx, name, n)
	if err != nil {
		return 0, err
	}
	if _, err := a.MirrorGrants(ctx, name); err != nil && !errors.Is(err, packs.ErrModified) {
		return k, err
	}
	return k, nil
}
