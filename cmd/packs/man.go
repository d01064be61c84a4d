//go:build packsman

package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manCommand writes the man pages (make man puts them in docs/man). It is
// hidden: packaging runs it, people read its output with man. It is built
// only with -tags packsman (make man does), so the binary people run carries
// no Markdown-to-roff converter (man_stub.go stands in).
func (c *cli) manCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write the man pages, one per command, into DIR",
		Hidden: true,
		Args:   nargs(1, 1, "one DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // no date in the pages: regenerating changes nothing
			header := &doc.GenManHeader{Title: "PACKS", Section: "1", Source: "packs " + version(), Manual: "packs manual"}
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			fmt.Fprintf(c.stderr, "wrote the man pages to %s\n", args[0])
			return nil
		},
	}
}
