package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/audit"
)

func (c *cli) auditCommand() *cobra.Command {
	var asJSON bool
	var pack, since string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit [--json] [--pack P] [--since T] [--limit N] | audit verify",
		Short: "Read the audit log, or verify it has not been tampered with",
		Long: `audit prints the audit log: one row per tool call (who approved it, how it
ended) and one per capability exercise (a file opened, a host contacted, a
variable read, a command run), allowed or denied. --json prints one JSON
object per line (JSONL), with the hashes that chain the rows. --since takes
a time (2025-01-02T15:04:05Z), a date (2025-01-02) or a duration (24h).

audit verify walks the hash chain and says where it breaks: which seq, and
whether a row was edited, deleted or reordered.`,
		Args: nargs(0, 0, "no arguments (or the subcommand verify)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := audit.Filter{Pack: pack, Limit: limit}
			if since != "" {
				t, err := audit.ParseSince(since, time.Now())
				if err != nil {
					return usageError("%v", err)
				}
				f.Since = t
			}
			if limit < 0 {
				return usageError("audit: --limit %d: want a positive number", limit)
			}
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			rows := audit.Entries(ctx, a.DB, f)
			if asJSON {
				return audit.WriteJSONL(c.stdout, rows)
			}
			return audit.WriteText(c.stdout, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per line (JSONL)")
	cmd.Flags().StringVar(&pack, "pack", "", "only rows of this pack")
	cmd.Flags().StringVar(&since, "since", "", "only rows at or after this time, date or duration ago")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the newest N rows")
	var file string
	verify := &cobra.Command{
		Use:   "verify [--file EXPORT.jsonl]",
		Short: "Check the audit log's hash chain",
		Long: `verify walks the hash chain of packs.db's audit log and says where it breaks:
which seq, and whether a row was edited, deleted or reordered. --file checks
a full export written by packs audit --json instead ("-" reads stdin), with
no packs.db needed.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var rep audit.Report
			var err error
			switch file {
			case "":
				a, oerr := c.open(ctx)
				if oerr != nil {
					return oerr
				}
				defer a.Close()
				rep, err = audit.Verify(ctx, a.DB)
			case "-":
				rep, err = audit.VerifyJSONL(c.stdin)
			default:
				f, oerr := os.Open(file)
				if oerr != nil {
					return usageError("audit verify: --file: %v", oerr)
				}
				defer f.Close()
				rep, err = audit.VerifyJSONL(f)
			}
			if err != nil {
				return err
			}
			for _, b := range rep.Breaks {
				fmt.Fprintln(c.stdout, b)
			}
			if !rep.OK() {
				return fmt.Errorf("audit verify: the chain is broken in %s over %d rows: the log was changed outside packs", plural(len(rep.Breaks), "place"), rep.Rows)
			}
			if file != "" {
				fmt.Fprintf(c.stdout, "ok: %d rows, the chain holds\n", rep.Rows)
				return nil
			}
			fmt.Fprintf(c.stdout, "ok: %d rows, the chain holds (head seq %d, hash %s)\n", rep.Rows, rep.HeadSeq, dash(rep.HeadHash))
			return nil
		},
	}
	verify.Flags().StringVar(&file, "file", "", "verify a JSONL export instead of packs.db (- for stdin)")
	cmd.AddCommand(verify)
	return cmd
}
