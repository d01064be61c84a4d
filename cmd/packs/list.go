package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/packs"
)

func (c *cli) listCommand() *cobra.Command {
	var asJSON bool
	var dirs []string
	cmd := &cobra.Command{
		Use:   "list [--json] [--dir DIR]...",
		Short: "List installed and discovered packs",
		Long: `list shows the installed packs: name, version, status, tools, requested and
granted capabilities, and source. Status is "ok", "modified" (the files no
longer match packs.lock, so the pack does not run), "missing" or
"disabled" (packs disable: installed, but never attached or run; --json
says "disabled": true). Every file of every installed pack is checked: a
folder whose files all keep the stamps (inode, size, modification and
change times) they had when a listing last hashed them, at
least two seconds after they were written, is not read again, as git
checks a work tree; any other folder is hashed. packs run always hashes
the pack it runs.

It also shows the packs discovered in the folders given by --dir (repeatable)
and then in $PACKS_PATH (colon-separated), scanned in that order. When two
packs share a name the first one wins: an installed pack before any
discovered one, then earlier folders before later ones. A discovered pack has
status "discovered", one hidden by a winner of the same name "hidden".
Discovery warnings go to stderr. With --json it prints one JSON array.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			found, err := c.discover(ctx, dirs, out)
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
				if j.HiddenBy != "" {
					source += " (hidden by " + j.HiddenBy + ")"
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

// discover scans the --dir folders, then $PACKS_PATH, with packs.Discover
// and returns the packs found, each loaded for its version, tools and
// request. A pack named like an installed one, or like one found in an
// earlier folder, is listed as hidden by it. Findings go to stderr.
func (c *cli) discover(ctx context.Context, dirs []string, installed []packJSON) ([]packJSON, error) {
	roots := slices.Clone(dirs)
	for _, r := range filepath.SplitList(c.getenv("PACKS_PATH")) {
		if r != "" {
			roots = append(roots, r)
		}
	}
	if len(roots) == 0 {
		return nil, nil
	}
	res, err := packs.Discover(ctx, roots, packs.DiscoverOptions{})
	if err != nil {
		return nil, err
	}
	for _, f := range res.Findings {
		fmt.Fprintln(c.stderr, f.String())
	}
	var out []packJSON
	for _, s := range res.Packs {
		j := packJSON{Name: s.Name, Description: s.Description, Source: fileURL(s.Dir), Dir: s.Dir, Origin: originDiscovered,
			Status: statusDiscovered, Tools: []string{}, Requested: []capabilityUse{}, Granted: []string{}}
		if slices.ContainsFunc(installed, func(i packJSON) bool { return i.Name == s.Name }) {
			j.Status, j.HiddenBy = statusHidden, originInstalled
		}
		p, err := packs.Load(s.Dir, packs.LoadOptions{})
		if err != nil {
			j.Error = err.Error()
			out = append(out, j)
			continue
		}
		if p.Manifest != nil {
			j.Version = p.Manifest.Version
		}
		for _, t := range p.Tools {
			j.Tools = append(j.Tools, t.Name)
		}
		req := p.Request()
		for _, n := range req.Names() {
			j.Requested = append(j.Requested, capabilityUse{Capability: n, Resources: req.Resources(n), GrantedResources: []string{}})
		}
		out = append(out, j)
	}
	for _, col := range res.Collisions {
		out = append(out, packJSON{Name: col.Name, Source: fileURL(col.Loser), Dir: col.Loser, Origin: originDiscovered,
			Status: statusHidden, HiddenBy: col.Winner, Tools: []string{}, Requested: []capabilityUse{}, Granted: []string{}})
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
