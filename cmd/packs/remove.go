package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (c *cli) removeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Uninstall a pack",
		Long: `remove deletes an installed pack's folder and its packs.lock entry together,
atomically: an interrupted remove leaves the pack either installed or gone.`,
		Args: nargs(1, 1, "one pack NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			a.Removed = append(a.Removed, forgetGrantsHook(a))
			e, err := a.Remove(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "removed %s %s\n", e.Name, e.Version)
			return nil
		},
	}
}
