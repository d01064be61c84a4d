package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// The app's Remove, Disable/Enable and Update of a pack, and the offer its
// consent dialogs show. Each goes through the same App method as the
// command of the same name (packs remove, disable, enable, update): the
// policy applies as it does there.

var (
	// errPreview stops the installer where it would ask for consent: the
	// request only asked what the pack asks for.
	errPreview = fmt.Errorf("%w: a preview installs nothing", app.ErrDeclined)
	// errChanged: the content fetched now is not the content the person
	// reviewed (its integrity differs): nothing is installed.
	errChanged = errors.New("web: the pack changed since you reviewed it")
)

// offerJSON is what the consent dialog shows before a pack is installed or
// updated: what it is, what it asks for, and for an update what changed.
type offerJSON struct {
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Description string     `json:"description"`
	Source      string     `json:"source"`
	Integrity   string     `json:"integrity"`
	Signer      string     `json:"signer,omitempty"`
	Tools       []toolJSON `json:"tools"`
	// Capabilities are what the pack asks for, in the order of
	// capability.All().
	Capabilities []offerCapJSON  `json:"capabilities"`
	Warnings     []packs.Finding `json:"warnings"`
	// An update's: the version it replaces, the request's diff as lines
	// ("+ network: api.example.com"), the grants that carry over and those
	// dropped (no longer asked for).
	From    string   `json:"from,omitempty"`
	Changes []string `json:"changes,omitempty"`
	Carried []string `json:"carried,omitempty"`
	Dropped []string `json:"dropped,omitempty"`
}

// offerCapJSON is one capability a pack asks for.
type offerCapJSON struct {
	Capability capability.Name `json:"capability"`
	Requested  []string        `json:"requested"`
	// PreApproved: the enterprise policy grants it without asking.
	PreApproved bool `json:"pre_approved,omitempty"`
	// Added are the resources an update newly asks for (nil: nothing new).
	Added []string `json:"added,omitempty"`
}

