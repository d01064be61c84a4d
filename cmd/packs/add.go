package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

func (c *cli) addCommand() *cobra.Command {
	var grantFlag string
	var yes bool
	cmd := &cobra.Command{
		Use:   "add SOURCE [--grant all|none|CAP,...] [--yes]",
		Short: "Install a pack from a folder or a .tar.gz",
		Long: `add installs a pack from a folder or a local .tar.gz/.tgz archive. It
validates the pack (and refuses it when there are errors), shows what the
pack asks for, then installs it atomically and records it in packs.lock.

--grant decides which requested capabilities are granted: "all", "none", or
a comma-separated list such as "network,env_read". Without --grant, a person
at a terminal is asked about each capability; without a terminal nothing is
granted. --yes skips the questions (and grants only what --grant says): it
approves the install, never a capability.`,
		Args: nargs(1, 1, "one SOURCE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			choice, err := parseGrant(grantFlag)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			a.Installed = append(a.Installed, precompileHook(a), grantsHook(a))
			st, err := a.Home.Stage(ctx, args[0], packs.StageOptions{})
			var le *packs.LoadError
			if errors.As(err, &le) {
				for _, f := range le.Findings {
					fmt.Fprintln(c.stderr, f.String())
				}
				errs, _ := count(le.Findings)
				return fmt.Errorf("add: %s has %s: fix them (packs validate shows them) and run packs add again", args[0], plural(errs, "error"))
			}
			if err != nil {
				return err
			}
			defer st.Discard()
			for _, f := range st.Findings {
				fmt.Fprintln(c.stderr, f.String())
			}
			req := st.Pack.Request()
			showRequest(c.stdout, st, req)
			grant, err := c.decideGrants(choice, req, yes)
			if err != nil {
				return err
			}
			if c.interactive && !yes {
				ok, err := c.ask(fmt.Sprintf("Install %s?", st.Name()), true)
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("add: not installed: you declined")
				}
			}
			e, err := a.Install(ctx, st, grant)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "installed %s %s (%s)\n", e.Name, e.Version, e.Integrity)
			if names := capNames(e.Granted()); names != "" {
				fmt.Fprintf(c.stdout, "granted: %s\n", names)
			}
			var denied []capability.Name
			for _, n := range e.Requested() {
				if !e.Capabilities[n].Granted {
					denied = append(denied, n)
				}
			}
			if len(denied) > 0 {
				fmt.Fprintf(c.stdout, "not granted: %s (tools that need them are denied; grant with packs add --grant)\n", capNames(denied))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&grantFlag, "grant", "", `capabilities to grant: "all", "none" or CAP,CAP,...`)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "install without asking (grants only what --grant says)")
	return cmd
}

// grantChoice is a parsed --grant.
type grantChoice struct {
	set   bool // --grant was given
	all   bool
	names []capability.Name
}

// parseGrant parses --grant: "", "all", "none" or a list of capability names.
func parseGrant(s string) (grantChoice, error) {
	switch s = strings.TrimSpace(s); s {
	case "":
		return grantChoice{}, nil
	case "all":
		return grantChoice{set: true, all: true}, nil
	case "none":
		return grantChoice{set: true}, nil
	}
	g := grantChoice{set: true}
	for _, part := range strings.Split(s, ",") {
		n, err := capability.ParseName(strings.TrimSpace(part))
		if err != nil {
			return g, usageError("add: --grant: %v, or all, or none", err)
		}
		if !slices.Contains(g.names, n) {
			g.names = append(g.names, n)
		}
	}
	return g, nil
}

// decideGrants turns --grant, or the person's answers, into the granted
// capabilities.
func (c *cli) decideGrants(g grantChoice, req capability.Request, yes bool) ([]capability.Name, error) {
	requested := req.Names()
	switch {
	case g.all:
		return requested, nil
	case g.set:
		for _, n := range g.names {
			if !slices.Contains(requested, n) {
				return nil, usageError("add: --grant %s: the pack does not ask for it (it asks for: %s)", n, orNone(capNames(requested)))
			}
		}
		return g.names, nil
	case !c.interactive || yes:
		return nil, nil
	}
	var out []capability.Name
	for _, n := range requested {
		ok, err := c.ask(fmt.Sprintf("Grant %s (%s)?", n, strings.Join(req.Resources(n), ", ")), false)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// showRequest prints the pack and what it asks for.
func showRequest(w io.Writer, st *packs.Staged, req capability.Request) {
	p := st.Pack
	version := ""
	if p.Manifest != nil && p.Manifest.Version != "" {
		version = " " + p.Manifest.Version
	}
	fmt.Fprintf(w, "%s%s from %s\n", st.Name(), version, st.Source)
	if len(p.Tools) > 0 {
		names := make([]string, len(p.Tools))
		for i, t := range p.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(w, "tools: %s\n", strings.Join(names, ", "))
	}
	if len(req.Names()) == 0 {
		fmt.Fprintln(w, "it asks for no capabilities beyond the defaults (its own folder read-only, the chat workspace)")
		return
	}
	fmt.Fprintln(w, "it asks for:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, n := range req.Names() {
		fmt.Fprintf(tw, "  %s\t%s\n", n, strings.Join(req.Resources(n), ", "))
	}
	if len(req.TerminalExec.Blocked) > 0 {
		fmt.Fprintf(tw, "  (blocked commands)\t%s\n", strings.Join(req.TerminalExec.Blocked, ", "))
	}
	tw.Flush()
}

// capNames renders capability names as "a, b".
func capNames(ns []capability.Name) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
