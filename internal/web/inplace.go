package web

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/dist"
)

// statusInPlace is the status of a pack used in place, in the listing.
const statusInPlace = "in_place"

// inPlaceJSON is where a pack used in place lives and whether it can be
// attached (openapi.json's InPlace).
type inPlaceJSON struct {
	Dir               string `json:"dir"`
	Root              string `json:"root,omitempty"`
	Location          string `json:"location"`
	Attachable        bool   `json:"attachable"`
	NotAttachable     string `json:"not_attachable,omitempty"`
	HiddenBy          string `json:"hidden_by,omitempty"`
	ChangedSinceGrant string `json:"changed_since_grant,omitempty"`
}

// inPlacePacks lists the packs used in place, after the installed ones;
// none without Config.InPlace.
func (s *Server) inPlacePacks(ctx context.Context) ([]packJSON, error) {
	c := s.cfg.InPlace
	if c == nil {
		return nil, nil
	}
	found, _, err := c.App.InPlacePacks(ctx, c.WorkDir, nil)
	if err != nil {
		return nil, err
	}
	var out []packJSON
	for _, p := range found {
		if p.HiddenBy == "installed" {
			continue // the installed pack of that name is listed
		}
		out = append(out, s.inPlaceInfo(ctx, p))
	}
	return out, nil
}

// inPlaceInfo is one pack used in place as the listing shows it, with
// the grants its folder holds at its content now.
func (s *Server) inPlaceInfo(ctx context.Context, p app.InPlacePack) packJSON {
	c := s.cfg.InPlace
	out := packJSON{Name: p.Name, Source: "file://" + filepath.ToSlash(p.Dir), Status: statusInPlace, Description: p.Description, Origin: originInPlace,
		Tools: []toolJSON{}, Capabilities: []capJSON{},
		InPlace: &inPlaceJSON{Dir: p.Dir, Root: p.Root, Location: string(p.Kind), HiddenBy: p.HiddenBy}}
	if err := p.Attachable(s.cfg.Chat.Pipeline.Policy()); err != nil {
		out.InPlace.NotAttachable = err.Error()
	} else {
		out.InPlace.Attachable = true
	}
	if p.LoadErr != nil {
		out.Error = p.LoadErr.Error()
	}
	if p.Pack == nil {
		return out
	}
	if m := p.Pack.Manifest; m != nil {
		out.Version = m.Version
	}
	for _, t := range p.Pack.Tools {
		out.Tools = append(out.Tools, toolJSON{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	var user []capability.UserGrant
	if out.InPlace.Attachable {
		if _, ref, err := p.Ref(); err == nil {
			out.Integrity = ref.Digest
			user, _ = c.App.Grants().PeekGrants(ctx, ref, "")
			out.InPlace.ChangedSinceGrant = c.Changed(ctx, ref)
		}
	}
	req := p.Pack.Request()
	for _, n := range req.Names() {
		cj := capJSON{Capability: n, Requested: orEmpty(req.Resources(n)), GrantedResources: []string{}}
		for _, u := range user {
			if u.Capability == n && !u.Revoked {
				cj.Granted = true
				cj.GrantedResources = append(cj.GrantedResources, u.Resources...)
			}
		}
		out.Capabilities = append(out.Capabilities, cj)
	}
	return out
}

// inPlaceDetails is packDetails of a pack used in place: the listing's
// entry of the first pack of that name discovered.
func (s *Server) inPlaceDetails(r *http.Request, name string, notInstalled error) (packJSON, error) {
	if s.cfg.InPlace == nil {
		return packJSON{}, notInstalled
	}
	found, _, err := s.cfg.InPlace.App.InPlacePacks(r.Context(), s.cfg.InPlace.WorkDir, nil)
	if err != nil {
		return packJSON{}, err
	}
	for _, p := range found {
		if p.Name == name && p.HiddenBy == "" {
			out := s.inPlaceInfo(r.Context(), p)
			if p.Pack != nil {
				out.Docs = s.docs(p.Pack)
			}
			return out, nil
		}
	}
	return packJSON{}, notInstalled
}

// grantInPlace records a grant to the pack used in place name, bound to
// its folder's content now.
func (s *Server) grantInPlace(ctx context.Context, name, chat string, u capability.UserGrant) error {
	if s.cfg.InPlace == nil {
		return dist.ErrNotInstalled
	}
	_, _, err := s.cfg.InPlace.App.GrantInPlace(ctx, s.cfg.InPlace.WorkDir, name, chat, []capability.UserGrant{u})
	return err
}

// isNotInstalled reports whether err says no pack of that name is
// installed, so a pack used in place may be meant.
func isNotInstalled(err error) bool { return errors.Is(err, dist.ErrNotInstalled) }
