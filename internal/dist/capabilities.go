package dist

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/packs-run/packs/capability"
)

// SetCapabilities rewrites the [packs.capabilities] of the installed pack
// name in packs.lock, atomically (temporary file, fsync, rename) and under
// the state directory's exclusive lock. compute receives the current entry
// and returns the new capabilities, typically capability.ToLock of the
// person's stored grants; it runs under the lock, so two processes that
// each change a grant and then mirror it cannot write the lock in the
// wrong order. compute must not take the state directory's lock itself (no
// Verify, Stage, Commit or Remove).
//
// Only the capabilities change: the integrity digest, which covers the
// pack's files, the version, source and install time stay as they are. Every
// capability of the entry stays listed; one compute leaves out becomes not
// granted. A capability the entry does not list is ErrNotRequested, a
// not-granted one with resources is ErrLockInvalid. The file is left alone
// when nothing changes. It returns the entry as it now stands; an unknown
// name is ErrNotInstalled.
func (h *Home) SetCapabilities(ctx context.Context, name string, compute func(LockEntry) (map[capability.Name]LockCapability, error)) (LockEntry, error) {
	unlock, err := h.lock(ctx, true)
	if err != nil {
		return LockEntry{}, err
	}
	defer unlock()
	// Settle a change another process left half done before reading.
	if err := h.recover(); err != nil {
		return LockEntry{}, err
	}
	lf, err := h.ReadLock()
	if err != nil {
		return LockEntry{}, err
	}
	cur, ok := lf.Entry(name)
	if !ok {
		return LockEntry{}, fmt.Errorf("%w: %s", ErrNotInstalled, name)
	}
	caps, err := compute(cur)
	if err != nil {
		return LockEntry{}, err
	}
	next := cur
	next.Capabilities = nil
	for _, n := range slices.Sorted(maps.Keys(caps)) {
		c := caps[n]
		switch _, listed := cur.Capabilities[n]; {
		case !listed:
			return LockEntry{}, fmt.Errorf("%w: %s does not ask for %s: its lock entry cannot grant it", ErrNotRequested, name, n)
		case !c.Granted && len(c.Resources) > 0:
			return LockEntry{}, fmt.Errorf("%w: %s: %s is not granted but lists resources %v: a lock entry lists only granted resources", ErrLockInvalid, name, n, c.Resources)
		}
	}
	for n := range cur.Capabilities {
		if next.Capabilities == nil {
			next.Capabilities = make(map[capability.Name]LockCapability, len(cur.Capabilities))
		}
		c := caps[n]
		next.Capabilities[n] = LockCapability{Granted: c.Granted, Resources: slices.Clone(c.Resources)}
	}
	if next.equal(cur) {
		return cur, nil
	}
	if err := h.step("capabilities"); err != nil {
		return LockEntry{}, err
	}
	lf.put(next)
	if err := WriteLock(h.LockPath(), lf); err != nil {
		return LockEntry{}, err
	}
	return next, nil
}
