package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
)

func (c *cli) enableCommand() *cobra.Command {
	return c.toggleCommand(true)
}

func (c *cli) disableCommand() *cobra.Command {
	return c.toggleCommand(false)
}

// toggleCommand is packs enable or packs disable: the one switch, two verbs.
func (c *cli) toggleCommand(enable bool) *cobra.Command {
	var asJSON bool
	verb, short, long := "disable", "Turn an installed pack off without removing it",
		`disable turns an installed pack off. It stays installed: its files, its
packs.lock entry and its grants are untouched. While it is disabled, no front
end attaches it, offers it to a model or runs its tools: packs run and packs
recipe run are denied (exit 3), packs chat --attach refuses it, packs mcp and
packs serve leave it out. A chat that had it attached leaves it out when it
is opened again. packs list shows it as "disabled"; packs enable turns it
back on. A pack the enterprise policy mandates cannot be disabled (exit 3).
The state is kept in the state directory's packs.db; packs remove clears it.`
	if enable {
		verb, short, long = "enable", "Turn a disabled pack back on",
			`enable turns a pack that packs disable turned off back on: it can be
attached and run again, with the grants it had.`
	}
	cmd := &cobra.Command{
		Use:   verb + " NAME [--json]",
		Short: short,
		Long: long + `

--json prints one JSON object: {"name": "web-fetch", "enabled": true,
"changed": true}; changed is false when the pack already was in that state.

Exit status: 0 done (also when nothing changed), 1 the pack is not installed
or the state could not be written, 2 usage, 3 refused by the policy.`,
		Args: nargs(1, 1, "one pack NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			name := args[0]
			changed, err := a.SetEnabled(cmd.Context(), name, enable)
			switch {
			case errors.Is(err, capability.ErrDenied):
				return exitWith(exitDenied, fmt.Errorf("%s %s: %w", verb, name, err))
			case err != nil:
				return fmt.Errorf("%s %s: %w: see packs list", verb, name, err)
			}
			if asJSON {
				return writeJSON(c.stdout, toggleResult{Name: name, Enabled: enable, Changed: changed})
			}
			state := map[bool]string{true: "enabled", false: "disabled"}[enable]
			if changed {
				fmt.Fprintf(c.stdout, "%s %s\n", state, name)
			} else {
				fmt.Fprintf(c.stdout, "%s was already %s\n", name, state)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}

// toggleResult is packs enable --json and packs disable --json.
type toggleResult struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Changed bool   `json:"changed"`
}
