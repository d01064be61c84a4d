package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/termtext"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Exit codes shared by every command (DESIGN.md, "Fixed CLI contract").
// Commands with more outcomes (packs run: 3 denied, 4 invalid input, 5
// limit) return their own through exitWith.
const (
	exitOK      = runtime.ExitOK
	exitFailure = runtime.ExitFailure // the command ran and failed, or found errors
	exitUsage   = 2                   // the command line is wrong
)

// commands is the one place where subcommands are registered: add a line
// here for a new command file.
func (c *cli) commands() []*cobra.Command {
	return []*cobra.Command{
		c.validateCommand(),
		c.addCommand(),
		c.listCommand(),
		c.infoCommand(),
		c.removeCommand(), c.enableCommand(), c.disableCommand(),
		c.runCommand(),
		c.mcpCommand(), c.approveCommand(),
		c.serveCommand(),
		c.chatCommand(), c.agentCommand(),
		c.grantCommand(), c.revokeCommand(), c.capabilitiesCommand(),
		c.policyCommand(),
		c.auditCommand(),
		c.secretCommand(),
		c.manCommand(),
		c.initCommand(), c.buildCommand(), c.testCommand(), c.lintCommand(),
		c.recipeCommand(),
		c.packCommand(), c.signCommand(), c.publishCommand(), c.updateCommand(), c.bundleCommand(),
		c.doctorCommand(), c.reviewCommand(),
	}
}

// cli is one invocation: its streams, environment and global flags.
type cli struct {
	stdin       *bufio.Reader
	stdout      io.Writer // through termtext, as stderr
	stderr      io.Writer
	rawStdout   io.Writer // stdout as given: the MCP server's stdio stream
	getenv      func(string) string
	interactive bool // a person can answer prompts: stdin and stderr are terminals

	home   string // --home
	policy string // --policy
	store  string // --store

	// own are the addresses packs' own servers listen on (serve, mcp
	// --http): the pipeline keeps every tool away from them.
	own app.Listeners
}

// run executes the packs command line args, with os.Stdin as its input,
// and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runIO(ctx, args, os.Stdin, stdout, stderr)
}

// runIO is run with stdin given: a person can answer prompts only when both
// stdin and stderr are terminals.
//
// Everything the commands write goes through termtext: text a pack or a
// model controls reaches a terminal (or a file a person pages through) as
// text, never as escape sequences. Only the MCP server's protocol stream
// (rawStdout) is written as is.
func runIO(ctx context.Context, args []string, stdin *os.File, stdout, stderr io.Writer) int {
	out, errOut := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	c := &cli{
		stdin:       bufio.NewReader(stdin),
		stdout:      out,
		stderr:      errOut,
		rawStdout:   stdout,
		getenv:      os.Getenv,
		interactive: isTerminal(stdin) && isTerminal(stderr),
	}
	code := c.run(ctx, args)
	out.Flush()
	errOut.Flush()
	return code
}

func (c *cli) run(ctx context.Context, args []string) int {
	root := c.rootCommand()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	code := exitFailure
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(c.stderr, errorLine(root, msg)+portHint(cmd, err)+errorHint(err)+c.packSuggestion(ctx, cmd, err))
	}
	return code
}

// errorLine is msg with one "packs: " in front: a message that already
// starts with it, or with a command path ("packs validate: ..."), gets no
// second one.
func errorLine(root *cobra.Command, msg string) string {
	msg = strings.TrimPrefix(msg, "packs: ")
	if rest, ok := strings.CutPrefix(msg, "packs "); ok {
		name, _, _ := strings.Cut(rest, ":")
		name, _, _ = strings.Cut(name, " ")
		if sub, _, err := root.Find([]string{name}); err == nil && sub != root {
			msg = rest
		}
	}
	return "packs: " + msg
}

// errorHint is what the person can do about an error of the library, by
// its sentinel: the library's messages say what failed, never which command
// to run (it is embedded in programs that have no such commands).
func errorHint(err error) string {
	switch {
	case errors.Is(err, packs.ErrModified):
		return ": reinstall the pack with packs add, or remove it with packs remove"
	case errors.Is(err, dist.ErrNotInstalled):
		return ": see packs list, or install it with packs add"
	}
	switch {
	case errors.Is(err, app.ErrAgentNotFound):
		return ": see packs agent list, or create it with packs agent create NAME"
	case errors.Is(err, app.ErrAgentExists):
		return ": choose another name, or change that agent with packs agent edit"
	case errors.Is(err, app.ErrUnknownCapability):
		return ": packs list shows the installed packs and built-ins; install it with packs add, or leave it out"
	case errors.Is(err, app.ErrUnavailable):
		return ": a coming_soon pack cannot be attached; leave it out until a version that provides it is installed"
	}
	if name, ok := missingSecret(err); ok {
		return ": set it with packs secret set " + name
	}
	if grant, ok := grantCommand(err); ok {
		return ": grant it with " + grant
	}
	return ""
}

// packError is an error of a command on one installed pack, so that a
// hint can name the pack.
type packError struct {
	pack string
	err  error
}

func (e *packError) Error() string { return e.err.Error() }
func (e *packError) Unwrap() error { return e.err }

