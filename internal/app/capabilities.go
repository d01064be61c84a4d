package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/packs-run/packs/packs"
)

// BuiltinSource is how packs.lock records a built-in pack's source:
// "builtin:NAME".
const BuiltinSource = "builtin:"

// Capability is one installed pack as spec 003 lists it: a built-in or a
// pack the person installed. Its id is the pack's name.
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

// capabilityOf describes an installed pack. One that does not load is
// listed by its lock entry: available, with no description.
func capabilityOf(ip InstalledPack) Capability {
	c := Capability{ID: ip.Entry.Name, Name: ip.Entry.Name, Status: packs.StatusAvailable,
		Builtin: strings.HasPrefix(ip.Entry.Source, BuiltinSource), Pack: ip}
	if p := ip.Pack; p != nil {
		c.Description = p.Frontmatter.Description
		if m := p.Manifest; m != nil {
			c.Name = cmp.Or(m.Name, c.Name)
			c.Description = cmp.Or(m.Description, c.Description)
			c.Status, c.Icon, c.Category = m.Status, m.Icon, m.Category
		}
	}
	return c
}

// Capabilities lists every installed pack as a capability: the built-ins
// first, then the others, each group by name.
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

// Capability returns the capability id, or an error wrapping
// packs.ErrNotInstalled.
func (a *App) Capability(ctx context.Context, id string) (Capability, error) {
	ip, err := a.Pack(ctx, id)
	if err != nil {
		return Capability{}, err
	}
	return capabilityOf(ip), nil
}

var (
	// ErrUnknownCapability: an agent names a capability that is neither a
	// built-in nor an installed pack.
	ErrUnknownCapability = errors.New("app: unknown capability")
	// ErrUnavailable: an agent names a capability whose status is
	// coming_soon.
	ErrUnavailable = packs.ErrComingSoon
)

// checkCapabilities checks an agent's capability list: each is installed,
// none is coming_soon, none is listed twice. It returns a warning for each
// deprecated one.
func (a *App) checkCapabilities(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) > MaxAgentCapabilities {
		return nil, fmt.Errorf("%w: %d capabilities; an agent has at most %d", ErrInvalidAgent, len(ids), MaxAgentCapabilities)
	}
	var warnings []string
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return nil, fmt.Errorf("%w: capability %q is listed twice", ErrInvalidAgent, id)
		}
		c, err := a.Capability(ctx, id)
		if errors.Is(err, packs.ErrNotInstalled) {
			return nil, fmt.Errorf("%w: %q is neither a built-in nor an installed pack", ErrUnknownCapability, id)
		}
		if err != nil {
			return nil, err
		}
		if c.Pack.Pack != nil {
			if err := c.Pack.Pack.Attachable(); err != nil {
				return nil, fmt.Errorf("capability %q: %w", id, err)
			}
		}
		if c.Status == packs.StatusDeprecated {
			warnings = append(warnings, fmt.Sprintf("capability %q is deprecated: it still works, but its author no longer recommends it", id))
		}
	}
	return warnings, nil
}
