package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// BuiltinSource is how packs.lock records a built-in pack's source:
// "builtin:NAME" (internal/builtin).
const BuiltinSource = builtin.SourcePrefix

// Capability is one installed pack as spec 003 lists it: a built-in or a
// pack the person installed. Its ID is the pack's name, except for a
// built-in, whose ID is its [skill].id: spec 003's id ("current_time"),
// where the pack is named as packs names are ("current-time").
type Capability struct {
	ID          string
	Name        string // [skill].name, else the pack's name
	Description string // [skill].description, else SKILL.md's
	Status      packs.Status
	Icon        string // "" when the pack names none
	Category    string
	Builtin     bool
	Pack        InstalledPack
}

// PackName is the name of the pack that provides c, the name a chat
// attaches.
func (c Capability) PackName() string { return c.Pack.Entry.Name }

// capabilityOf describes an installed pack. One that does not load is
// listed by its lock entry: available, with no description.
func capabilityOf(ip InstalledPack) Capability {
	c := Capability{ID: ip.Entry.Name, Name: ip.Entry.Name, Status: packs.StatusAvailable,
		Builtin: builtin.IsSource(ip.Entry.Source), Pack: ip}
	if p := ip.Pack; p != nil {
		c.Description = p.Frontmatter.Description
		if m := p.Manifest; m != nil {
			c.Name = cmp.Or(m.Name, c.Name)
			c.Description = cmp.Or(m.Description, c.Description)
			c.Status, c.Icon, c.Category = m.Status, m.Icon, m.Category
			if c.Builtin && m.ID != "" {
				c.ID = m.ID
			}
		}
	}
	return c
}

// Capabilities lists every installed pack as a capability: the built-ins
// first, then the others, each group by id.
func (a *App) Capabilities(ctx context.Context) ([]Capability, error) {
	installed, err := a.Packs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Capability, 0, len(installed))
	for _, ip := range installed {
		out = append(out, capabilityOf(ip))
	}
	slices.SortStableFunc(out, func(x, y Capability) int {
		if x.Builtin != y.Builtin {
			if x.Builtin {
				return -1
			}
			return 1
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// Capability returns the capability whose id, or whose pack's name, is
// ref, or an error wrapping dist.ErrNotInstalled. A built-in's id is
// found through its pack's name, the id with "-" for "_", and only when
// that pack's [skill].id is the id.
func (a *App) Capability(ctx context.Context, ref string) (Capability, error) {
	ip, err := a.Pack(ctx, ref)
	if err == nil {
		return capabilityOf(ip), nil
	}
	if alt := strings.ReplaceAll(ref, "_", "-"); alt != ref && errors.Is(err, dist.ErrNotInstalled) {
		if ip, err2 := a.Pack(ctx, alt); err2 == nil {
			if c := capabilityOf(ip); c.ID == ref {
				return c, nil
			}
		}
	}
	return Capability{}, err
}

var (
	// ErrUnknownCapability: an agent names a capability that is neither a
	// built-in nor an installed pack.
	ErrUnknownCapability = errors.New("app: unknown capability")
	// ErrUnavailable: an agent names a capability whose status is
	// coming_soon.
	ErrUnavailable = packs.ErrComingSoon
)

// resolved is an agent's capability list, checked.
type resolved struct {
	ids      []string // canonical: a built-in by its id, "current-time" as "current_time"
	packs    []string // the packs a chat attaches, in the same order
	warnings []string // one for each deprecated capability
}

// resolveCapabilities checks an agent's capability list: each is
// installed, none is coming_soon, none is listed twice (under either
// name).
func (a *App) resolveCapabilities(ctx context.Context, refs []string) (resolved, error) {
	var r resolved
	if len(refs) > MaxAgentCapabilities {
		return r, fmt.Errorf("%w: %d capabilities; an agent has at most %d", ErrInvalidAgent, len(refs), MaxAgentCapabilities)
	}
	r.ids, r.packs = []string{}, []string{}
	for _, ref := range refs {
		c, err := a.Capability(ctx, ref)
		if errors.Is(err, dist.ErrNotInstalled) && builtin.Is(strings.ReplaceAll(ref, "_", "-")) {
			// A built-in is there for the asking: the built-ins arrive
			// with the first chat, and an agent may be made before it.
			if err = a.EnsureBuiltins(ctx); err == nil {
				c, err = a.Capability(ctx, ref)
			}
			if errors.Is(err, dist.ErrNotInstalled) {
				return r, fmt.Errorf("%w: %q is a built-in that is not installed here: the policy leaves it out, or it was removed (packs add builtin:%s brings it back)", ErrUnknownCapability, ref, strings.ReplaceAll(ref, "_", "-"))
			}
		}
		if errors.Is(err, dist.ErrNotInstalled) {
			return r, fmt.Errorf("%w: %q is neither a built-in nor an installed pack", ErrUnknownCapability, ref)
		}
		if err != nil {
			return r, err
		}
		if slices.Contains(r.ids, c.ID) {
			return r, fmt.Errorf("%w: capability %q is listed twice", ErrInvalidAgent, ref)
		}
		if p := c.Pack.Pack; p != nil {
			if err := p.Attachable(); err != nil {
				return r, fmt.Errorf("capability %q: %w", ref, err)
			}
		}
		if c.Status == packs.StatusDeprecated {
			r.warnings = append(r.warnings, fmt.Sprintf("capability %q is deprecated: it still works, but its author no longer recommends it", c.ID))
		}
		r.ids, r.packs = append(r.ids, c.ID), append(r.packs, c.PackName())
	}
	return r, nil
}