// grantCommand is the packs grant command that lifts a denial by the
// person's grant (not by the policy or the pack's request, which no grant
// lifts) of a command on an installed pack.
func grantCommand(err error) (string, bool) {
	var (
		de *capability.DeniedError
		pe *packError
	)
	if !errors.As(err, &de) || !errors.As(err, &pe) || de.Layer != capability.LayerUser || de.Capability == "" || !packs.ValidName(pe.pack) {
		return "", false
	}
	grant := string(de.Capability)
	res := de.Resource
	if de.Capability == capability.Network {
		if host, port, err := net.SplitHostPort(res); err == nil && (port == "443" || port == "80") {
			res = host // a pattern without a port allows 80 and 443
		}
	}
	if res != "" && !strings.HasPrefix(res, "packs:") { // packs:host/... names a host function, not a resource
		grant += "=" + res
	}
	return "packs grant " + pe.pack + " " + grant, true
}

// addrFlags name, per command, the flag that chooses where it listens.
var addrFlags = map[string]string{"serve": "--addr", "mcp": "--http"}

// portHint is the advice for a command that could not listen because the
// port is taken: the flag that picks another.
func portHint(cmd *cobra.Command, err error) string {
	flag, ok := addrFlags[cmd.Name()]
	if !ok || !errors.Is(err, syscall.EADDRINUSE) {
		return ""
	}
	return fmt.Sprintf(": the port is in use (another packs %s?): stop that one, or choose another port with %s HOST:PORT", cmd.Name(), flag)
}

func (c *cli) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "packs",
		Short: "Capability packs for LLMs: skills with sandboxed WebAssembly tools",
		Long: `packs installs and validates capability packs: folders with a SKILL.md, an
optional skill.toml (the capabilities the pack asks for) and an optional
tools.json (tools run as WebAssembly, each holding only what was granted).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
					return usageError("unknown command %q: did you mean packs %s? (packs --help lists them all)", args[0], strings.Join(sug, " or packs "))
				}
				return usageError("unknown command %q: run packs --help for the list", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(c.stderr)
			cmd.Help()
			return usageError("")
		},
		Version:                    version(),
		SuggestionsMinimumDistance: 2,
		SilenceUsage:               true,
		SilenceErrors:              true,
	}
	root.SetVersionTemplate(versionText())
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetIn(c.stdin)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError("%s: %v: run %s --help", cmd.CommandPath(), err, cmd.CommandPath())
	})
	f := root.PersistentFlags()
	f.StringVar(&c.home, "home", "", "state directory (default $PACKS_HOME, else $XDG_DATA_HOME/packs, else ~/.local/share/packs)")
	f.StringVar(&c.policy, "policy", "", "enterprise policy file (default $PACKS_POLICY)")
	f.StringVar(&c.store, "store", "", "a postgres:// URL: the PostgreSQL store replicas share (default $PACKS_STORE, else packs.db in the state directory)")
	root.AddCommand(c.commands()...)
	c.addCompletions(root)
	return root
}

// open opens the application on the state directory from --home or the
// environment. The caller closes it.
func (c *cli) open(ctx context.Context) (*app.App, error) { return c.openWith(ctx, false) }

// openWith is open that, with builtins, also installs or updates the
// built-in packs (app.Options.Builtins): for the commands that run chats
// and tools.
func (c *cli) openWith(ctx context.Context, builtins bool) (*app.App, error) {
	home, err := dist.ResolveHome(c.home, c.getenv, os.UserHomeDir)
	if err != nil {
		return nil, err
	}
	policy := c.policyPath()
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return app.Open(ctx, app.Options{Home: home, Policy: policy, Logger: logger, Builtins: builtins, Getenv: c.getenv, WorkDir: mustGetwd(), Store: c.storeURL()})
}

// storeURL is the PostgreSQL store from --store or $PACKS_STORE; "" is
// packs.db in the state directory.
func (c *cli) storeURL() string {
	if c.store != "" {
		return c.store
	}
	return c.getenv("PACKS_STORE")
}

// policyPath is the enterprise policy file from --policy or $PACKS_POLICY.
func (c *cli) policyPath() string {
	if c.policy != "" {
		return c.policy
	}
	return c.getenv("PACKS_POLICY")
}

// openExisting is open for the commands that only read: when the state
// directory does not exist yet it creates nothing and returns a nil App
// (nothing is installed). The policy is still loaded: a malformed one stops
// every command.
func (c *cli) openExisting(ctx context.Context) (*app.App, error) {
	home, err := dist.ResolveHome(c.home, c.getenv, os.UserHomeDir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		_, err := capability.FindPolicy(c.policyPath(), nil)
		return nil, err
	}
	return c.open(ctx)
}

// exitError carries an exit code other than exitFailure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitWith makes err end the program with code.
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// usageError is a wrong command line: exit code 2. An empty message means
// the help was already printed.
func usageError(format string, args ...any) error {
	return exitWith(exitUsage, fmt.Errorf(format, args...))
}

// nargs checks the number of positional arguments, between min and max (max
// < 0: no limit); what names them in the error.
func nargs(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || max >= 0 && len(args) > max {
			return usageError("%s: expected %s, got %d argument(s): run %s --help", cmd.CommandPath(), what, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// isTerminal reports whether w is a terminal. A character device is not
// enough: /dev/null is one, and nobody answers there.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ask prints a yes/no question to stderr and reads the answer from stdin.
// def is the answer for an empty line; end of input means no.
func (c *cli) ask(question string, def bool) (bool, error) {
	hint := " [y/N] "
	if def {
		hint = " [Y/n] "
	}
	fmt.Fprint(c.stderr, question+hint)
	line, err := c.stdin.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	case "":
		return def && err == nil, nil
	}
	return false, nil
}
