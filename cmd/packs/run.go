package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Exit codes of packs run beyond exitOK and exitFailure (DESIGN.md, "Fixed
// CLI contract").
const (
	exitDenied  = 3 // the gate, a capability or the policy said no
	exitInvalid = 4 // the arguments do not fit the tool's input schema
	exitLimit   = 5 // the call hit its time, memory or output limit
)

// maxInputRead bounds what --input - reads from stdin; the grant's
// input_bytes limit is checked by the runtime.
const maxInputRead = 64 << 20

func (c *cli) runCommand() *cobra.Command {
	var (
		input     string
		workspace string
		yes       bool
	)
	cmd := &cobra.Command{
		Use:   "run PACK TOOL [--input JSON | --input -] [--workspace DIR] [--yes]",
		Short: "Run one tool of a pack through the approval gate",
		Long: `run calls one tool of an installed pack (or of the pack folder at PACK, when
PACK is a path) and prints the tool's JSON result on stdout.

The call goes through the gate like every call: --yes is you approving this
one call (the enterprise policy may approve or veto it first); without --yes
and without a policy that approves it, the call is denied. --yes never
grants a capability: the tool holds only what was granted at packs add. An
installed pack whose files no longer match packs.lock does not run.

--input is the tool's arguments as JSON ("-" reads them from stdin; the
default is {}). The tool sees the workspace (default <home>/workspaces/cli)
at /workspace.

Exit status: 0 ok, 1 the tool failed, 2 usage, 3 denied by the gate, a
capability or the policy, 4 invalid input, 5 time, memory or output limit.`,
		Args: nargs(2, 2, "PACK and TOOL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := c.readInput(input)
			if err != nil {
				return err
			}
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			out, err := c.runTool(cmd.Context(), a, runRequest{pack: args[0], tool: args[1], input: in, workspace: workspace, yes: yes})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%s\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&input, "input", "", `the tool's arguments as JSON, or "-" to read them from stdin (default {})`)
	f.StringVar(&workspace, "workspace", "", "the folder the tool sees at /workspace (default <home>/workspaces/cli)")
	f.BoolVarP(&yes, "yes", "y", false, "approve this one call")
	return cmd
}

// readInput returns the --input value, reading stdin for "-".
func (c *cli) readInput(flag string) (json.RawMessage, error) {
	switch flag {
	case "":
		return json.RawMessage("{}"), nil
	case "-":
		b, err := io.ReadAll(io.LimitReader(c.stdin, maxInputRead+1))
		if err != nil {
			return nil, fmt.Errorf("run: reading --input from stdin: %w", err)
		}
		if len(b) > maxInputRead {
			return nil, exitWith(exitInvalid, fmt.Errorf("run: --input on stdin is over %d MiB: pass less", maxInputRead>>20))
		}
		return b, nil
	}
	return json.RawMessage(flag), nil
}

// runRequest is one packs run.
type runRequest struct {
	pack, tool string
	input      json.RawMessage
	workspace  string
	yes        bool
}

// runTool runs one call end to end: load and verify the pack, resolve its
// grant, validate the input, ask the gate, invoke, audit. It returns the
// tool's result or an error carrying the exit code.
func (c *cli) runTool(ctx context.Context, a *app.App, req runRequest) (json.RawMessage, error) {
	p, ref, entry, err := loadForRun(a, req.pack)
	if err != nil {
		return nil, err
	}
	t, ok := p.Tool(req.tool)
	if !ok {
		var names []string
		for _, t := range p.Tools {
			names = append(names, t.Name)
		}
		return nil, usageError("run: pack %s has no tool %q (it has: %s): see packs info %s", p.Name, req.tool, orNone(strings.Join(names, ", ")), p.Name)
	}
	ws, err := runWorkspace(a, req.workspace)
	if err != nil {
		return nil, err
	}
	pol, err := capability.FindPolicy(a.PolicyPath, c.getenv)
	if err != nil {
		return nil, err
	}
	log, err := audit.Open(ctx, a.DB, audit.Options{Logger: a.Logger})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	id, err := invocationID()
	if err != nil {
		return nil, err
	}
	rec := audit.Invocation{ID: id, Pack: p.Name, Tool: t.Name, Arguments: req.input, Started: time.Now()}
	// finish audits the call's outcome and turns err into the exit code.
	finish := func(res runtime.Result, err error) (json.RawMessage, error) {
		rec.Finished, rec.ExitCode, rec.Output = time.Now(), res.ExitCode, res.Output
		code := exitCodeOf(err)
		rec.Status = auditStatus(code, err)
		if err != nil {
			rec.Reason = err.Error()
		}
		if _, aerr := log.RecordInvocation(context.WithoutCancel(ctx), rec); aerr != nil {
			return nil, fmt.Errorf("run: the call could not be audited: %w", aerr)
		}
		if err != nil {
			return nil, exitWith(code, fmt.Errorf("run: %s__%s: %w", p.Name, t.Name, err))
		}
		return res.Output, nil
	}

	grant, err := cliGrant(ctx, a, ref, p, entry, pol, c.getenv, ws, false)
	if err != nil {
		rec.Denied(err)
		return finish(runtime.Result{}, err)
	}
	if err := t.ValidateInput(req.input); err != nil {
		return finish(runtime.Result{}, err)
	}
	approvers := []capability.Approver{pol.Approver()}
	if req.yes {
		approvers = append(approvers, cliApprover{})
	} else if c.interactive {
		approvers = append(approvers, approve.NewTerminal(c.stdin, c.stderr))
	}
	approval, err := capability.NewGate(approvers...).Decide(ctx, capability.Pending{
		Invocation: id, Pack: p.Name, Tool: t.Name, Arguments: req.input, Capabilities: grant.Names(),
	})
	if err != nil {
		if !req.yes {
			err = fmt.Errorf("%w: pass --yes to approve this call", err)
		}
		rec.Denied(err)
		return finish(runtime.Result{}, err)
	}
	rec.Approved(approval)
	// The approved call spends the person's "once" grants.
	if grant, err = cliGrant(ctx, a, ref, p, entry, pol, c.getenv, ws, true); err != nil {
		return finish(runtime.Result{}, err)
	}

	rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir(), Logger: a.Logger, PoolSize: -1})
	if err != nil {
		return nil, err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	res, err := rt.Invoke(ctx, runtime.Invocation{
		Pack: p, Tool: t, Input: req.input, Grant: grant, Approval: approval,
		ID: id, Workspace: ws, Recorder: log,
	})
	return finish(res, err)
}

// precompileHook is an App.Installed hook: it compiles the installed pack's
// modules into the state directory's cache, so that the first packs run of
// a tool loads machine code instead of compiling it. A module that does not
// compile is reported, not fatal: the pack is installed, and its tools fail
// with the same message when run.
func precompileHook(a *app.App) func(context.Context, packs.LockEntry) error {
	return func(ctx context.Context, e packs.LockEntry) error {
		dir, err := a.Home.PackDir(e.Name)
		if err != nil {
			return err
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			return err
		}
		rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir(), Logger: a.Logger, PoolSize: -1})
		if err != nil {
			return err
		}
		defer rt.Close(context.WithoutCancel(ctx))
		if err := rt.Precompile(ctx, p); err != nil {
			a.Logger.Warn("packs add: installed, but a module does not compile: its tools will fail", "pack", e.Name, "err", err)
		}
		return nil
	}
}

