package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (c *cli) removeCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "remove NAME [--json]",
		Short: "Uninstall a pack",
		Long: `remove deletes an installed pack's folder and its packs.lock entry together,
atomically: an interrupted remove leaves the pack either installed or gone.
Its grants go with it.

--json prints one JSON object: {"name": "web-reader", "version": "0.1.0"}.`,
		Args: nargs(1, 1, "one pack NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			e, err := a.Remove(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, removeResult{Name: e.Name, Version: e.Version})
			}
			fmt.Fprintf(c.stdout, "removed %s %s\n", e.Name, e.Version)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}

// removeResult is packs remove --json.
type removeResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}