func newOffer(o app.Offer) *offerJSON {
	st := o.Staged
	out := &offerJSON{Name: st.Name(), Source: st.Source, Integrity: st.Integrity, Signer: st.Signer,
		Description: st.Pack.Frontmatter.Description, Tools: []toolJSON{}, Capabilities: []offerCapJSON{}, Warnings: orEmptyList(st.Findings)}
	if m := st.Pack.Manifest; m != nil {
		out.Version = m.Version
	}
	for _, t := range st.Pack.Tools {
		out.Tools = append(out.Tools, toolJSON{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	for _, n := range o.Request.Names() {
		out.Capabilities = append(out.Capabilities, offerCapJSON{Capability: n, Requested: orEmpty(o.Request.Resources(n)),
			PreApproved: slices.Contains(o.PreApproved, n), Added: o.Diff.Added[n]})
	}
	if o.Previous != nil {
		out.From = o.Previous.Version
		out.Changes = o.Diff.Lines()
		for _, u := range o.Carried {
			out.Carried = append(out.Carried, string(u.Capability))
		}
		for _, n := range o.Dropped {
			out.Dropped = append(out.Dropped, string(n))
		}
	}
	return out
}

func orEmptyList[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// reviewed wraps the person's consent: with form.Preview it records the
// offer into *offer and installs nothing (errPreview); with
// form.Integrity it consents only to that content.
func reviewed(c app.Consent, form installForm, offer **offerJSON) app.Consent {
	return app.ConsentFunc(func(ctx context.Context, o app.Offer) ([]capability.UserGrant, error) {
		if form.Preview {
			*offer = newOffer(o)
			return nil, errPreview
		}
		if form.Integrity != "" && form.Integrity != o.Staged.Integrity {
			return nil, fmt.Errorf("%w: you reviewed %s and its source now holds %s: nothing was installed; review it again", errChanged, form.Integrity, o.Staged.Integrity)
		}
		return c.Consent(ctx, o)
	})
}

// removePack uninstalls a pack, as packs remove does: its folder, its
// packs.lock entry and its grants go.
func (s *Server) removePack(w http.ResponseWriter, r *http.Request) {
	e, err := s.cfg.App.Remove(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": e.Name, "version": e.Version, "removed": true})
}

func (s *Server) enablePack(w http.ResponseWriter, r *http.Request)  { s.setEnabled(w, r, true) }
func (s *Server) disablePack(w http.ResponseWriter, r *http.Request) { s.setEnabled(w, r, false) }

// setEnabled is packs enable and packs disable: a pack the policy
// mandates cannot be disabled (403).
func (s *Server) setEnabled(w http.ResponseWriter, r *http.Request, enabled bool) {
	name := r.PathValue("name")
	changed, err := s.cfg.App.SetEnabled(r.Context(), name, enabled)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "enabled": enabled, "changed": changed})
}

// updatePack fetches an installed pack again from its source, as packs
// update does. With {"preview": true} it answers the update's offer (the
// new version, the request's diff, the grants that carry over) and
// changes nothing; otherwise it updates to the content of "integrity"
// (when given), granting the carried grants and, of the new requests,
// those named in "grant". A new request not named stays ungranted.
func (s *Server) updatePack(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var body struct {
		Preview   bool     `json:"preview"`
		Integrity string   `json:"integrity"`
		Grant     []string `json:"grant"`
	}
	if err := readJSON(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	e, err := s.cfg.App.Home.Entry(name)
	if err != nil {
		s.fail(w, err)
		return
	}
	if builtin.IsSource(e.Source) {
		s.updateBuiltin(w, r, e, body.Preview)
		return
	}
	var grant []capability.Name
	for _, g := range body.Grant {
		n, err := capability.ParseName(g)
		if err != nil {
			s.fail(w, fmt.Errorf("%w: grant: %v", errBadRequest, err))
			return
		}
		grant = append(grant, n)
	}
	consent := app.ConsentFunc(func(_ context.Context, o app.Offer) ([]capability.UserGrant, error) {
		grants := slices.Clone(o.Carried)
		for _, n := range grant {
			if _, ok := o.Diff.Added[n]; !ok {
				return nil, fmt.Errorf("%w: grant: this update of %s does not newly ask for %s: grant only its new requests (its other grants carry over)", dist.ErrNotRequested, name, n)
			}
			grants = o.Widen(grants, n)
		}
		return grants, nil
	})
	var offer *offerJSON
	p, _ := personOf(r)
	res, err := s.cfg.App.Update(r.Context(), name, app.InstallRequest{By: "web", Person: p.Subject, Issuer: p.Issuer,
		Consent: reviewed(consent, installForm{Preview: body.Preview, Integrity: body.Integrity}, &offer)})
	switch {
	case body.Preview && errors.Is(err, errPreview):
		writeJSON(w, http.StatusOK, map[string]any{"status": "available", "offer": offer})
		return
	case err != nil:
		s.fail(w, err)
		return
	}
	status := "updated"
	if res.UpToDate {
		status = "up_to_date"
	}
	out, err := s.packDetails(r, name)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": status, "pack": out})
}

// updateBuiltin is Update of a built-in pack, as packs update does it:
// App.EnsureBuiltins brings the built-ins to the version this packs binary
// carries, keeping the person's grants no wider than they were, and asks
// for no consent (a built-in's update grants nothing new). A preview says
// only whether e is older than that version. The answer has "built_in":
// true.
func (s *Server) updateBuiltin(w http.ResponseWriter, r *http.Request, e dist.LockEntry, preview bool) {
	carried, ok := builtin.Digest(e.Name)
	if !ok {
		s.fail(w, fmt.Errorf("%w: %s was built into an older packs binary, not this one: nothing can update it; remove it, or install a pack of that name from elsewhere", errBuiltIn, e.Name))
		return
	}
	status := "up_to_date"
	if e.Integrity != carried {
		status = "available"
		if !preview {
			if err := s.cfg.App.Policy.Blocked(capability.PackRef{Name: e.Name, Digest: carried}); err != nil {
				s.fail(w, err)
				return
			}
			if err := s.cfg.App.EnsureBuiltins(r.Context()); err != nil {
				s.fail(w, err)
				return
			}
			status = "updated"
		}
	}
	out := map[string]any{"status": status, "built_in": true}
	if !preview {
		p, err := s.packDetails(r, e.Name)
		if err != nil {
			s.fail(w, err)
			return
		}
		out["pack"] = p
	}
	writeJSON(w, http.StatusOK, out)
}
