package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/llm"
)

// agentCommand is packs agent create|list|show|edit|rm: agents (spec 003),
// a name with a system prompt, model settings and an ordered list of
// capabilities, that packs chat --agent NAME starts from.
func (c *cli) agentCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent create|list|show|edit|rm",
		Short: "Keep agents: a system prompt, model settings and capabilities to start chats from",
		Long: `agent manages agents. An agent is a name, a system prompt, model settings
(--model, --max-tokens; by default the configured ones) and an ordered list of
capabilities: built-ins and installed packs, by name (packs list shows them).
packs chat --agent NAME, or the web app, starts a chat from one: its
capabilities are attached in order, its prompt follows the packs' metadata,
its model settings apply. Attaching grants nothing: every tool call is still
approved.

A capability that is not installed, or is coming soon, is refused; a
deprecated one is kept with a warning. Exit codes: 0 done, 1 failed (no such
agent), 2 usage (a wrong flag or field, an unknown capability).`,
		Args: nargs(0, 0, "a subcommand: create, list, show, edit or rm"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("packs agent: expected a subcommand: create, list, show, edit or rm")
		},
	}
	cmd.AddCommand(c.agentCreateCommand(), c.agentListCommand(), c.agentShowCommand(), c.agentEditCommand(), c.agentRemoveCommand())
	return cmd
}

// agentFlags are the fields create and edit set.
type agentFlags struct {
	name, prompt, promptFile, model string
	maxTokens                       int
	caps                            []string
	noCaps, asJSON                  bool
}

func (f *agentFlags) register(fs *pflag.FlagSet, edit bool) {
	fs.StringVar(&f.prompt, "prompt", "", "the system prompt")
	fs.StringVar(&f.promptFile, "prompt-file", "", "read the system prompt from FILE (- for stdin)")
	fs.StringVar(&f.model, "model", "", "the model name for its chats (empty: the configured one)")
	maxHelp := "the reply token limit for its chats (0: the one configured when they run; unset: the one configured now)"
	if edit {
		maxHelp = "the reply token limit for its chats (0: the one configured when they run)"
	}
	fs.IntVar(&f.maxTokens, "max-tokens", 0, maxHelp)
	fs.StringArrayVar(&f.caps, "capability", nil, "a capability (built-in or installed pack), in order; repeatable, or comma-separated")
	fs.BoolVar(&f.asJSON, "json", false, "print the agent as one JSON object")
	if edit {
		fs.StringVar(&f.name, "name", "", "rename the agent")
		fs.BoolVar(&f.noCaps, "no-capabilities", false, "remove every capability")
	}
}

// change reads the flags that were given into an AgentChange.
func (c *cli) agentChange(cmd *cobra.Command, f *agentFlags) (app.AgentChange, error) {
	var ch app.AgentChange
	fs := cmd.Flags()
	if fs.Changed("prompt") && fs.Changed("prompt-file") {
		return ch, usageError("%s: give --prompt or --prompt-file, not both", cmd.CommandPath())
	}
	if fs.Changed("prompt") {
		ch.SystemPrompt = &f.prompt
	}
	if fs.Changed("prompt-file") {
		var b []byte
		var err error
		if f.promptFile == "-" {
			b, err = io.ReadAll(io.LimitReader(c.stdin, app.MaxAgentPrompt+1))
		} else {
			b, err = os.ReadFile(f.promptFile)
		}
		if err != nil {
			return ch, usageError("%s: --prompt-file: %v", cmd.CommandPath(), err)
		}
		p := string(b)
		ch.SystemPrompt = &p
	}
	if fs.Changed("model") {
		ch.Model = &f.model
	}
	if fs.Changed("max-tokens") {
		ch.MaxTokens = &f.maxTokens
	}
	if fs.Changed("name") {
		ch.Name = &f.name
	}
	if f.noCaps && len(f.caps) > 0 {
		return ch, usageError("%s: give --capability or --no-capabilities, not both", cmd.CommandPath())
	}
	if f.noCaps {
		ch.Capabilities = []string{}
	}
	for _, v := range f.caps {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ch.Capabilities = append(ch.Capabilities, id)
			}
		}
	}
	return ch, nil
}

// agentError makes a refused field a usage error (exit 2); the hint comes
// from errorHint.
func agentError(err error) error {
	if errors.Is(err, app.ErrInvalidAgent) || errors.Is(err, app.ErrUnknownCapability) || errors.Is(err, app.ErrUnavailable) || errors.Is(err, app.ErrAgentExists) {
		return exitWith(exitUsage, err)
	}
	return err
}

