package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

func (c *cli) infoCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info [--json] NAME",
		Short: "Show everything about one installed or in-place pack",
		Long: `info shows one installed pack: its metadata, where it came from, its
integrity and status, its tools with their descriptions, and each capability
it asks for next to whether it was granted.

A name that is not installed is looked up in the skills folders (see packs
list): info then shows the folder the pack is used from, which kind of
folder found it, whether it can be attached in place, what its folder was
granted, and what changed in it since.`,
		Args: nargs(1, 1, "one pack NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			if a == nil {
				d, err := c.discoverer(nil)
				if err != nil {
					return err
				}
				return c.inPlaceInfo(cmd.Context(), d, args[0], asJSON)
			}
			defer a.Close()
			ip, err := a.Pack(cmd.Context(), args[0])
			if errors.Is(err, dist.ErrNotInstalled) {
				return c.inPlaceInfo(cmd.Context(), a, args[0], asJSON)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, infoJSON(ip))
			}
			c.printInfo(a, ip)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// toolJSON is one tool in info --json.
type toolJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Run         string `json:"run"`
}

type infoOut struct {
	packJSON
	Dir           string     `json:"dir"`
	EntryDoc      string     `json:"entry_doc,omitempty"`
	License       string     `json:"license,omitempty"`
	Compatibility string     `json:"compatibility,omitempty"`
	ToolDetails   []toolJSON `json:"tool_details"`
	// From skill.toml: what the pack says of itself, and what it needs.
	Repository    string   `json:"repository,omitempty"`
	Homepage      string   `json:"homepage,omitempty"`
	Documentation string   `json:"documentation,omitempty"`
	Keywords      []string `json:"keywords,omitempty"`
	Platform      string   `json:"platform,omitempty"`
	Requires      []string `json:"requires,omitempty"` // [dependencies]: "NAME CONSTRAINT"
}

func infoJSON(ip app.InstalledPack) infoOut {
	out := infoOut{packJSON: toJSON(ip), ToolDetails: []toolJSON{}}
	if p := ip.Pack; p != nil {
		out.Dir, out.EntryDoc = p.Dir, p.EntryDoc
		out.License, out.Compatibility = p.Frontmatter.License, p.Frontmatter.Compatibility
		for _, t := range p.Tools {
			out.ToolDetails = append(out.ToolDetails, toolJSON{Name: t.Name, Description: t.Description, Run: describeRun(t.Run)})
		}
		if m := p.Manifest; m != nil {
			out.Repository, out.Homepage, out.Documentation, out.Keywords = m.Repository, m.Homepage, m.Documentation, m.Keywords
			out.Platform = describePlatform(m.Platform)
			for _, d := range m.Dependencies {
				r := strings.TrimSpace(d.Pack + " " + d.Constraint)
				if d.Optional {
					r += " (optional)"
				}
				out.Requires = append(out.Requires, r)
			}
		}
	}
	return out
}

// describePlatform renders [platform] in one line; "" when it says nothing.
func describePlatform(pl packs.Platform) string {
	var parts []string
	for _, p := range []struct {
		what string
		list []string
	}{{"os", pl.OS}, {"arch", pl.Arch}, {"needs", pl.RequiredTools}, {"uses", pl.OptionalTools}} {
		if len(p.list) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.list, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

func (c *cli) printInfo(a *app.App, ip app.InstalledPack) {
	j := infoJSON(ip)
	if j.Dir == "" {
		j.Dir, _ = a.Home.PackDir(j.Name)
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
	row("status", string(j.Status))
	if j.Disabled {
		row("disabled", "yes: it is never attached or run; packs enable "+j.Name+" turns it back on")
	}
	row("source", j.Source)
	row("integrity", j.Integrity)
	row("installed", j.Installed.Local().Format(time.RFC3339))
	row("folder", j.Dir)
	row("entry doc", j.EntryDoc)
	row("license", j.License)
	row("compatibility", j.Compatibility)
	row("repository", j.Repository)
	row("homepage", j.Homepage)
	row("documentation", j.Documentation)
	row("keywords", strings.Join(j.Keywords, ", "))
	row("platform", j.Platform)
	row("requires", strings.Join(j.Requires, ", "))
	row("error", j.Error)
	w.Flush()
	switch j.Status {
	case app.StatusModified:
		fmt.Fprintln(c.stdout, "\nthe files no longer match packs.lock, so the pack does not run: reinstall it with packs add, or remove it")
	case app.StatusMissing:
		fmt.Fprintln(c.stdout, "\nthe pack folder is missing: reinstall it with packs add, or remove it")
	case app.StatusStale:
		fmt.Fprintln(c.stdout, "\nthe shared store records other content under this name, or none (another replica updated or removed it), so the pack does not run here: install what the store records with packs add or packs update, or remove it")
	}
	if len(j.ToolDetails) > 0 {
		fmt.Fprintln(c.stdout, "\ntools:")
		for _, t := range j.ToolDetails {
			fmt.Fprintf(c.stdout, "  %s  (%s)\n", t.Name, t.Run)
			for _, line := range strings.Split(strings.TrimSpace(t.Description), "\n") {
				fmt.Fprintf(c.stdout, "      %s\n", line)
			}
		}
	}
	fmt.Fprintln(c.stdout, "\ncapabilities:")
	if len(j.Requested) == 0 {
		fmt.Fprintln(c.stdout, "  none requested beyond the defaults")
		return
	}
	w = tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	for _, u := range j.Requested {
		state := "not granted"
		if u.Granted {
			state = "granted"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", u.Capability, state, strings.Join(u.Resources, ", "))
	}
	w.Flush()
}

// describeRun says how a tool runs, in a few words.
func describeRun(r packs.Run) string {
	switch r.ABI {
	case packs.ABIExec:
		return "native: " + strings.Join(r.Exec, " ")
	case packs.ABIWASI:
		return "wasi command " + r.Wasm
	}
	return fmt.Sprintf("wasm %s, function %s", r.Wasm, r.Function)
}
