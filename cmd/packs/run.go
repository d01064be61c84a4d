package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Exit codes of packs run beyond exitOK and exitFailure (DESIGN.md, "Fixed
// CLI contract"): runtime's table of endings owns them.
const (
	exitDenied  = runtime.ExitDenied  // the gate, a capability or the policy said no
	exitInvalid = runtime.ExitInvalid // the arguments do not fit the tool's input schema
	exitLimit   = runtime.ExitLimit   // the call hit its time, memory or output limit
)

// maxInputRead bounds what --input - reads from stdin; the grant's
// input_bytes limit is checked by the runtime.
const maxInputRead = 64 << 20

func (c *cli) runCommand() *cobra.Command {
	var (
		input     string
		workspace string
		yes       bool
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "run PACK TOOL [--input JSON | --input - | --input @FILE] [--workspace DIR] [--yes] [--json]",
		Short: "Run one tool of a pack through the approval gate",
		Long: `run calls one tool of an installed pack (or of the pack folder at PACK, when
PACK is a path) and prints the tool's JSON result on stdout.

The call goes through the gate like every call: --yes is you approving this
one call (the enterprise policy may approve or veto it first); without --yes
and without a policy that approves it, the call is denied. --yes never
grants a capability: the tool holds only what was granted at packs add. An
installed pack whose files no longer match packs.lock does not run. A name
that is not installed may be a pack used in place (see packs list): it runs
from its folder with the grants made to its files as they are now (packs
grant), and says what changed when they no longer hold.

--input is the tool's arguments as JSON ("-" reads them from stdin, "@FILE"
from that file; the default is {}). The tool sees the workspace (default <home>/workspaces/cli)
at /workspace.

A tool that returns content blocks ("output": "content" in its tools.json:
text, images, audio, files) is printed for people: each text block as it is,
and one line for each other block saying what it is ([image image/png,
12.0 KiB]). --json prints its blocks instead, as {"content": [...]} with the
data in base64 (docs/abi.md §1.4). Any other tool's result is printed as
JSON, with or without --json.

Exit status: 0 ok, 1 the tool failed, 2 usage, 3 denied by the gate, a
capability or the policy, 4 invalid input, 5 time, memory or output limit.`,
		Args: nargs(2, 2, "PACK and TOOL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := c.readInput(input)
			if err != nil {
				return err
			}
			// A built-in pack is there on first use.
			a, err := c.openWith(cmd.Context(), builtin.Is(args[0]))
			if err != nil {
				return err
			}
			defer a.Close()
			o, err := c.runTool(cmd.Context(), a, runRequest{pack: args[0], tool: args[1], input: in, workspace: workspace, yes: yes})
			if err != nil {
				return &packError{pack: args[0], err: err}
			}
			if o.Content == nil || asJSON {
				fmt.Fprintf(c.stdout, "%s\n", o.Output)
				return nil
			}
			for _, b := range o.Content {
				fmt.Fprintln(c.stdout, strings.TrimSuffix(b.Describe(), "\n"))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&input, "input", "", `the tool's arguments as JSON, "-" to read them from stdin, or @FILE (default {})`)
	f.StringVar(&workspace, "workspace", "", "the folder the tool sees at /workspace (default <home>/workspaces/cli)")
	f.BoolVarP(&yes, "yes", "y", false, "approve this one call")
	f.BoolVar(&asJSON, "json", false, "print a content tool's blocks as JSON (see above)")
	return cmd
}

// readInput returns the --input value: JSON as it is, "-" reads stdin,
// "@FILE" reads that file (a JSON text starts with neither).
func (c *cli) readInput(flag string) (json.RawMessage, error) {
	var (
		r    io.Reader
		from string
	)
	switch {
	case flag == "":
		return json.RawMessage("{}"), nil
	case flag == "-":
		r, from = c.stdin, "stdin"
	case strings.HasPrefix(flag, "@"):
		f, err := os.Open(flag[1:])
		if err != nil {
			return nil, exitWith(exitInvalid, fmt.Errorf("run: --input %s: %w: give the path of a JSON file after @", flag, err))
		}
		defer f.Close()
		r, from = f, flag[1:]
	default:
		return json.RawMessage(flag), nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInputRead+1))
	if err != nil {
		return nil, fmt.Errorf("run: reading --input from %s: %w", from, err)
	}
	if len(b) > maxInputRead {
		return nil, exitWith(exitInvalid, fmt.Errorf("run: --input from %s is over %d MiB: pass less", from, maxInputRead>>20))
	}
	return b, nil
}

// runRequest is one packs run.
type runRequest struct {
	pack, tool string
	input      json.RawMessage
	workspace  string
	yes        bool
}

// runTool loads the pack and runs one call through the pipeline (validate,
// gate, grant, integrity, invoke, audit). It returns the tool's result or
// an error carrying the exit code.
func (c *cli) runTool(ctx context.Context, a *app.App, req runRequest) (runtime.Outcome, error) {
	// One check of the pack's files serves the whole command: the
	// pipeline's check at the call finds them unchanged (one lstat each)
	// and the module is compiled from the bytes hashed here.
	content := &packs.ContentCache{KeepModules: true}
	p, ref, err := loadForRun(ctx, a, req.pack, content)
	if err != nil {
		return runtime.Outcome{}, err
	}
	t, ok := p.Tool(req.tool)
	if !ok {
		var names []string
		for _, t := range p.Tools {
			names = append(names, t.Name)
		}
		return runtime.Outcome{}, usageError("run: pack %s has no tool %q (it has: %s): see packs info %s", p.Name, req.tool, orNone(strings.Join(names, ", ")), p.Name)
	}
	ws, err := runWorkspace(a, req.workspace)
	if err != nil {
		return runtime.Outcome{}, err
	}
	pl, release, err := a.OpenPipeline(ctx, app.PipelineOptions{OneShot: true, Content: content, Version: version()})
	if err != nil {
		return runtime.Outcome{}, err
	}
	defer release()
	var approvers []capability.Approver
	if req.yes {
		approvers = append(approvers, cliApprover{})
	} else if c.interactive {
		approvers = append(approvers, approve.NewTerminal(c.stdin, c.stderr))
	}
	o, err := pl.Call(ctx, runtime.Request{
		Pack: p, Ref: ref, Tool: t.Name, Arguments: req.input, Workspace: ws, Approvers: approvers,
	})
	if err != nil {
		return runtime.Outcome{}, fmt.Errorf("run: the call could not be audited: %w", err)
	}
	if o.Err != nil {
		err := o.Err
		switch {
		case errors.Is(err, capability.ErrNoApprover) && !c.interactive:
			err = fmt.Errorf("%w: nobody can approve it here (no terminal, no --yes): pass --yes to approve this call", err)
		case errors.Is(err, capability.ErrNoApprover):
			err = fmt.Errorf("%w: pass --yes to approve this call", err)
		case errors.Is(err, packs.ErrModified):
			err = fmt.Errorf("refusing to run: %w", err)
		}
		if ref.InPlace != "" {
			// The grants of a pack used in place hold for its folder's
			// content when granted: say what changed since.
			if d, ok, derr := a.InPlaceChange(ctx, ref.InPlace, ref.Digest); derr == nil && ok {
				err = fmt.Errorf("%w (%s changed since you granted it: %s; look, then grant it again with packs grant %s CAP)", err, ref.InPlace, d, p.Name)
			}
		}
		return runtime.Outcome{}, exitWith(runtime.EndingOf(o.Err).ExitCode, fmt.Errorf("run: %s__%s: %w", p.Name, t.Name, err))
	}
	return o, nil
}

// precompileHook is an App.Installed hook: it compiles the installed pack's
// modules into the state directory's cache, so that the first packs run of
// a tool loads machine code instead of compiling it. A module that does not
// compile is reported, not fatal: the pack is installed, and its tools fail
// with the same message when run.
func precompileHook(a *app.App) func(context.Context, dist.LockEntry) error {
	return func(ctx context.Context, e dist.LockEntry) error {
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
// the installed pack of that name, verified against packs.lock through
// content, else the pack of that name used in place (found in a skills
// folder), with the reference of its folder's content now.
func loadForRun(ctx context.Context, a *app.App, arg string, content *packs.ContentCache) (*packs.Pack, capability.PackRef, error) {
	if strings.ContainsRune(arg, filepath.Separator) || arg == "." || arg == ".." {
		dir, err := filepath.Abs(arg)
		if err != nil {
			return nil, capability.PackRef{}, err
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, capability.PackRef{}, usageError("run: %s is not a pack folder: give an installed pack's name or a folder", arg)
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			return nil, capability.PackRef{}, fmt.Errorf("run: %w: packs validate %s shows every finding", err, arg)
		}
		return p, capability.PackRef{Name: p.Name}, nil
	}
	entry, _, err := a.Home.VerifyContent(content, arg)
	switch {
	case errors.Is(err, dist.ErrNotInstalled):
		p, ref, ierr := a.InPlace(ctx, mustGetwd(), arg)
		switch {
		case ierr == nil:
			return p, ref, nil
		case !errors.Is(ierr, app.ErrNotFound):
			return nil, capability.PackRef{}, fmt.Errorf("run: %s is used in place and does not load: %w", arg, ierr)
		}
		return nil, capability.PackRef{}, usageError("run: %w", err)
	case errors.Is(err, packs.ErrModified):
		return nil, capability.PackRef{}, fmt.Errorf("run: refusing to run: %w", err)
	case err != nil:
		return nil, capability.PackRef{}, err
	}
	dir, err := a.Home.PackDir(arg)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return nil, capability.PackRef{}, fmt.Errorf("run: installed pack %s does not load: %w: reinstall it with packs add", arg, err)
	}
	return p, entry.Ref(), nil
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
