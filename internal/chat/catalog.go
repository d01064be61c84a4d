package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// HomeCatalog serves the packs installed in a state directory. Each load
// checks the installed files against their lock entry first, so a pack that
// was changed after install is never attached or enabled.
type HomeCatalog struct {
	Home *packs.Home
}

// Pack loads the installed pack name.
func (c HomeCatalog) Pack(ctx context.Context, name string) (*packs.Pack, capability.PackRef, error) {
	if err := ctx.Err(); err != nil {
		return nil, capability.PackRef{}, err
	}
	// The entry checked is the entry whose reference the pack gets.
	e, _, err := c.Home.VerifyContent(nil, name)
	if err != nil {
		if errors.Is(err, packs.ErrNotInstalled) {
			return nil, capability.PackRef{}, fmt.Errorf("%w: %w", ErrNotFound, err)
		}
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
