package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/secrets"
	"github.com/packs-run/packs/runtime"
)

// secretCommand is packs secret set|list|rm: the secret store in the state
// directory (docs/secrets.md). A value is never a command-line argument:
// those show in ps and in shell history.
func (c *cli) secretCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret set|list|rm",
		Short: "Keep secrets that granted tools may use without seeing them",
		Long: `secret manages the secret store in the state directory. Values are encrypted
at rest (AES-256-GCM) with a key kept in secrets.key (mode 0600), apart from
packs.db. A pack asks for a secret by name (secrets_access in skill.toml); it
uses one only once you grant it: packs grant PACK secrets_access=NAME.`,
		Args: nargs(0, 0, "a subcommand: set, list or rm"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("packs secret: expected a subcommand: set, list or rm")
		},
	}
	cmd.AddCommand(c.secretSetCommand(), c.secretListCommand(), c.secretRemoveCommand())
	return cmd
}

// missingSecret names the secret a call needed and the store lacks.
func missingSecret(err error) (string, bool) {
	var me *runtime.SecretMissingError
	if errors.As(err, &me) {
		return me.Name, true
	}
	return "", false
}

func (c *cli) secretStore() (*secrets.Store, error) {
	home, err := dist.ResolveHome(c.home, c.getenv, os.UserHomeDir)
	if err != nil {
		return nil, err
	}
	return secrets.Open(home), nil
}

func (c *cli) secretSetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "set NAME",
		Short: "Set a secret, read from a prompt (no echo) or from stdin",
		Long: `set stores a secret's value under NAME, replacing any value it had. On a
terminal it prompts without echo; otherwise it reads stdin to its end (one
trailing newline is dropped). The value is never taken from an argument.`,
		Args: nargs(1, 1, "one secret NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := secrets.CheckName(name); err != nil {
				return usageError("%v", err)
			}
			value, err := c.readSecret(name)
			if err != nil {
				return err
			}
			defer clear(value)
			s, err := c.secretStore()
			if err != nil {
				return err
			}
			if err := s.Set(name, value); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "set secret %s\n", name)
			return nil
		},
	}
}

// readSecret reads a value from the terminal without echo, or from stdin.
func (c *cli) readSecret(name string) ([]byte, error) {
	if c.interactive {
		fmt.Fprintf(c.stderr, "value for %s (not shown): ", name)
		b, err := term.ReadPassword(int(os.Stdin.Fd()))
		fmt.Fprintln(c.stderr)
		if err != nil {
			return nil, fmt.Errorf("packs secret set: reading the value: %w", err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(c.stdin, secrets.MaxValueBytes+2))
	if err != nil {
		return nil, fmt.Errorf("packs secret set: reading stdin: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return nil, usageError("packs secret set %s: stdin was empty: pipe the value in, or run it on a terminal to be prompted", name)
	}
	return b, nil
}

func (c *cli) secretListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List secret names and when they were set, never values",
		Long: `list prints each secret's name and when it was set. Values are never shown.

--json prints one JSON array: [{"name": "GITHUB_TOKEN", "set_at": "..."}].`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := c.secretStore()
			if err != nil {
				return err
			}
			list, err := s.List()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(c.stdout, "no secrets: add one with packs secret set NAME")
				return nil
			}
			for _, i := range list {
				fmt.Fprintf(c.stdout, "%s\tset %s\n", i.Name, i.SetAt.Local().Format(time.DateTime))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	return cmd
}

func (c *cli) secretRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a secret",
		Args:  nargs(1, 1, "one secret NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := c.secretStore()
			if err != nil {
				return err
			}
			if err := s.Remove(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "removed secret %s\n", args[0])
			return nil
		},
	}
}
