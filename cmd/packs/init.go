package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/author"
)

func (c *cli) initCommand() *cobra.Command {
	var lang, abi, dir string
	cmd := &cobra.Command{
		Use:   "init NAME --lang go|rust|wat [--abi extism|wasi] [--dir DIR]",
		Short: "Write a new pack that builds and passes its own tests",
		Long: `init writes a new pack folder NAME (or --dir): SKILL.md written as peer
guidance, skill.toml, tools.json, the tool's source in the chosen language,
a Makefile that names its toolchain, and tests/ for packs test. The pack
builds (packs build), passes its tests (packs test), and validates and
lints clean as written. docs/authoring.md walks on from there.

--abi extism (the default) builds an Extism plugin; --abi wasi a WASI
command (JSON on stdin, JSON on stdout).`,
		Args: nargs(1, 1, "the pack's NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = args[0]
			}
			files, err := author.Init(dir, author.InitOptions{Name: args[0], Lang: lang, ABI: abi})
			switch {
			case errors.Is(err, author.ErrUsage):
				return usageError("init: %s", trimOrigin(err))
			case errors.Is(err, author.ErrExists):
				return fmt.Errorf("init: %s: choose another name or --dir, or empty the folder", trimOrigin(err))
			case err != nil:
				return fmt.Errorf("init: %w", err)
			}
			for _, f := range files {
				fmt.Fprintln(c.stdout, filepath.Join(dir, f))
			}
			fmt.Fprintf(c.stderr, "wrote pack %s: next, packs build %s && packs test %s\n", args[0], dir, dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&lang, "lang", "", "the tool's language: go, rust or wat (required)")
	f.StringVar(&abi, "abi", "extism", "how the tool is called: extism (a plugin export) or wasi (a command)")
	f.StringVar(&dir, "dir", "", "the folder to write (default NAME)")
	return cmd
}

// trimOrigin drops the "author: " origin of an error for a command's line.
func trimOrigin(err error) string {
	s := err.Error()
	if len(s) > 8 && s[:8] == "author: " {
		return s[8:]
	}
	return s
}
