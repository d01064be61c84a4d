package terminal

import (
	"context"
	"fmt"
	"io"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/termtext"
)

// OnceOptions configure Once.
type OnceOptions struct {
	Out, Err io.Writer
	Provider llm.Provider
	NoTools  bool
	Attach   []string
	// Yes approves every call of this turn that the policy leaves to a
	// person. Without it nobody is there to approve, and those calls are
	// denied.
	Yes bool
}

// Yes is the approver behind --yes: the person approved this turn's calls
// when they ran the command.
type Yes struct{}

func (Yes) Name() string { return "--yes" }

func (Yes) Approve(context.Context, capability.Pending) (capability.Verdict, error) {
	return capability.RunOnce, nil
}

// Once runs one turn without a terminal. On Out it prints a line per tool
// call with its decision and outcome, a line per artifact, then the reply;
// notes and the chat id go to Err.
func Once(ctx context.Context, s *chat.Session, text string, opt OnceOptions) error {
	var approver capability.Approver
	if opt.Yes {
		approver = Yes{}
	}
	obs := &onceObserver{out: opt.Out, err: opt.Err}
	reply, err := s.Send(ctx, opt.Provider, text, chat.TurnOptions{Approver: approver, Observer: obs, Attach: opt.Attach, NoTools: opt.NoTools})
	fmt.Fprintf(opt.Err, "chat %s (resume with --chat %s)\n", s.ID(), s.ID())
	if err != nil {
		return err
	}
	if reply.Text != "" {
		fmt.Fprintln(opt.Out, reply.Text)
	}
	return nil
}

// onceObserver prints each call as it ends.
type onceObserver struct {
	out, err io.Writer
}

func (o *onceObserver) Text(string)                                {}
func (o *onceObserver) ToolStart(llm.ToolCall, context.CancelFunc) {}

func (o *onceObserver) ToolDone(r chat.ToolResult) {
	fmt.Fprintf(o.out, "tool %s %s: %s\n", r.Name, termtext.Compact(r.Arguments, 300), decisionLine(r))
	for _, a := range r.Artifacts {
		fmt.Fprintf(o.out, "artifact %s %s %d bytes\n", a.Path, a.MIME, a.Size)
	}
}

func (o *onceObserver) Notice(msg string) { fmt.Fprintf(o.err, "note: %s\n", msg) }

// decisionLine is "approved by X: ok", "approved by X: timeout: ..." or
// "denied: ...".
func decisionLine(r chat.ToolResult) string {
	d := r.Decision
	switch {
	case !d.Approved && r.ErrorKind == chat.ErrKindDenied:
		return "denied: " + termtext.OneLine(r.ErrorMessage(), 300)
	case !d.Approved:
		return "refused: " + r.ErrorKind + ": " + termtext.OneLine(r.ErrorMessage(), 300)
	case r.IsError:
		return "approved by " + d.Approver + ": " + r.ErrorKind + ": " + termtext.OneLine(r.ErrorMessage(), 300)
	}
	return "approved by " + d.Approver + ": ok"
}
