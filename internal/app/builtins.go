package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// builtinsRemovedFile lists, one name a line, the built-in packs the
// person removed: EnsureBuiltins does not bring them back.
const builtinsRemovedFile = "builtins-removed"

// ErrNotBuiltin: the name is not a built-in pack, or the installed pack of
// that name is the person's own.
var ErrNotBuiltin = errors.New("app: not a built-in pack")

// EnsureBuiltins installs every built-in pack (internal/builtin) the home
// lacks and updates in place each installed built-in whose content differs
// from this binary's, through the same stage, validate and commit path as
// packs add, with "builtin:NAME" as its packs.lock source. It reads only
// the built-ins' packs.lock entries when everything is current. It leaves
// alone a pack of the same name the person installed from elsewhere, a
// built-in the person removed (see RestoreBuiltin), and one the enterprise
// policy blocks.
//
// What a built-in is granted: nothing at install. It asks for nothing but
// web-fetch, which asks for network and gets it only when the person grants
// it. An update keeps the person's grants, but never lets them cover more
// than before: a grant of "everything the pack asks for" is pinned to what
// the older version asked for when the new one asks for more.
func (a *App) EnsureBuiltins(ctx context.Context) error {
	removed, err := a.removedBuiltins()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range builtin.Names() {
		want, _ := builtin.Digest(name)
		// One entry at a time (Home.Entry): a start costs the same with
		// ten packs installed or ten thousand.
		e, err := a.Home.Entry(name)
		found := err == nil
		if err != nil && !errors.Is(err, dist.ErrNotInstalled) {
			return err
		}
		switch {
		case found && !builtin.IsSource(e.Source):
			a.Logger.Debug("app: a pack of a built-in's name is installed from elsewhere; the built-in is not", "pack", name, "source", e.Source)
			continue
		case found && e.Integrity == want:
			continue
		case !found && slices.Contains(removed, name):
			continue
		}
		if err := a.installBuiltin(ctx, name, found); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RestoreBuiltin installs the built-in pack name again after the person
// removed it (packs add builtin:NAME), with nothing granted.
func (a *App) RestoreBuiltin(ctx context.Context, name string) (dist.LockEntry, error) {
	if !builtin.Is(name) {
		return dist.LockEntry{}, fmt.Errorf("%w: %q (built-in packs: %s)", ErrNotBuiltin, name, strings.Join(builtin.Names(), ", "))
	}
	e, found := dist.LockEntry{}, false
	if l, err := a.Home.ReadLock(); err != nil {
		return dist.LockEntry{}, err
	} else if e, found = l.Entry(name); found && !builtin.IsSource(e.Source) {
		return dist.LockEntry{}, fmt.Errorf("%w: %s is installed from %s: remove it first", ErrNotBuiltin, name, e.Source)
	}
	d, _ := builtin.Digest(name)
	if err := a.Policy.Blocked(capability.PackRef{Name: name, Digest: d}); err != nil {
		return dist.LockEntry{}, err
	}
	if err := a.setBuiltinRemoved(name, false); err != nil {
		return dist.LockEntry{}, err
	}
	if err := a.installBuiltin(ctx, name, found); err != nil {
		return dist.LockEntry{}, err
	}
	return a.Home.Entry(name)
}

// installBuiltin stages the built-in pack name from the binary and commits
// it; update says an older built-in of that name is installed.
func (a *App) installBuiltin(ctx context.Context, name string, update bool) error {
	tmp, err := os.MkdirTemp("", "packs-builtin-")
	if err != nil {
		return fmt.Errorf("app: built-in %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	dir, err := builtin.Write(name, tmp)
	if err != nil {
		return err
	}
	st, err := a.Home.Stage(ctx, dir, dist.StageOptions{})
	if err != nil {
		return fmt.Errorf("app: built-in %s: %w", name, err)
	}
	defer st.Discard()
	st.Source = builtin.Source(name)
	if want, _ := builtin.Digest(name); st.Integrity != want {
		return fmt.Errorf("app: built-in %s: its content is %s, the binary expects %s: the binary is damaged", name, st.Integrity, want)
	}
	if err := a.Policy.Blocked(st.Ref()); err != nil {
		a.Logger.Info("app: the policy blocks a built-in pack; it is not installed", "pack", name, "err", err)
		return nil
	}
	if err := a.admit(st); err != nil {
		return fmt.Errorf("app: built-in %s: %w", name, err)
	}
	// A built-in is granted nothing at install (the person grants
	// web-fetch's network later); an update keeps the person's grants,
	// pinned so that they cover no more than before.
	opt := commitOptions{by: "builtin", pre: a.preApproved(st.Ref(), st.Pack.Request()), auto: !update}
	var keep []capability.UserGrant
	if update && a.sharedHolds(ctx, name, st.Integrity) {
		// Another replica updated the shared store to this content and
		// pinned the grants then: they stay as they are.
		opt.keepRows = true
	} else if update {
		var err error
		if keep, err = a.pinGrants(ctx, name, st.Pack.Request()); err != nil {
			return err
		}
		opt.keepRows = true
		if e, err := a.Home.Entry(name); err == nil {
			opt.previous = &e
		}
	}
	_, err = a.commit(ctx, st, keep, opt)
	return err
}

// pinGrants prepares the person's grants of the installed built-in name for
// its new request next: a grant of everything under a capability whose
// resources the new version widens is rewritten to name the resources the
// old version asked for (those the new one still asks for). It returns the
// persistent grants that fit next, for the new lock entry.
func (a *App) pinGrants(ctx context.Context, name string, next capability.Request) ([]capability.UserGrant, error) {
	rows, err := a.DB.Grants(ctx, name)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	dir, err := a.Home.PackDir(name)
	if err != nil {
		return nil, err
	}
	var prev capability.Request
	if old, err := packs.Load(dir, packs.LoadOptions{}); err == nil {
		prev = old.Request()
	}
	changed := false
	for i, r := range rows {
		if r.Resources != nil || !r.RevokedAt.IsZero() || !widens(prev, next, r.Capability) {
			continue
		}
		pinned := []string{}
		for _, res := range prev.Resources(r.Capability) {
			if capability.CheckGrant(next, capability.UserGrant{Capability: r.Capability, Resources: []string{res}, Scope: r.Scope}) == nil {
				pinned = append(pinned, res)
			}
		}
		rows[i].Resources, changed = pinned, true
	}
	if changed {
		if err := a.DB.RestoreGrants(ctx, name, rows); err != nil {
			return nil, err
		}
	}
	var keep []capability.UserGrant
	for _, u := range store.UserGrants(rows) {
		if u.Scope == capability.ScopePersistent && !u.Revoked && capability.CheckGrant(next, u) == nil {
			keep = append(keep, u)
		}
	}
	return keep, nil
}

// widens reports whether next asks for a resource of n that prev did not.
func widens(prev, next capability.Request, n capability.Name) bool {
	old := prev.Resources(n)
	for _, r := range next.Resources(n) {
		if !slices.Contains(old, r) {
			return true
		}
	}
	return next.Has(n) && !prev.Has(n)
}

// removedBuiltins reads the names the person removed.
func (a *App) removedBuiltins() ([]string, error) {
	f, err := os.Open(filepath.Join(a.Home.Dir(), builtinsRemovedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" {
			out = append(out, n)
		}
	}
	return out, sc.Err()
}

// setBuiltinRemoved adds name to the removed built-ins, or takes it out.
func (a *App) setBuiltinRemoved(name string, removed bool) error {
	names, err := a.removedBuiltins()
	if err != nil {
		return err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == name })
	if removed {
		names = append(names, name)
	}
	slices.Sort(names)
	p := filepath.Join(a.Home.Dir(), builtinsRemovedFile)
	if len(names) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("app: %w", err)
		}
		return nil
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	return nil
}

// sharedHolds reports whether the store is shared and records integrity
// under name. A failed read reports false: the caller then does what it
// does on one machine, and commit reads the record again.
func (a *App) sharedHolds(ctx context.Context, name, integrity string) bool {
	if !a.shared {
		return false
	}
	r, err := a.DB.Pack(ctx, name)
	return err == nil && r.Integrity == integrity
}
