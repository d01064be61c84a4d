package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/termtext"
)

// packArgCommands take an installed pack's name as their first argument;
// run takes one of its tools as the second.
var packArgCommands = map[string]bool{
	"run": true, "info": true, "remove": true, "grant": true, "revoke": true,
	"enable": true, "disable": true, "update": true,
}

// addCompletions teaches the shell completions (packs completion SHELL)
// the installed packs' names, their tools and the stored chats' ids. They
// read the state directory and never create it.
func (c *cli) addCompletions(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		if packArgCommands[cmd.Name()] && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = c.completePackArgs
		}
		switch cmd.Name() {
		case "chat":
			cmd.RegisterFlagCompletionFunc("attach", func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return c.completePackArgs(cmd, nil, prefix)
			})
			cmd.RegisterFlagCompletionFunc("chat", c.completeChats)
		}
	}
}

// completePackArgs completes an installed pack's name, then (for run) one
// of its tools.
func (c *cli) completePackArgs(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 1 || (len(args) == 1 && cmd.Name() != "run") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	a, err := c.openExisting(ctx)
	if err != nil || a == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer a.Close()
	list, err := a.Listing(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, ip := range list {
		if len(args) == 0 {
			if strings.HasPrefix(ip.Entry.Name, prefix) {
				out = append(out, cobra.CompletionWithDesc(ip.Entry.Name, termtext.OneLine(ip.Summary.Description, 80)))
			}
			continue
		}
		if ip.Entry.Name == args[0] {
			for _, t := range ip.Summary.Tools {
				if strings.HasPrefix(t, prefix) {
					out = append(out, t)
				}
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeChats completes the id of a stored chat, described by its first
// message.
func (c *cli) completeChats(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	a, err := c.openExisting(ctx)
	if err != nil || a == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer a.Close()
	chats, err := chat.List(ctx, a.DB, 50, nil)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, s := range chats {
		if strings.HasPrefix(s.ID, prefix) {
			out = append(out, cobra.CompletionWithDesc(s.ID, s.FirstMessage))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
