package app

import (
	"context"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
)

// installStaged commits an already staged pack with grants, as the
// installer's last step does: for tests of what follows a commit.
func installStaged(ctx context.Context, a *App, st *dist.Staged, grants []capability.UserGrant) (dist.LockEntry, error) {
	r, err := a.commit(ctx, st, grants, commitOptions{by: "test"})
	return r.Entry, err
}

// whole is the persistent grants of each of names, whole.
func whole(names ...capability.Name) []capability.UserGrant {
	out := make([]capability.UserGrant, len(names))
	for i, n := range names {
		out[i] = capability.UserGrant{Capability: n, Scope: capability.ScopePersistent}
	}
	return out
}
