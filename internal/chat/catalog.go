package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
	builtinpacks "github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// Prompter is a Catalog whose packs may add to the system prompt. Prompt
// returns the addition of the pack ref names ("" for none); a session
// includes it in the metadata stage while, and only while, the pack is
// attached.
type Prompter interface {
	Prompt(ref capability.PackRef) string
}

var _ Prompter = HomeCatalog{}

// Prompt implements Prompter: only a built-in pack has an addition, and
// only when its content is exactly the built-in's (its packs.lock digest
// is the binary's), so no other pack can put text into the system prompt.
func (c HomeCatalog) Prompt(ref capability.PackRef) string {
	if d, ok := builtinpacks.Digest(ref.Name); !ok || d != ref.Digest {
		return ""
	}
	return builtinpacks.Prompt(ref.Name)
}

// HomeCatalog serves the packs installed in a state directory. Each load
// checks the installed files against their lock entry first, so a pack that
// was changed after install is never attached or enabled, and refuses a pack
// the person disabled (store.DB.CheckEnabled), so it is never attached,
// listed to the model or run.
type HomeCatalog struct {
	Home *dist.Home
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
	// The entry checked is the entry whose reference the pack gets.
	e, _, err := c.Home.VerifyContent(nil, name)
	if err != nil {
		if errors.Is(err, dist.ErrNotInstalled) {
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
