package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/author"
	"github.com/packs-run/packs/packs"
)

func (c *cli) lintCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lint [--json] [DIR]",
		Short: "Check a pack against the capability-stack checklist (spec 004)",
		Long: `lint checks the pack in DIR (default .) for what makes a pack usable by a
model: SKILL.md under 500 lines with the recommended sections, a description
that says when to use the pack, brief tool descriptions, every tool named
in the body, a decision table when there are several tools, names aligned
across folder, frontmatter, skill.toml and tools, and requested
capabilities that match what the built modules import. Findings are
printed as validate prints them:

  file:line: warning: rule: message

docs/authoring.md explains each rule. A pack that does not load is
reported by packs validate, not here. Exit status: 0 with no finding, 1
with any.`,
		Args: nargs(0, 1, "at most one pack folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := packDir(args)
			p, err := packs.Load(dir, packs.LoadOptions{})
			var le *packs.LoadError
			switch {
			case errors.As(err, &le):
				return fmt.Errorf("lint: %s does not load: run packs validate %s and fix its errors first", dir, dir)
			case err != nil:
				return fmt.Errorf("lint: %w", err)
			}
			fs := author.Lint(dir, p)
			if asJSON {
				if fs == nil {
					fs = []packs.Finding{}
				}
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(fs); err != nil {
					return err
				}
			} else {
				for _, f := range fs {
					fmt.Fprintln(c.stdout, f.String())
				}
			}
			if len(fs) > 0 {
				return exitWith(exitFailure, fmt.Errorf("lint: %s: %s", dir, plural(len(fs), "finding")))
			}
			fmt.Fprintf(c.stderr, "%s: ok\n", dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as one JSON array")
	return cmd
}
