package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// discoverer is the App discovery runs on: a, or, where no state
// directory exists yet, one with the policy alone.
func (c *cli) discoverer(a *app.App) (*app.App, error) {
	if a != nil {
		return a, nil
	}
	pol, err := capability.FindPolicy(c.policyPath(), nil)
	if err != nil {
		return nil, err
	}
	return app.Discoverer(pol, c.getenv), nil
}

// inPlaceJSON is one pack found in a skills folder, as list and info
// show it: where it lives, whether it can be attached in place, and what
// the person granted its folder at its content now.
func (c *cli) inPlaceJSON(ctx context.Context, a *app.App, p app.InPlacePack) packJSON {
	j := packJSON{Name: p.Name, Description: p.Description, Source: fileURL(p.Dir), Dir: p.Dir, Origin: originDiscovered,
		Status: statusDiscovered, Tools: []string{}, Requested: []capabilityUse{}, Granted: []string{},
		Location: string(p.Kind), Root: p.Root}
	if p.HiddenBy != "" {
		j.Status, j.HiddenBy = statusHidden, p.HiddenBy
	}
	if err := p.Attachable(a.Policy); err != nil {
		j.NotAttachable = err.Error()
	} else {
		j.Attachable = true
	}
	if p.Pack == nil {
		if p.LoadErr != nil {
			j.Error = p.LoadErr.Error()
		}
		return j
	}
	if p.Pack.Manifest != nil {
		j.Version = p.Pack.Manifest.Version
	}
	for _, t := range p.Pack.Tools {
		j.Tools = append(j.Tools, t.Name)
	}
	var user []capability.UserGrant
	if a.DB != nil && j.Attachable {
		if _, ref, err := p.Ref(); err == nil {
			j.Integrity = ref.Digest
			user, _ = a.Grants().PeekGrants(ctx, ref, "")
			if d, ok, _ := a.InPlaceChange(ctx, ref.InPlace, ref.Digest); ok {
				j.ChangedSinceGrant = d.String()
			}
		}
	}
	req := p.Pack.Request()
	for _, n := range req.Names() {
		use := capabilityUse{Capability: n, Resources: req.Resources(n), GrantedResources: []string{}}
		for _, u := range user {
			if u.Capability == n && !u.Revoked && u.Scope == capability.ScopePersistent {
				use.Granted = true
				use.GrantedResources = append(use.GrantedResources, u.Resources...)
			}
		}
		if use.Granted {
			j.Granted = append(j.Granted, string(n))
		}
		j.Requested = append(j.Requested, use)
	}
	return j
}

// mustGetwd is the working directory the project skills folders are
// found below; "" (no project folders) when it cannot be read.
func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}

// inPlaceInfo is packs info of a pack that is not installed: the first
// pack of that name discovered in a skills folder.
func (c *cli) inPlaceInfo(ctx context.Context, a *app.App, name string, asJSON bool) error {
	found, _, err := a.InPlacePacks(ctx, mustGetwd(), nil)
	if err != nil {
		return err
	}
	for _, p := range found {
		if p.Name != name || p.HiddenBy != "" {
			continue
		}
		j := c.inPlaceJSON(ctx, a, p)
		out := infoOut{packJSON: j, Dir: p.Dir, EntryDoc: p.EntryDoc, ToolDetails: []toolJSON{}}
		if p.Pack != nil {
			out.License, out.Compatibility = p.Pack.Frontmatter.License, p.Pack.Frontmatter.Compatibility
			for _, t := range p.Pack.Tools {
				out.ToolDetails = append(out.ToolDetails, toolJSON{Name: t.Name, Description: t.Description, Run: describeRun(t.Run)})
			}
		}
		if asJSON {
			return writeJSON(c.stdout, out)
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		row := func(k, v string) {
			if v != "" {
				fmt.Fprintf(w, "%s:\t%s\n", k, v)
			}
		}
		row("name", j.Name)
		row("version", j.Version)
		row("description", j.Description)
		row("status", "in place (not installed)")
		row("folder", p.Dir)
		row("found in", fmt.Sprintf("%s (%s folder)", p.Root, p.Kind))
		row("integrity", j.Integrity)
		row("entry doc", p.EntryDoc)
		row("license", out.License)
		if j.Attachable {
			row("attachable", "yes: packs chat --attach "+j.Name+" uses it from this folder; its docs are read at once, its tools and scripts need grants (packs grant "+j.Name+" CAP)")
		} else {
			row("attachable", "no: "+j.NotAttachable)
		}
		row("changed", j.ChangedSinceGrant)
		row("error", j.Error)
		w.Flush()
		if j.ChangedSinceGrant != "" {
			fmt.Fprintf(c.stdout, "\nthe folder changed since you granted it (%s): its grants no longer hold; grant again with packs grant %s CAP\n", j.ChangedSinceGrant, j.Name)
		}
		fmt.Fprintln(c.stdout, "\ncapabilities:")
		if len(j.Requested) == 0 {
			fmt.Fprintln(c.stdout, "  none requested beyond the defaults")
			return nil
		}
		w = tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		for _, u := range j.Requested {
			state := "not granted"
			if u.Granted {
				state = "granted"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\n", u.Capability, state, strings.Join(u.Resources, ", "))
		}
		return w.Flush()
	}
	return fmt.Errorf("%w: %s (nor found in a skills folder: see packs list)", dist.ErrNotInstalled, name)
}

// grantTarget is the pack packs grant names: the installed one, else the
// one used in place (loaded as its folder is now).
func (c *cli) grantTarget(ctx context.Context, a *app.App, name string) (*packs.Pack, capability.PackRef, error) {
	if _, err := a.Home.Entry(name); !errors.Is(err, dist.ErrNotInstalled) {
		return installedPack(a, name)
	}
	p, ref, err := a.InPlace(ctx, mustGetwd(), name)
	if err != nil {
		return nil, capability.PackRef{}, usageError("%w", err)
	}
	return p, ref, nil
}
