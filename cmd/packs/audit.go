package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
)

func (c *cli) auditCommand() *cobra.Command {
	var asJSON bool
	var pack, since, person string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit [--json] [--pack P] [--person SUB] [--since T] [--limit N] | audit verify | audit export",
		Short: "Read the audit log, verify it has not been tampered with, or export it",
		Long: `audit prints the audit log: one row per tool call (who approved it, how it
ended) and one per capability exercise (a file opened, a host contacted, a
variable read, a command run), allowed or denied. --json prints one JSON
object per line (JSONL), with the hashes and MACs that chain the rows.
--since takes a time (2025-01-02T15:04:05Z), a date (2025-01-02) or a
duration (24h). --person takes the subject of a person signed in with OIDC
(packs serve --oidc-issuer): each row names who made the call and with
what (web, cli, mcp:NAME).

audit verify walks the chain and says where it breaks: which seq, and
whether a row was edited, deleted, reordered or forged. audit export writes
the whole log as JSONL for a collector and records a checkpoint.
docs/audit.md says what verify proves, and against whom.`,
		Args: nargs(0, 0, "no arguments (or the subcommand verify or export)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := audit.Filter{Pack: pack, Person: person, Limit: limit}
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
	cmd.Flags().StringVar(&person, "person", "", "only rows of this signed-in person (their OIDC subject)")
	cmd.Flags().StringVar(&since, "since", "", "only rows at or after this time, date or duration ago")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the newest N rows")
	cmd.AddCommand(c.auditVerifyCommand(), c.auditExportCommand())
	return cmd
}

// brokenAdvice is what to do when verify finds the log changed.
const brokenAdvice = "the log was changed outside packs: keep this packs.db as evidence, compare it with your last export " +
	"(packs audit verify --file EXPORT) or your collector's copy, and find who could write the state directory"

func (c *cli) auditVerifyCommand() *cobra.Command {
	var file, keyFile string
	var asJSON bool
	verify := &cobra.Command{
		Use:   "verify [--json] [--file EXPORT.jsonl [--key FILE]]",
		Short: "Check the audit log's chain, MACs and checkpoint",
		Long: `verify walks the audit log in packs.db and checks each row's hash and link,
its MAC under the audit key (audit.key in the state directory), and the
checkpoint beside the key (written at every commit and by audit export), so
rows deleted or rewritten with the chain recomputed, and rows cut off the
end, are found. It says where the log breaks: which seq, and whether a row
was edited, deleted, reordered or forged. Exit 0 when it holds, 1 when it
does not. --json prints one JSON object.

--file checks an export written by packs audit export or packs audit --json
("-" reads stdin) without packs.db; its MACs are checked with --key, or with
the key of --home or $PACKS_HOME when one is given. docs/audit.md says what
verify proves, and against whom.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var rep audit.Report
			var err error
			if file == "" {
				if keyFile != "" {
					return usageError("audit verify: --key goes with --file; packs.db is checked with the key beside it")
				}
				a, oerr := c.open(ctx)
				if oerr != nil {
					return oerr
				}
				defer a.Close()
				rep, err = audit.VerifyWithKey(ctx, a.DB, a.AuditKeyDir())
			} else {
				var in io.Reader = c.stdin
				if file != "-" {
					f, oerr := os.Open(file)
					if oerr != nil {
						return usageError("audit verify: --file: %v", oerr)
					}
					defer f.Close()
					in = f
				}
				key, kerr := c.exportKey(keyFile)
				if kerr != nil {
					return kerr
				}
				if key == "" {
					rep, err = audit.VerifyJSONL(in)
				} else {
					rep, err = audit.VerifyExport(in, key)
				}
			}
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeVerifyJSON(c.stdout, rep); err != nil {
					return err
				}
			} else {
				writeVerifyText(c.stdout, c.stderr, rep, file != "")
			}
			if !rep.OK() {
				b := rep.Breaks[0]
				return fmt.Errorf("audit verify: the chain is broken in %s over %d rows, first at seq %d (%s): %s",
					plural(len(rep.Breaks), "place"), rep.Rows, b.Seq, b.Kind, brokenAdvice)
			}
			return nil
		},
	}
	verify.Flags().StringVar(&file, "file", "", "verify a JSONL export instead of packs.db (- for stdin)")
	verify.Flags().StringVar(&keyFile, "key", "", "the audit.key to check an export's MACs with")
	verify.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return verify
}

// exportKey is the key file verify --file checks MACs with: --key, else the
// state directory's when --home or $PACKS_HOME names one, else none.
func (c *cli) exportKey(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if c.home == "" && c.getenv("PACKS_HOME") == "" {
		return "", nil
	}
	home, err := dist.ResolveHome(c.home, c.getenv, os.UserHomeDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, audit.KeyFile), nil
}

func writeVerifyText(stdout, stderr io.Writer, rep audit.Report, export bool) {
	for _, b := range rep.Breaks {
		fmt.Fprintln(stdout, b)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "packs: warning: %s\n", w)
	}
	if !rep.OK() {
		return
	}
	if export {
		fmt.Fprintf(stdout, "ok: %d rows, the chain holds\n", rep.Rows)
	} else {
		fmt.Fprintf(stdout, "ok: %d rows, the chain holds (head seq %d, hash %s)\n", rep.Rows, rep.HeadSeq, dash(rep.HeadHash))
	}
	if rep.KeyID != "" {
		fmt.Fprintf(stdout, "keyed: MACs checked under key %s from seq %d", rep.KeyID, rep.FirstKeyed)
		if cp := rep.Checkpoint; cp != nil {
			fmt.Fprintf(stdout, "; checkpoint at seq %d (%s, by %s)", cp.Seq, cp.At.Format(time.RFC3339), cp.By)
		}
		fmt.Fprintln(stdout)
	}
}

// verifyReport is the shape of packs audit verify --json.
type verifyReport struct {
	OK            bool            `json:"ok"`
	Rows          int64           `json:"rows"`
	HeadSeq       int64           `json:"head_seq"`
	HeadHash      string          `json:"head_hash,omitempty"`
	Keyed         bool            `json:"keyed"`
	KeyID         string          `json:"key_id,omitempty"`
	FirstKeyedSeq int64           `json:"first_keyed_seq,omitempty"`
	UnkeyedRows   int64           `json:"unkeyed_rows"`
	Checkpoint    *verifyCheckpnt `json:"checkpoint"`
	Breaks        []verifyBreak   `json:"breaks"`
	Warnings      []string        `json:"warnings"`
	Advice        string          `json:"advice,omitempty"`
}

type verifyCheckpnt struct {
	Seq int64     `json:"seq"`
	At  time.Time `json:"at"`
	By  string    `json:"by"`
}

type verifyBreak struct {
	Seq    int64  `json:"seq"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

func writeVerifyJSON(w io.Writer, rep audit.Report) error {
	out := verifyReport{OK: rep.OK(), Rows: rep.Rows, HeadSeq: rep.HeadSeq, HeadHash: rep.HeadHash,
		Keyed: rep.KeyID != "", KeyID: rep.KeyID, FirstKeyedSeq: rep.FirstKeyed, UnkeyedRows: rep.Unkeyed,
		Breaks: []verifyBreak{}, Warnings: append([]string{}, rep.Warnings...)}
	if cp := rep.Checkpoint; cp != nil {
		out.Checkpoint = &verifyCheckpnt{Seq: cp.Seq, At: cp.At, By: cp.By}
	}
	for _, b := range rep.Breaks {
		out.Breaks = append(out.Breaks, verifyBreak{Seq: b.Seq, Kind: string(b.Kind), Detail: b.Detail})
	}
	if !rep.OK() {
		out.Advice = brokenAdvice
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (c *cli) auditExportCommand() *cobra.Command {
	var output, syslog string
	var follow bool
	var after int64
	export := &cobra.Command{
		Use:   "export [--output FILE] | export --follow [--after SEQ] [--syslog udp://HOST:PORT|tcp://HOST:PORT]",
		Short: "Write the whole audit log as JSONL for a collector, and record a checkpoint; or follow it",
		Long: `export writes every audit row as one JSON object per line (JSONL) to stdout,
or to FILE (mode 0600, replaced whole) with --output. Each line carries its
seq, the hash of the row before (prev_hash), its own hash and its MAC, so a
collector can check that each export continues the last one it kept.

export checks the chain as it writes. When it holds, export records a
checkpoint (seq, hash and MAC of the last row) beside the audit key, which
packs audit verify then checks packs.db against. When it does not, the rows
are written all the same, no checkpoint is recorded, and export exits 1.

--follow writes the rows after --after SEQ (all of them without it), then
each row as it is written, until interrupted. Each row comes once: a
collector that keeps the seq of the last line it stored and restarts with
--after that seq gets neither a gap nor a repeat. The chain is checked as
rows go; at a row that breaks it, follow stops and exits 1. --syslog sends
the rows to a syslog receiver instead of stdout, as RFC 5424 messages
(facility "log audit") whose MSG is the JSONL line; over tcp:// they are
framed by octet counting (RFC 6587). docs/audit.md says more.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case follow && output != "":
				return usageError("audit export: --follow writes to stdout or --syslog, not --output")
			case !follow && (after != 0 || syslog != ""):
				return usageError("audit export: --after and --syslog go with --follow")
			case after < 0:
				return usageError("audit export: --after %d: want the seq of a row", after)
			}
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			if follow {
				return c.follow(ctx, a.DB, after, syslog)
			}
			if output == "" {
				res, err := audit.Export(ctx, a.DB, c.stdout, a.AuditKeyDir())
				return c.exported(res, err, "stdout")
			}
			tmp, err := os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".*")
			if err != nil {
				return fmt.Errorf("audit export: %w", err)
			}
			defer os.Remove(tmp.Name())
			res, err := audit.Export(ctx, a.DB, tmp, a.AuditKeyDir())
			if err != nil && !errors.Is(err, audit.ErrBroken) {
				tmp.Close()
				return err
			}
			werr := errors.Join(tmp.Chmod(0o600), tmp.Sync(), tmp.Close())
			if werr == nil {
				werr = os.Rename(tmp.Name(), output)
			}
			if werr != nil {
				return fmt.Errorf("audit export: %s: %w", output, werr)
			}
			return c.exported(res, err, output)
		},
	}
	export.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	export.Flags().BoolVar(&follow, "follow", false, "keep writing rows as they are written, until interrupted")
	export.Flags().Int64Var(&after, "after", 0, "with --follow: start after the row with this seq")
	export.Flags().StringVar(&syslog, "syslog", "", "with --follow: send rows to this syslog receiver (udp://HOST:PORT or tcp://HOST:PORT)")
	return export
}

// follow is audit export --follow: rows to stdout as JSONL, or to a syslog
// receiver. Stopping (an interrupt) is not an error; stderr says the last
// seq handed on, for --after.
func (c *cli) follow(ctx context.Context, db *store.DB, after int64, syslog string) error {
	enc := json.NewEncoder(c.stdout)
	emit := func(e audit.Entry) error { return enc.Encode(e) }
	to := "stdout"
	if syslog != "" {
		s, err := audit.DialSyslog(syslog, 10*time.Second)
		if errors.Is(err, audit.ErrSyslogURL) {
			return usageError("audit export: --syslog: %v", err)
		}
		if err != nil {
			return err
		}
		defer s.Close()
		emit, to = s.Send, syslog
	}
	last := after
	err := audit.Follow(ctx, db, after, 0, func(e audit.Entry) error {
		if err := emit(e); err != nil {
			return err
		}
		last = e.Seq
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit export: followed to seq %d, then: %w (resume with --after %d)", last, err, last)
	}
	fmt.Fprintf(c.stderr, "followed to seq %d on %s; resume with --after %d\n", last, to, last)
	return nil
}

// exported reports an export on stderr (stdout may be the export itself).
func (c *cli) exported(res audit.ExportResult, err error, to string) error {
	for _, w := range res.Report.Warnings {
		fmt.Fprintf(c.stderr, "packs: warning: %s\n", w)
	}
	if errors.Is(err, audit.ErrBroken) {
		for _, b := range res.Report.Breaks {
			fmt.Fprintln(c.stderr, b)
		}
		return fmt.Errorf("audit export: %d rows written to %s, but %v: %s", res.Rows, to, err, brokenAdvice)
	}
	if err != nil {
		return err
	}
	if res.Checkpoint != nil {
		fmt.Fprintf(c.stderr, "exported %s to %s; checkpoint at seq %d\n", plural(int(res.Rows), "row"), to, res.Checkpoint.Seq)
	}
	return nil
}