// loadForRun loads the pack named by arg: a folder when arg is a path, else
// the installed pack of that name, verified against packs.lock.
func loadForRun(a *app.App, arg string) (*packs.Pack, capability.PackRef, *packs.LockEntry, error) {
	if strings.ContainsRune(arg, filepath.Separator) || arg == "." || arg == ".." {
		dir, err := filepath.Abs(arg)
		if err != nil {
			return nil, capability.PackRef{}, nil, err
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, capability.PackRef{}, nil, usageError("run: %s is not a pack folder: give an installed pack's name or a folder", arg)
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			return nil, capability.PackRef{}, nil, fmt.Errorf("run: %w: packs validate %s shows every finding", err, arg)
		}
		return p, capability.PackRef{Name: p.Name}, nil, nil
	}
	entry, err := a.Home.Entry(arg)
	if errors.Is(err, packs.ErrNotInstalled) {
		return nil, capability.PackRef{}, nil, usageError("run: %v", err)
	}
	if err != nil {
		return nil, capability.PackRef{}, nil, err
	}
	if err := a.Home.Verify(arg); err != nil {
		return nil, capability.PackRef{}, nil, fmt.Errorf("run: refusing to run: %w", err)
	}
	dir, err := a.Home.PackDir(arg)
	if err != nil {
		return nil, capability.PackRef{}, nil, err
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return nil, capability.PackRef{}, nil, fmt.Errorf("run: installed pack %s does not load: %w: reinstall it with packs add", arg, err)
	}
	return p, capability.PackRef{Name: p.Name, Digest: entry.Integrity}, &entry, nil
}

