package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/app"
)

func (c *cli) reviewCommand() *cobra.Command {
	var asJSON bool
	var keep, revoke []string
	cmd := &cobra.Command{
		Use:   "review [--json] [--keep PACK:CAP]... [--revoke PACK:CAP]...",
		Short: "Review the grants the policy says are due for review",
		Long: `review lists the persistent grants you made that the enterprise policy's
[review] says are due for review: granted (or last kept) longer ago than
its after = "90d". Under lapse = true such a grant holds no more until you
keep it.

At a terminal review asks about each: keep it (its age counts from today)
or revoke it (as packs revoke does). --keep PACK:CAP and --revoke PACK:CAP
decide without asking, for scripts. With no policy [review], nothing is
ever due.

--json prints the grants due, before any decision, as one JSON array:

  [{"pack": "web-fetch", "capability": "network", "resources": [],
    "since": "2026-01-02T…Z", "due": "2026-04-02T…Z", "lapsed": false}]`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			due, err := a.Review(ctx, time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				if due == nil {
					due = []app.DueGrant{}
				}
				if err := writeJSON(c.stdout, due); err != nil {
					return err
				}
			}
			decide := map[string]bool{} // "PACK:CAP" -> keep it
			for keepIt, l := range [][]string{revoke, keep} {
				for _, s := range l {
					if _, _, ok := strings.Cut(s, ":"); !ok {
						return usageError("review: %q: write PACK:CAP, as web-fetch:network", s)
					}
					decide[s] = keepIt == 1
				}
			}
			for key := range decide {
				if !slices.ContainsFunc(due, func(d app.DueGrant) bool { return d.Pack+":"+string(d.Capability) == key }) {
					return usageError("review: %s is not due for review: packs review lists what is", key)
				}
			}
			if !asJSON {
				if len(due) == 0 {
					fmt.Fprintf(c.stdout, "no grant is due for review (policy %s)\n", a.Policy.Source())
				} else {
					tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "PACK\tCAPABILITY\tRESOURCES\tSINCE\tSTATE")
					for _, d := range due {
						state := "due"
						if d.Lapsed {
							state = "lapsed"
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Pack, d.Capability, orAll(d.Resources), d.Since.Format("2006-01-02"), state)
					}
					tw.Flush()
				}
			}
			for _, d := range due {
				key := d.Pack + ":" + string(d.Capability)
				k, decided := decide[key]
				if !decided {
					if !c.interactive || asJSON {
						continue
					}
					if k, err = c.ask(fmt.Sprintf("Keep %s for %s?", d.Capability, d.Pack), true); err != nil {
						return err
					}
				}
				if k {
					if err := a.KeepGrant(ctx, d.Pack, d.Capability); err != nil {
						return err
					}
					fmt.Fprintf(c.stderr, "kept %s for %s\n", d.Capability, d.Pack)
					continue
				}
				if _, err := a.RevokeGrant(ctx, d.Pack, d.Capability); err != nil {
					return err
				}
				fmt.Fprintf(c.stderr, "revoked %s from %s\n", d.Capability, d.Pack)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the grants due as one JSON array")
	cmd.Flags().StringArrayVar(&keep, "keep", nil, "keep PACK:CAP without asking (repeatable)")
	cmd.Flags().StringArrayVar(&revoke, "revoke", nil, "revoke PACK:CAP without asking (repeatable)")
	return cmd
}

// orAll renders granted resources, "(all requested)" when none are named.
func orAll(rs []string) string {
	if len(rs) == 0 {
		return "(all requested)"
	}
	return strings.Join(rs, ", ")
}
