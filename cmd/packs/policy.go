package main

import (
	"fmt"
	"io"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
)

func (c *cli) policyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy show | check PACK",
		Short: "Show the enterprise policy, or what it gives a pack",
		Long: `The enterprise policy is a TOML file named by --policy, else $PACKS_POLICY,
else /etc/packs/policy.toml when it exists. It blocks or mandates packs, caps
every capability, pre-approves grants and chooses which calls run without
asking a person; it always wins over your own grants. A malformed policy
stops every command with the file, line and what to fix.`,
		Args: nargs(0, 0, "a subcommand: show or check"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError("policy: say show or check PACK: run packs policy --help")
		},
	}
	var showJSON bool
	show := &cobra.Command{
		Use:   "show [--json]",
		Short: "Print the effective policy",
		Long: `show prints the policy in force as normalized TOML, in the syntax of the
file. --json prints {"source": FILE, "policy": {...}}: the same tables and
keys as the TOML, or null with no policy.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			pol, err := capability.FindPolicy(c.policy, c.getenv)
			if err != nil {
				return err
			}
			s, err := pol.Format()
			if err != nil {
				return err
			}
			if !showJSON {
				_, err = io.WriteString(c.stdout, s)
				return err
			}
			out := struct {
				Source string         `json:"source"`
				Policy map[string]any `json:"policy"`
			}{Source: pol.Source()}
			if pol != nil {
				// The JSON is the normalized TOML read back: one rendering
				// of the policy (Format), two syntaxes.
				if err := toml.Unmarshal([]byte(s), &out.Policy); err != nil {
					return fmt.Errorf("policy show: %w", err)
				}
			}
			return writeJSON(c.stdout, out)
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the policy as JSON")
	cmd.AddCommand(show)
	var asJSON bool
	check := &cobra.Command{
		Use:   "check PACK [--json]",
		Short: "Show what a pack would get under the policy, and why",
		Long: `check resolves an installed pack (or a pack folder) the way a call does and
prints, for each capability it asks for: the request, the policy's verdict,
your grants, and what a call would hold, with the reason for every refusal.`,
		Args: nargs(1, 1, "one PACK (an installed name or a folder)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			p, ref, err := loadForRun(a, args[0], nil)
			if err != nil {
				return err
			}
			return c.explain(ctx, a, p, ref, "", asJSON)
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.AddCommand(check)
	return cmd
}

// printReport writes a capability report, one block per capability.
func printReport(w io.Writer, rep capability.Report, pol *capability.Policy) {
	src := pol.Source()
	if src == "" {
		src = "none"
	}
	fmt.Fprintf(w, "%s", rep.Pack.Name)
	if rep.Pack.Digest != "" {
		fmt.Fprintf(w, " (%s)", rep.Pack.Digest)
	}
	fmt.Fprintf(w, "\npolicy: %s\n", src)
	if rep.Blocked != nil {
		fmt.Fprintf(w, "BLOCKED: %v\n", rep.Blocked)
	}
	if rep.Mandated {
		fmt.Fprintln(w, "mandated: the policy attaches this pack to every chat")
	}
	l := rep.Limits
	fmt.Fprintf(w, "limits: memory %d MiB, timeout %s, input %d bytes, output %d bytes\n", l.MemoryPages/16, l.Timeout, l.InputBytes, l.OutputBytes)
	if len(rep.Capabilities) == 0 {
		fmt.Fprintln(w, "capabilities: none requested")
	}
	for _, cr := range rep.Capabilities {
		fmt.Fprintln(w)
		if cr.Held() {
			fmt.Fprintf(w, "%s: held (%s)\n", cr.Capability, cr.Scope)
		} else {
			fmt.Fprintf(w, "%s: DENIED: %v\n", cr.Capability, cr.Err)
		}
		fmt.Fprintf(w, "  requested: %s\n", joinOr(cr.Requested, "-"))
		fmt.Fprintf(w, "  policy:    %s\n", verdictLine(cr.Policy))
		fmt.Fprintf(w, "  you:       %s\n", verdictLine(cr.User))
		fmt.Fprintf(w, "  effective: %s\n", cr.Holds())
	}
}

func verdictLine(v capability.LayerVerdict) string {
	switch {
	case v.Reason == "":
		return "-"
	case v.Allowed:
		return "allows " + joinOr(v.Resources, "it") + " (" + v.Reason + ")"
	}
	return "denies (" + v.Reason + ")"
}

// reportOut is the JSON form of a capability report.
type reportOut struct {
	Pack         string          `json:"pack"`
	Digest       string          `json:"digest,omitempty"`
	Policy       string          `json:"policy"`
	Blocked      string          `json:"blocked,omitempty"`
	Mandated     bool            `json:"mandated"`
	Limits       limitsOut       `json:"limits"`
	Capabilities []capabilityOut `json:"capabilities"`
	Trust        []string        `json:"trust,omitempty"` // what the policy's [trust] makes of the pack
}

type limitsOut struct {
	MemoryPages uint32 `json:"memory_pages"`
	TimeoutMS   int64  `json:"timeout_ms"`
	InputBytes  int64  `json:"input_bytes"`
	OutputBytes int64  `json:"output_bytes"`
}

type capabilityOut struct {
	Capability capability.Name  `json:"capability"`
	Held       bool             `json:"held"`
	Scope      capability.Scope `json:"scope,omitempty"`
	Requested  []string         `json:"requested"`
	Policy     verdictOut       `json:"policy"`
	User       verdictOut       `json:"user"`
	Effective  []string         `json:"effective"`
	Denied     string           `json:"denied,omitempty"`
}

type verdictOut struct {
	Allowed   bool     `json:"allowed"`
	Resources []string `json:"resources"`
	Reason    string   `json:"reason"`
}

func reportJSON(rep capability.Report, pol *capability.Policy) reportOut {
	out := reportOut{
		Pack: rep.Pack.Name, Digest: rep.Pack.Digest, Policy: pol.Source(), Mandated: rep.Mandated,
		Limits:       limitsOut{rep.Limits.MemoryPages, rep.Limits.Timeout.Milliseconds(), rep.Limits.InputBytes, rep.Limits.OutputBytes},
		Capabilities: []capabilityOut{},
	}
	if rep.Blocked != nil {
		out.Blocked = rep.Blocked.Error()
	}
	for _, cr := range rep.Capabilities {
		co := capabilityOut{
			Capability: cr.Capability, Held: cr.Held(), Scope: cr.Scope, Requested: cr.Requested,
			Policy:    verdictOut{cr.Policy.Allowed, cr.Policy.Resources, cr.Policy.Reason},
			User:      verdictOut{cr.User.Allowed, cr.User.Resources, cr.User.Reason},
			Effective: cr.Effective,
		}
		if cr.Err != nil {
			co.Denied = cr.Err.Error()
		}
		out.Capabilities = append(out.Capabilities, co)
	}
	return out
}
