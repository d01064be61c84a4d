package runtime

import (
	"context"
	"log/slog"
	"os"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
)

// runExec runs an exec tool: its argv, filled from the validated input by
// the template compiled at load (packs.ArgvTemplate.Expand, which refuses a
// value that would become an option), through hostfns.Exec (grant check,
// confinement, no shell, scrubbed environment, workspace as cwd, every
// process killed on timeout). A command stopped at its output cap
// succeeds with the kept output, marked truncated.
func (r *Runtime) runExec(ctx context.Context, inv Invocation, input []byte, lim capability.Limits, log *slog.Logger) (Result, error) {
	argv, err := inv.Tool.Argv().Expand(input)
	if err != nil {
		return Result{}, err
	}
	call := &hostfns.Call{
		Pack: inv.Pack.Name, Tool: inv.Tool.Name, Invocation: inv.ID, Grant: inv.Grant, Approval: inv.Approval, Recorder: inv.Recorder,
		PackRoot: inv.Pack.Dir, Workspace: inv.Workspace, Logger: log,
	}
	out, err := hostfns.Exec(ctx, call, argv, hostfns.ExecOptions{
		Timeout:   lim.Timeout,
		MaxOutput: lim.OutputBytes,
		Environ:   os.Environ(),
	})
	res := Result{Stderr: out.Stderr, ExitCode: out.ExitCode, Duration: out.Duration, Truncated: out.Truncated}
	switch {
	case err != nil:
		return res, err
	case out.Status() != 0:
		return res, &ToolError{Pack: inv.Pack.Name, Tool: inv.Tool.Name, ExitCode: out.ExitCode, Message: lastLine(out.Stderr), Stderr: out.Stderr}
	}
	res.Output = jsonResult(out.Stdout)
	return res, nil
}
