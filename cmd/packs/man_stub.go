//go:build !packsman

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// errNoManWriter: this binary was built without the man page writer.
var errNoManWriter = errors.New("man: this binary is built without the man page writer: run make man, which builds packs with -tags packsman")

// manCommand stands in for the man page writer (man.go), which only a build
// with -tags packsman has: cobra's doc package brings a Markdown-to-roff
// converter that every start of packs would otherwise pay for.
func (c *cli) manCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write the man pages, one per command, into DIR (make man)",
		Hidden: true,
		Args:   nargs(1, 1, "one DIR"),
		RunE:   func(*cobra.Command, []string) error { return errNoManWriter },
	}
}
