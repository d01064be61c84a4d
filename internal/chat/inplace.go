package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// Catalogs serves each pack from the first catalog that has it: the
// installed packs first, then the packs used in place (skills folders).
// A pack a catalog refuses for any other reason than not having it
// (disabled, modified) is refused: the next catalog is not asked.
type Catalogs []Catalog

var (
	_ Prompter     = Catalogs{}
	_ ChangeTeller = Catalogs{}
)

// Pack implements Catalog.
func (cs Catalogs) Pack(ctx context.Context, name string) (*packs.Pack, capability.PackRef, error) {
	err := fmt.Errorf("%w: no catalog", ErrNotFound)
	for _, c := range cs {
		var p *packs.Pack
		var ref capability.PackRef
		p, ref, err = c.Pack(ctx, name)
		switch {
		case err == nil:
			return p, ref, nil
		case !errors.Is(err, ErrNotFound) && !errors.Is(err, dist.ErrNotInstalled):
			return nil, capability.PackRef{}, err
		}
	}
	if !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return nil, capability.PackRef{}, err
}

// Prompt implements Prompter: an installed pack's addition, from the
// first catalog that has one; a pack used in place has none.
func (cs Catalogs) Prompt(ref capability.PackRef) string {
	if ref.InPlace != "" {
		return ""
	}
	for _, c := range cs {
		if pr, ok := c.(Prompter); ok {
			if s := pr.Prompt(ref); s != "" {
				return s
			}
		}
	}
	return ""
}

// ChangeTeller is a Catalog that can say how the folder of a pack used in
// place differs from the content the person granted: "" when it does not.
type ChangeTeller interface {
	Changed(ctx context.Context, ref capability.PackRef) string
}

// Changed implements ChangeTeller.
func (cs Catalogs) Changed(ctx context.Context, ref capability.PackRef) string {
	for _, c := range cs {
		if ct, ok := c.(ChangeTeller); ok {
			if s := ct.Changed(ctx, ref); s != "" {
				return s
			}
		}
	}
	return ""
}

// inPlaceRefused is what a refused call of a pack used in place (ref)
// says besides err. A call refused because the folder no longer matches
// the content it was attached at (packs.ErrModified) loads the pack again
// as it is now, so the next call is of the new content, which holds only
// what the person grants it anew; a call denied for a grant the folder's
// earlier content held says which files changed since. Both are told to
// the person as a notice too. Other errors, and installed packs, are
// returned as they are.
func (s *Session) inPlaceRefused(ctx context.Context, ref capability.PackRef, err error) error {
	if ref.InPlace == "" {
		return err
	}
	ct, _ := s.deps.Catalog.(ChangeTeller)
	switch {
	case errors.Is(err, packs.ErrModified):
		fresh, nref, lerr := s.deps.Catalog.Pack(ctx, ref.Name)
		if lerr != nil {
			s.notice("pack %s changed in %s and no longer loads: %v", ref.Name, ref.InPlace, lerr)
			return fmt.Errorf("%w; it no longer loads: %v", err, lerr)
		}
		s.update(ref.Name, func(a *attached) { a.pack, a.ref = fresh, nref })
		msg := fmt.Sprintf("pack %s changed in %s since it was attached: it is loaded again as it is now", ref.Name, ref.InPlace)
		if ct != nil {
			if d := ct.Changed(ctx, nref); d != "" {
				msg += fmt.Sprintf(" (since the person granted it: %s); its grants no longer hold: the person must grant it again", d)
			}
		}
		s.notice("%s", msg)
		return &inPlaceChanged{msg: "refused: " + msg, err: err}
	case errors.Is(err, capability.ErrDenied) && ct != nil:
		if d := ct.Changed(ctx, ref); d != "" {
			msg := fmt.Sprintf("pack %s changed in %s since the person granted it (%s): its grants no longer hold: the person must grant it again", ref.Name, ref.InPlace, d)
			s.notice("%s", msg)
			return fmt.Errorf("%w: %s", err, msg)
		}
	}
	return err
}

// inPlaceChanged is the refusal of a call whose pack changed in its
// folder: it says so in the words of a pack used in place (the runtime's
// error speaks of an installed pack's lock) and is still the runtime's
// error for errors.Is (packs.ErrModified).
type inPlaceChanged struct {
	msg string
	err error
}

func (e *inPlaceChanged) Error() string { return e.msg }
func (e *inPlaceChanged) Unwrap() error { return e.err }
