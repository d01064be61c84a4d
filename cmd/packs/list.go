package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
)

func (c *cli) listCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List installed packs",
		Long: `list shows the installed packs: name, version, status, tools, requested and
granted capabilities, and source. Status is "ok", "modified" (the files no
longer match packs.lock, so the pack does not run) or "missing". With --json
it prints one JSON array.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.Packs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]packJSON, len(list))
				for i, ip := range list {
					out[i] = toJSON(ip)
				}
				return writeJSON(c.stdout, out)
			}
			if len(list) == 0 {
				fmt.Fprintln(c.stderr, "no packs installed: add one with packs add SOURCE")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tSTATUS\tTOOLS\tREQUESTED\tGRANTED\tSOURCE")
			for _, ip := range list {
				j := toJSON(ip)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, dash(j.Version), j.Status,
					dash(strings.Join(j.Tools, ",")), dash(strings.Join(names(j.Requested), ",")),
					dash(strings.Join(j.Granted, ",")), j.Source)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	return cmd
}

// packJSON is an installed pack in list --json and info --json.
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
}

// capabilityUse is one requested capability, its resources and whether it
// was granted.
type capabilityUse struct {
	Capability capability.Name `json:"capability"`
	Resources  []string        `json:"resources"`
	Granted    bool            `json:"granted"`
}

func toJSON(ip app.InstalledPack) packJSON {
	e := ip.Entry
	j := packJSON{
		Name: e.Name, Version: e.Version, Source: e.Source, Integrity: e.Integrity,
		Installed: e.Installed, Status: ip.Status, Tools: []string{}, Requested: []capabilityUse{}, Granted: []string{},
	}
	for _, n := range e.Requested() {
		c := e.Capabilities[n]
		j.Requested = append(j.Requested, capabilityUse{Capability: n, Resources: c.Resources, Granted: c.Granted})
		if c.Granted {
			j.Granted = append(j.Granted, string(n))
		}
	}
	if ip.LoadErr != nil {
		j.Error = ip.LoadErr.Error()
	}
	if ip.Pack != nil {
		j.Description = ip.Pack.Frontmatter.Description
		for _, t := range ip.Pack.Tools {
			j.Tools = append(j.Tools, t.Name)
		}
	}
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