func (c *cli) agentCreateCommand() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "create NAME [--prompt TEXT | --prompt-file FILE] [--model NAME] [--max-tokens N] [--capability ID]... [--json]",
		Short: "Create an agent",
		Args:  nargs(1, 1, "one agent NAME (quote a name with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := c.agentChange(cmd, &f)
			if err != nil {
				return err
			}
			ch.Name = &args[0]
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			if ch.MaxTokens == nil {
				// The configured limit, written out (not 0), as the app's
				// Agents page does.
				cfg, err := c.configuredModel(a.Home.Dir(), llm.Config{})
				if err != nil {
					return err
				}
				ch = ch.WithMaxTokens(cfg.MaxTokens)
			}
			ag, err := a.CreateAgent(cmd.Context(), ch)
			if err != nil {
				return agentError(err)
			}
			return c.printAgent(ag, f.asJSON, "created")
		},
	}
	f.register(cmd.Flags(), false)
	return cmd
}

func (c *cli) agentEditCommand() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "edit NAME [--name NEW] [--prompt TEXT | --prompt-file FILE] [--model NAME] [--max-tokens N] [--capability ID... | --no-capabilities] [--json]",
		Short: "Change an agent: the flags given replace its fields (--capability replaces the whole list)",
		Args:  nargs(1, 1, "one agent NAME or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := c.agentChange(cmd, &f)
			if err != nil {
				return err
			}
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			ag, err := a.UpdateAgent(cmd.Context(), args[0], ch)
			if err != nil {
				return agentError(err)
			}
			return c.printAgent(ag, f.asJSON, "changed")
		},
	}
	f.register(cmd.Flags(), true)
	return cmd
}

// printAgent prints an agent as JSON, or as lines for people after a
// write (verb) or for show (verb "").
func (c *cli) printAgent(ag app.Agent, asJSON bool, verb string) error {
	for _, w := range ag.Warnings {
		fmt.Fprintln(c.stderr, "packs: warning: "+w)
	}
	if asJSON {
		return writeJSON(c.stdout, ag.JSON())
	}
	if verb != "" {
		fmt.Fprintf(c.stdout, "%s agent %s (%s)\n", verb, ag.Name, ag.ID)
		return nil
	}
	model := ag.Model
	if model == "" {
		model = "(the configured model)"
	}
	caps := strings.Join(ag.Capabilities, ", ")
	if caps == "" {
		caps = "(none)"
	}
	fmt.Fprintf(c.stdout, "name:         %s\nid:           %s\nmodel:        %s\n", ag.Name, ag.ID, model)
	if ag.MaxTokens > 0 {
		fmt.Fprintf(c.stdout, "max tokens:   %d\n", ag.MaxTokens)
	} else {
		fmt.Fprintln(c.stdout, "max tokens:   (the configured limit)")
	}
	fmt.Fprintf(c.stdout, "capabilities: %s\nsystem prompt:\n%s\n", caps, indent(ag.SystemPrompt))
	return nil
}

func indent(s string) string {
	if s == "" {
		return "  (none)"
	}
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func (c *cli) agentListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the agents: name, model and capabilities",
		Long: `list prints one agent a line: its name, model and capabilities.

--json prints one JSON array of agents, each as GET /v1/agents/{id} answers.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := c.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			var list []app.Agent
			if a != nil {
				defer a.Close()
				if list, err = a.Agents(cmd.Context()); err != nil {
					return err
				}
			}
			if asJSON {
				out := make([]app.AgentJSON, 0, len(list))
				for _, ag := range list {
					out = append(out, ag.JSON())
				}
				return writeJSON(c.stdout, out)
			}
			if len(list) == 0 {
				fmt.Fprintln(c.stdout, "no agents: create one with packs agent create NAME --capability ID")
				return nil
			}
			for _, ag := range list {
				model := ag.Model
				if model == "" {
					model = "-"
				}
				fmt.Fprintf(c.stdout, "%s\t%s\t%s\n", ag.Name, model, strings.Join(ag.Capabilities, ","))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	return cmd
}

func (c *cli) agentShowCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME [--json]",
		Short: "Show an agent: its model settings, capabilities and system prompt",
		Args:  nargs(1, 1, "one agent NAME or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.openForAgent(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			ag, err := a.Agent(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return c.printAgent(ag, asJSON, "")
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func (c *cli) agentRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an agent; chats started from it keep its settings",
		Args:  nargs(1, 1, "one agent NAME or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.openForAgent(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			ag, err := a.DeleteAgent(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "removed agent %s (%s)\n", ag.Name, ag.ID)
			return nil
		},
	}
}

// openForAgent opens the home to read or remove the agent name: a home
// that does not exist yet holds no agent, and is not created to say so.
func (c *cli) openForAgent(ctx context.Context, name string) (*app.App, error) {
	a, err := c.openExisting(ctx)
	if err == nil && a == nil {
		err = fmt.Errorf("%w: %q", app.ErrAgentNotFound, name)
	}
	return a, err
}
