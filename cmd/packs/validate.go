package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/packs"
)

func (c *cli) validateCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate [--json] PATH...",
		Short: "Check pack folders and print every finding",
		Long: `validate checks each pack folder: its entry doc and frontmatter, skill.toml
and tools.json. Each finding is printed on stdout as

  file:line: error|warning: rule: message

and a one-line summary per pack goes to stderr ("PATH: ok", "PATH: ok, 2
warnings", "PATH: 1 error, 0 warnings"). With --json, stdout holds one JSON
array of {pack, file, line, severity, rule, message} and nothing else.

Exit status: 0 when no pack has errors, 1 when any has, 2 on usage errors
(no PATH, an unknown flag, a PATH that is not a folder).`,
		Args: nargs(1, -1, "one or more pack folders"),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, p := range args {
				if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
					return usageError("validate: %s is not a folder: give the path of a pack folder", p)
				}
			}
			all := []packs.Finding{}
			failed := 0
			for _, p := range args {
				fs := packs.Validate(p, packs.LoadOptions{})
				all = append(all, fs...)
				errs, warns := count(fs)
				if errs > 0 {
					failed++
				}
				if asJSON {
					continue
				}
				for _, f := range fs {
					fmt.Fprintln(c.stdout, f.String())
				}
				switch {
				case errs > 0:
					fmt.Fprintf(c.stderr, "%s: %s, %s\n", p, plural(errs, "error"), plural(warns, "warning"))
				case warns > 0:
					fmt.Fprintf(c.stderr, "%s: ok, %s\n", p, plural(warns, "warning"))
				default:
					fmt.Fprintf(c.stderr, "%s: ok\n", p)
				}
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(all); err != nil {
					return err
				}
			}
			if failed > 0 {
				return exitWith(exitFailure, fmt.Errorf("validate: %d of %d pack(s) have errors: fix them and run packs validate again", failed, len(args)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as one JSON array")
	return cmd
}

// count returns the number of errors and warnings.
func count(fs []packs.Finding) (errs, warns int) {
	for _, f := range fs {
		if f.Severity == packs.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

// plural renders "1 error", "2 errors".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
