package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/author"
)

func (c *cli) buildCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build [DIR]",
		Short: "Build a pack's WebAssembly modules with the toolchain its Makefile names",
		Long: `build builds the pack in DIR (default .): it reads the toolchain the pack's
Makefile names (PACKS_TOOLCHAIN := go, rust or wat, as packs init writes it),
checks that it is installed, and runs make. When a program is missing it
says which and how to install it. make's output goes to stderr.`,
		Args: nargs(0, 1, "at most one pack folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := packDir(args)
			err := author.Build(cmd.Context(), dir, c.stderr)
			var te *author.ToolchainError
			switch {
			case errors.As(err, &te):
				return fmt.Errorf("build: %s needs %s, which is not installed: %s", dir, te.Missing, te.Install)
			case errors.Is(err, author.ErrNoMakefile):
				return fmt.Errorf("build: %s has no Makefile: packs build runs the Makefile packs init writes (see docs/authoring.md)", dir)
			case err != nil:
				return fmt.Errorf("build: %s", trimOrigin(err))
			}
			fmt.Fprintf(c.stderr, "%s: built\n", dir)
			return nil
		},
	}
	return cmd
}

// packDir is the pack folder of an authoring command: its argument, or ".".
func packDir(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "."
}
