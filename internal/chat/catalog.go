package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// HomeCatalog serves the packs installed in a state directory. Each load
// checks the installed files against their lock entry first, so a pack that
// was changed after install is never attached or enabled, and refuses a pack
// the person disabled (store.DB.CheckEnabled), so it is never attached,
// listed to the model or run.
type HomeCatalog struct {
	Home *packs.Home
	DB   *store.DB // packs.db of Home, for the disabled packs (required)
}

// Pack loads the installed pack name.
func (c HomeCatalog) Pack(ctx context.Context, name string) (*packs.Pack, capability.PackRef, error) {
	if err := ctx.Err(); err != nil {
		return nil, capability.PackRef{}, err
	}
	if c.DB == nil {
		return nil, capability.PackRef{}, errors.New("chat: a HomeCatalog without its packs.db cannot tell disabled packs")
	}
	if err := c.DB.CheckEnabled(ctx, name); err != nil {
		return nil, capability.PackRef{}, err
	}
	if err := c.Home.Verify(name); err != nil {
		if errors.Is(err, packs.ErrNotInstalled) {
			return nil, capability.PackRef{}, fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return nil, capability.PackRef{}, err
	}
	e, err := c.Home.Entry(name)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	dir, err := c.Home.PackDir(name)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	return p, e.Ref(), nil
}
