package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/termtext"
)

// approveBy is who decided, as the audit log records it: the approver is
// "queue:packs-approve".
const approveBy = "packs-approve"

// approveResult is packs approve ID --json.
type approveResult struct {
	ID        string `json:"id"`
	Class     string `json:"class"`
	Client    string `json:"client"`
	Verdict   string `json:"verdict"`
	DecidedBy string `json:"decided_by"`
}

func (c *cli) approveCommand() *cobra.Command {
	var deny, session, asJSON bool
	cmd := &cobra.Command{
		Use:   "approve [ID] [--deny | --session] [--json]",
		Short: "List the calls waiting for your approval, or decide one",
		Long: `approve lists the tool calls waiting for a person: calls from an MCP client
that cannot ask you itself (no elicitation, as in Claude Desktop), served by
packs mcp on the same state directory. Each shows its id, what it calls, the
client, its arguments (redacted as the audit log redacts them), the
capabilities it may use and what it touches, and how long it still waits.

approve ID runs that call once; --session also allows calls of the same
class for the rest of that client's session; --deny refuses it. A call
nobody decides before its timeout (packs mcp --approval-timeout) is denied,
and the model is told how to ask you. The web app (packs serve) shows the
same queue. --json prints the list, or the decision, as one JSON value.`,
		Args: nargs(0, 1, "at most one call id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if deny && session {
				return usageError("approve: --deny and --session exclude each other")
			}
			if len(args) == 0 && (deny || session) {
				return usageError("approve: --deny and --session decide one call: name its id (packs approve lists them)")
			}
			ctx := cmd.Context()
			a, err := c.openExisting(ctx)
			if err != nil {
				return err
			}
			var db *store.DB // nil without a state directory: nothing was ever queued
			if a != nil {
				defer a.Close()
				db = a.DB
			}
			if len(args) == 0 {
				return c.listQueued(ctx, db, asJSON)
			}
			verdict := store.VerdictRunOnce
			switch {
			case deny:
				verdict = store.VerdictDeny
			case session:
				verdict = store.VerdictAllowChat
			}
			return c.decideQueued(ctx, db, args[0], verdict, asJSON)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&deny, "deny", false, "refuse the call")
	f.BoolVar(&session, "session", false, "run the call, and allow calls of its class for the rest of the client's session")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// listQueued prints the calls waiting in db (nil: none ever waited).
func (c *cli) listQueued(ctx context.Context, db *store.DB, asJSON bool) error {
	var calls []store.QueuedCall
	if db != nil {
		var err error
		if calls, err = db.WaitingCalls(ctx, time.Now()); err != nil {
			return err
		}
	}
	if asJSON {
		if calls == nil {
			calls = []store.QueuedCall{}
		}
		return json.NewEncoder(c.stdout).Encode(calls)
	}
	if len(calls) == 0 {
		fmt.Fprintln(c.stderr, "packs: no calls are waiting for approval")
		return nil
	}
	writeQueued(c, calls, time.Now())
	return nil
}

// decideQueued gives the waiting call id the person's verdict.
func (c *cli) decideQueued(ctx context.Context, db *store.DB, id, verdict string, asJSON bool) error {
	q, err := store.QueuedCall{}, fmt.Errorf("%w: %s", store.ErrQueuedNotFound, id)
	if db != nil {
		q, err = db.Queued(ctx, id)
	}
	if err == nil {
		err = db.DecideQueued(ctx, id, verdict, approveBy, time.Now())
	}
	switch {
	case errors.Is(err, store.ErrQueuedNotFound):
		return fmt.Errorf("approve: no call %s is waiting: packs approve lists the waiting calls", id)
	case errors.Is(err, store.ErrQueuedExpired):
		return fmt.Errorf("approve: call %s no longer waits (it timed out, or its client went away): the model may make it again", id)
	case errors.Is(err, store.ErrQueuedDecided):
		return fmt.Errorf("approve: call %s was already decided", id)
	case err != nil:
		return err
	}
	if asJSON {
		return json.NewEncoder(c.stdout).Encode(approveResult{ID: id, Class: q.Class, Client: q.Client, Verdict: verdict, DecidedBy: approveBy})
	}
	what := map[string]string{
		store.VerdictRunOnce:   "approved",
		store.VerdictAllowChat: "approved, with calls of its class for the rest of the session,",
		store.VerdictDeny:      "denied",
	}[verdict]
	fmt.Fprintf(c.stdout, "%s %s (%s from %s)\n", what, termtext.OneLine(id, 80), termtext.OneLine(q.Class, 200), termtext.OneLine(q.Client, 80))
	return nil
}

// writeQueued prints the waiting calls for a person: what each would run
// and touch.
func writeQueued(c *cli, calls []store.QueuedCall, now time.Time) {
	for i, q := range calls {
		if i > 0 {
			fmt.Fprintln(c.stdout)
		}
		fmt.Fprintf(c.stdout, "%s  %s  from %s, waits %s more\n", termtext.OneLine(q.ID, 80), termtext.OneLine(q.Class, 200), termtext.OneLine(q.Client, 80), q.Expires.Sub(now).Round(time.Second))
		fmt.Fprintf(c.stdout, "  arguments:    %s\n", termtext.OneLine(string(q.Arguments), 200))
		if len(q.Capabilities) > 0 {
			fmt.Fprintf(c.stdout, "  capabilities: %s\n", strings.Join(q.Capabilities, ", "))
		}
		if len(q.Touches) > 0 {
			fmt.Fprintf(c.stdout, "  touches:      %s\n", termtext.OneLine(strings.Join(q.Touches, ", "), 200))
		}
	}
	fmt.Fprintf(c.stdout, "\npacks approve ID runs a call (--session: and its class for the session; --deny refuses it)\n")
}
