package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
)

func (c *cli) listCommand() *cobra.Command {
	var asJSON bool
	var dirs []string
	cmd := &cobra.Command{
		Use:   "list [--json] [--dir DIR]...",
		Short: "List installed packs and those found in skills folders (used in place)",
		Long: `list shows the installed packs: name, version, status, tools, requested and
granted capabilities, and source. Status is "ok", "modified" (the files no
longer match packs.lock, so the pack does not run), "missing", "stale"
(with a shared --store: another replica installed other content under
its name, or removed it, so it does not run here) or "disabled" (packs disable: installed, but never attached or run; --json
says "disabled": true). Every file of every installed pack is checked: a
folder whose files all keep the stamps (inode, size, modification and
change times) they had when a listing last hashed them, at
least two seconds after they were written, is not read again, as git
checks a work tree; any other folder is hashed. packs run always hashes
the pack it runs.

It also shows the packs discovered in the skills folders, scanned in this
order: the folders given by --dir (repeatable), $PACKS_PATH (colon-
separated), the paths of [discover] in <home>/config.toml; then the project
folders below the working directory, .claude/skills and .agents/skills; then
the user folders ~/.claude/skills, ~/.agents/skills and ~/.codex/skills.
[discover] project = false or user = false leaves a kind out, and so can the
enterprise policy's [discover]. When two packs share a name the first one
wins: an installed pack before any discovered one, then earlier folders
before later ones. A discovered pack has status "discovered" and is used in
place: packs chat --attach NAME (and packs mcp, packs serve, an agent)
attaches it from its folder, its docs readable at once, its tools and
scripts needing your grants (packs grant NAME CAP), which hold for the
folder's files as they are when granted. One hidden by a winner of the same
name has status "hidden". --json adds location ("given", "project",
"user"), root, attachable (and not_attachable, why not) and
changed_since_grant. Discovery warnings go to stderr. With --json it prints
one JSON array.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer lessGC()()
			ctx := cmd.Context()
			a, err := c.openExisting(ctx)
			if err != nil {
				return err
			}
			var list []app.InstalledPack
			if a != nil {
				defer a.Close()
				if list, err = a.Listing(ctx); err != nil {
					return err
				}
			}
			out := make([]packJSON, len(list))
			for i, ip := range list {
				out[i] = toJSON(ip)
			}
			found, err := c.discover(ctx, a, dirs)
			if err != nil {
				return err
			}
			out = append(out, found...)
			if asJSON {
				return writeJSON(c.stdout, out)
			}
			if len(out) == 0 {
				fmt.Fprintf(c.stderr, "no packs installed: add one with packs add SOURCE\n"+
					"the built-in packs (%s) are installed the first time you run packs chat, mcp, serve or run\n",
					strings.Join(builtin.Names(), ", "))
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tSTATUS\tTOOLS\tREQUESTED\tGRANTED\tSOURCE")
			for _, j := range out {
				source := j.Source
				switch {
				case j.HiddenBy != "":
					source += " (hidden by " + j.HiddenBy + ")"
				case j.Attachable:
					source += " (in place, " + j.Location + " folder)"
				case j.Origin == originDiscovered:
					source += " (not attachable: " + j.NotAttachable + ")"
				}
				status := string(j.Status)
				switch {
				case j.Disabled && j.Status == app.StatusOK:
					status = "disabled"
				case j.Disabled:
					status += ",disabled"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, dash(j.Version), status,
					dash(strings.Join(j.Tools, ",")), dash(strings.Join(names(j.Requested), ",")),
					dash(strings.Join(j.Granted, ",")), source)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	cmd.Flags().StringArrayVar(&dirs, "dir", nil, "a folder of packs to discover (repeatable; scanned before $PACKS_PATH)")
	return cmd
}

// Statuses of packs that are discovered, not installed.
const (
	statusDiscovered app.Status = "discovered" // found in a --dir or $PACKS_PATH folder
	statusHidden     app.Status = "hidden"     // found, but a pack of the same name comes first
)

// discover lists the packs found in the skills folders: the --dir
// folders, $PACKS_PATH, config.toml's [discover] paths, then the usual
// project and user folders (app.DiscoverRoots), each loaded for its
// version, tools, request and the grants of its folder. A pack named like
// an installed one, or like one found in an earlier folder, is listed as
// hidden by it. Findings go to stderr.
func (c *cli) discover(ctx context.Context, a *app.App, dirs []string) ([]packJSON, error) {
	d, err := c.discoverer(a)
	if err != nil {
		return nil, err
	}
	found, findings, err := d.InPlacePacks(ctx, mustGetwd(), dirs)
	if err != nil {
		return nil, err
	}
	for _, f := range findings {
		fmt.Fprintln(c.stderr, f.String())
	}
	out := make([]packJSON, 0, len(found))
	for _, p := range found {
		out = append(out, c.inPlaceJSON(ctx, d, p))
	}
	return out, nil
}

// fileURL is a folder as a file:// URL, the form of an installed source.
func fileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// Origins of a listed pack.
const (
	originInstalled  = "installed"
	originDiscovered = "discovered"
)

// packJSON is a pack in list --json and info --json. Fields are only ever
// added, never renamed: scripts read them.
type packJSON struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description string          `json:"description,omitempty"`
	Source      string          `json:"source"`
	Integrity   string          `json:"integrity"`
	Installed   time.Time       `json:"installed"`
	Status      app.Status      `json:"status"`
	Error       string          `json:"error,omitempty"` // why the pack does not load
	Tools       []string        `json:"tools"`
	Requested   []capabilityUse `json:"requested"`
	Granted     []string        `json:"granted"`
	Origin      string          `json:"origin"`              // "installed" or "discovered"
	Dir         string          `json:"dir,omitempty"`       // the folder of a discovered pack
	HiddenBy    string          `json:"hidden_by,omitempty"` // what hides a hidden pack: "installed" or the winner's folder
	// Disabled says the person disabled the installed pack (packs
	// disable): it is never attached, offered to a model or run.
	Disabled bool `json:"disabled"`
	// For a discovered pack: the kind of folder it was found in
	// ("given", "project" or "user"), that folder, whether it can be
	// attached in place (and why not), and, when the folder changed since
	// the person granted it, what changed.
	Location          string `json:"location,omitempty"`
	Root              string `json:"root,omitempty"`
	Attachable        bool   `json:"attachable,omitempty"`
	NotAttachable     string `json:"not_attachable,omitempty"`
	ChangedSinceGrant string `json:"changed_since_grant,omitempty"`
}

// capabilityUse is one requested capability, the resources the pack asks
// for, whether it was granted and the granted resources (packs.lock's).
type capabilityUse struct {
	Capability       capability.Name `json:"capability"`
	Resources        []string        `json:"resources"`
	Granted          bool            `json:"granted"`
	GrantedResources []string        `json:"granted_resources"`
}

func toJSON(ip app.InstalledPack) packJSON {
	e := ip.Entry
	j := packJSON{
		Name: e.Name, Version: e.Version, Source: e.Source, Integrity: e.Integrity, Origin: originInstalled,
		Installed: e.Installed, Status: ip.Status, Tools: []string{}, Requested: []capabilityUse{}, Granted: []string{},
		Disabled: ip.Disabled,
	}
	// packs.lock records granted resources; what the pack asks for is in
	// its skill.toml, when it loads.
	sum := ip.Summary
	if ip.Pack != nil {
		sum = app.SummaryOf(ip.Pack)
	}
	for _, n := range e.Requested() {
		c := e.Capabilities[n]
		use := capabilityUse{Capability: n, Resources: slices.Clone(sum.Requested[n]), Granted: c.Granted, GrantedResources: slices.Clone(c.Resources)}
		if use.Resources == nil {
			use.Resources = []string{}
		}
		if use.GrantedResources == nil {
			use.GrantedResources = []string{}
		}
		j.Requested = append(j.Requested, use)
		if c.Granted {
			j.Granted = append(j.Granted, string(n))
		}
	}
	if ip.LoadErr != nil {
		j.Error = ip.LoadErr.Error()
	}
	j.Description = sum.Description
	j.Tools = append(j.Tools, sum.Tools...)
	return j
}

func names(cs []capabilityUse) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c.Capability)
	}
	return out
}

// lessGC lets the heap grow to five times what is live before a
// collection (GOGC=400), below a soft limit of 512 MiB, until the
// returned func puts the settings back. A listing allocates a lot that
// lives until it is printed; with 10,000 packs the collector took about a
// tenth of its CPU time at the default, for some 40 MB more at the peak.
func lessGC() (restore func()) {
	gc := debug.SetGCPercent(400)
	limit := debug.SetMemoryLimit(512 << 20)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