// cliGrant is the pack's effective grant for a packs run: what it asks
// for, cut down by the policy and by what the person granted. The person's
// grants come from packs.db (see personGrants); a pack run from a folder has
// none. This is the one place that picks the grant source. take spends
// "once" grants, for the approved call.
func cliGrant(ctx context.Context, a *app.App, ref capability.PackRef, p *packs.Pack, entry *packs.LockEntry, pol *capability.Policy, getenv func(string) string, workspace string, take bool) (capability.Grant, error) {
	user, err := personGrants(ctx, a, p.Name, "", entry, take)
	if err != nil {
		return capability.Grant{}, err
	}
	home, _ := os.UserHomeDir()
	return capability.Resolve(ref, p.Request(), user, pol, capability.Env{Home: home, Getenv: getenv, Workspace: workspace})
}

// runWorkspace returns the workspace folder, creating the default one.
func runWorkspace(a *app.App, flag string) (string, error) {
	if flag == "" {
		ws := filepath.Join(a.Home.WorkspacesDir(), "cli")
		if err := os.MkdirAll(ws, 0o700); err != nil {
			return "", fmt.Errorf("run: workspace %s: %w", ws, err)
		}
		return ws, nil
	}
	ws, err := filepath.Abs(flag)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", usageError("run: --workspace %s is not a folder: create it first", flag)
	}
	return ws, nil
}

// invocationID returns a fresh id for one call.
func invocationID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "run-" + hex.EncodeToString(b[:]), nil
}

// exitCodeOf maps a call's error to the exit status of packs run.
func exitCodeOf(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, capability.ErrDenied):
		return exitDenied
	case errors.Is(err, packs.ErrInvalidInput), errors.Is(err, runtime.ErrInputLimit):
		return exitInvalid
	case errors.Is(err, runtime.ErrTimeout), errors.Is(err, runtime.ErrMemoryLimit), errors.Is(err, runtime.ErrOutputLimit):
		return exitLimit
	}
	return exitFailure
}

// auditStatus is how the audit log names an outcome.
func auditStatus(code int, err error) audit.Status {
	switch code {
	case exitOK:
		return audit.StatusOK
	case exitDenied:
		return audit.StatusDenied
	case exitInvalid:
		return audit.StatusInvalidInput
	case exitLimit:
		return audit.StatusLimit
	}
	if errors.Is(err, runtime.ErrToolFailed) || errors.Is(err, runtime.ErrTrap) {
		return audit.StatusToolError
	}
	return audit.StatusError
}

// cliApprover is the person at the command line saying yes (--yes) to the
// one call being run.
type cliApprover struct{}

func (cliApprover) Name() string { return "cli --yes" }

func (cliApprover) Approve(ctx context.Context, _ capability.Pending) (capability.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return capability.Deny, err
	}
	return capability.RunOnce, nil
}
