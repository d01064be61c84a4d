package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/packs"
)

// Exit codes shared by every command (DESIGN.md, "Fixed CLI contract").
// Commands with more outcomes (packs run: 3 denied, 4 invalid input, 5
// limit) return their own through exitWith.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed, or found errors
	exitUsage   = 2 // the command line is wrong
)

// commands is the one place where subcommands are registered: add a line
// here for a new command file.
func (c *cli) commands() []*cobra.Command {
	return []*cobra.Command{
		c.validateCommand(),
		c.addCommand(),
		c.listCommand(),
		c.infoCommand(),
		c.removeCommand(),
		c.runCommand(),
		c.mcpCommand(),
		c.serveCommand(),
		c.chatCommand(),
		c.grantCommand(), c.revokeCommand(), c.capabilitiesCommand(),
		c.policyCommand(),
		c.auditCommand(),
	}
}

// cli is one invocation: its streams, environment and global flags.
type cli struct {
	stdin       *bufio.Reader
	stdout      io.Writer
	stderr      io.Writer
	getenv      func(string) string
	interactive bool // a person can answer prompts: stdin and stderr are terminals

	home   string // --home
	policy string // --policy
}

// run executes the packs command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{
		stdin:       bufio.NewReader(os.Stdin),
		stdout:      stdout,
		stderr:      stderr,
		getenv:      os.Getenv,
		interactive: isTerminal(os.Stdin) && isTerminal(stderr),
	}
	return c.run(ctx, args)
}

func (c *cli) run(ctx context.Context, args []string) int {
	root := c.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	code := exitFailure
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" {
		if !strings.HasPrefix(msg, "packs: ") {
			msg = "packs: " + msg
		}
		fmt.Fprintln(c.stderr, msg)
	}
	return code
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
				return usageError("unknown command %q: run packs --help for the list", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(c.stderr)
			cmd.Help()
			return usageError("")
		},
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetIn(c.stdin)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError("%s: %v: run %s --help", cmd.CommandPath(), err, cmd.CommandPath())
	})
	f := root.PersistentFlags()
	f.StringVar(&c.home, "home", "", "state directory (default $PACKS_HOME, else $XDG_DATA_HOME/packs, else ~/.local/share/packs)")
	f.StringVar(&c.policy, "policy", "", "enterprise policy file (default $PACKS_POLICY)")
	root.AddCommand(c.commands()...)
	return root
}

// open opens the application on the state directory from --home or the
// environment. The caller closes it.
func (c *cli) open(ctx context.Context) (*app.App, error) {
	home, err := packs.ResolveHome(c.home, c.getenv, os.UserHomeDir)
	if err != nil {
		return nil, err
	}
	policy := c.policy
	if policy == "" {
		policy = c.getenv("PACKS_POLICY")
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return app.Open(ctx, app.Options{Home: home, Policy: policy, Logger: logger})
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

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
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
