package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

func (c *cli) grantCommand() *cobra.Command {
	var scope, chat string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "grant PACK CAP[=SCOPE|=RES,...]... [--scope once|chat|persistent] [--chat ID] [--json]",
		Short: "Grant capabilities to an installed or in-place pack",
		Long: `grant records what you allow a pack to do. Each argument names one capability
the pack asks for, optionally with a scope or a narrower set of resources:

  network                       everything the pack asks for under network
  network=chat                  the same, for one chat only (needs --chat)
  network=api.example.com       only this host (a pack asking *.example.com)
  filesystem_read=~/projects/a  only this folder

Scopes: once (the next call only), chat (one chat), persistent (until
revoked, the default; --scope sets it for every argument). A grant never
widens what the pack asks for, and the enterprise policy always caps it:
the command shows what the pack ends up with.

--json prints one JSON object:

  {"pack": "web-fetch", "chat": "chat_...",
   "granted": [{"capability": "network", "scope": "persistent",
                "resources": ["docs.rs"]}],
   "notes": ["network is still not held: ..."]}

A pack that is not installed but found in a skills folder (packs list) is
granted in place: the grants hold for its folder's files as they are now,
and an edit of the folder ends them (the next call says what changed);
once grants are refused there. packs add of the same folder keeps them.

chat is there for a chat grant only; resources is empty for a grant of
everything the pack asks for; notes says which granted capabilities a call
still would not hold, and why (the policy, for one).`,
		Args: nargs(2, -1, "a PACK and at least one CAP"),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, err := capability.ParseScope(scope)
			if err != nil {
				return usageError("grant: --scope %s: want once, chat or persistent", scope)
			}
			ctx := cmd.Context()
			// A built-in pack is there on first use.
			a, err := c.openWith(ctx, builtin.Is(args[0]))
			if err != nil {
				return err
			}
			defer a.Close()
			p, ref, err := c.grantTarget(ctx, a, args[0])
			if err != nil {
				return err
			}
			req := p.Request()
			var grants []capability.UserGrant
			for _, spec := range args[1:] {
				u, err := capability.ParseGrantSpec(spec, def)
				if err == nil {
					err = capability.CheckGrant(req, u)
				}
				if err != nil {
					return usageError("grant: %v: see packs capabilities %s", err, p.Name)
				}
				if u.Scope == capability.ScopeChat && chat == "" {
					return usageError("grant: %s: a chat grant needs --chat ID", spec)
				}
				if u.Scope == capability.ScopeOnce && ref.InPlace != "" {
					return usageError("grant: %s: %s is used in place (%s): grant it for a chat (--chat ID) or until revoked", spec, p.Name, ref.InPlace)
				}
				grants = append(grants, u)
			}
			res := grantResult{Pack: p.Name, Chat: chat, Granted: []grantJSON{}, Notes: []string{}, InPlace: ref.InPlace, Integrity: ref.Digest}
			var user []capability.UserGrant
			if ref.InPlace != "" {
				// Bound to the folder's content now: an edit of the folder
				// ends these grants.
				if p, ref, err = a.GrantInPlace(ctx, mustGetwd(), p.Name, chat, grants); err != nil {
					return err
				}
				res.Integrity = ref.Digest
				user, err = a.Grants().PeekGrants(ctx, ref, chat)
			} else {
				if _, err := a.Grant(ctx, p.Name, chat, grants); err != nil {
					if errors.Is(err, packs.ErrModified) {
						return fmt.Errorf("grant: refused, nothing was recorded: %w", err)
					}
					return err
				}
				user, err = a.DB.PeekGrants(ctx, p.Name, chat, a.Grants().Lapse())
			}
			if err != nil {
				return err
			}
			pol := a.Policy
			rep, err := capability.Explain(ref, req, user, pol, c.explainEnv(a))
			if err != nil {
				return err
			}
			if ref.InPlace != "" && !asJSON {
				fmt.Fprintf(c.stdout, "%s is used in place from %s: these grants hold for its files as they are now (%s); an edit of the folder ends them\n", p.Name, ref.InPlace, ref.Digest)
			}
			for _, u := range grants {
				res.Granted = append(res.Granted, grantJSON{Capability: string(u.Capability), Scope: string(u.Scope), Resources: append([]string{}, u.Resources...)})
				if !asJSON {
					cr, _ := rep.Of(u.Capability)
					fmt.Fprintf(c.stdout, "granted %s to %s (%s): a call holds %s %s\n", u, p.Name, u.Scope, u.Capability, cr.Holds())
				}
			}
			for _, cr := range rep.Capabilities {
				for _, u := range grants {
					if u.Capability == cr.Capability && !cr.Held() {
						res.Notes = append(res.Notes, fmt.Sprintf("%s is still not held: %v", cr.Capability, cr.Err))
					}
				}
			}
			if asJSON {
				return writeJSON(c.stdout, res)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(c.stdout, "note: %s\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&scope, "scope", string(capability.ScopePersistent), "scope of every grant without its own: once, chat or persistent")
	cmd.Flags().StringVar(&chat, "chat", "", "the chat a chat (or once) grant belongs to")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object (see above)")
	return cmd
}

// grantResult is packs grant --json.
type grantResult struct {
	Pack string `json:"pack"`
	Chat string `json:"chat,omitempty"`
	// InPlace is the folder of a pack used in place, and Integrity the
	// content of it the grants hold for; both empty for an installed pack.
	InPlace   string      `json:"in_place,omitempty"`
	Integrity string      `json:"integrity,omitempty"`
	Granted   []grantJSON `json:"granted"`
	Notes     []string    `json:"notes"`
}

// grantJSON is one grant made.
type grantJSON struct {
	Capability string   `json:"capability"`
	Scope      string   `json:"scope"`
	Resources  []string `json:"resources"`
}

// revokeResult is packs revoke --json.
type revokeResult struct {
	Pack    string        `json:"pack"`
	Revoked []revokedJSON `json:"revoked"`
	Notes   []string      `json:"notes"`
}

// revokedJSON is one capability revoked and how many live grants of it
// were withdrawn.
type revokedJSON struct {
	Capability string `json:"capability"`
	Withdrawn  int64  `json:"withdrawn"`
}

func (c *cli) revokeCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke PACK CAP... [--json]",
		Short: "Withdraw capabilities from a pack",
		Long: `revoke withdraws every grant of each named capability from the pack, in every
scope and chat. A revoked capability stays withheld even when the enterprise
policy pre-approves it, until you grant it again.

--json prints one JSON object:

  {"pack": "web-fetch", "revoked": [{"capability": "network", "withdrawn": 1}],
   "notes": []}

withdrawn counts the live grants withdrawn (0: there were none); notes says
when the pack's lock entry could not follow (a modified pack).`,
		Args: nargs(2, -1, "a PACK and at least one CAP"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []capability.Name
			for _, s := range args[1:] {
				n, err := capability.ParseName(s)
				if err != nil {
					return usageError("revoke: %v", err)
				}
				names = append(names, n)
			}
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			res := revokeResult{Pack: args[0], Revoked: []revokedJSON{}, Notes: []string{}}
			_, notInstalled := a.Home.Entry(args[0])
			inPlace := errors.Is(notInstalled, dist.ErrNotInstalled)
			for _, n := range names {
				var k int64
				if inPlace {
					k, err = a.RevokeInPlace(ctx, mustGetwd(), args[0], n)
				} else {
					k, err = a.DB.RevokeGrant(ctx, args[0], n)
				}
				if err != nil {
					return err
				}
				res.Revoked = append(res.Revoked, revokedJSON{Capability: string(n), Withdrawn: k})
				if !asJSON {
					fmt.Fprintf(c.stdout, "revoked %s from %s (%s withdrawn)\n", n, args[0], plural(int(k), "live grant"))
				}
			}
			// packs.db, where every check reads grants, is revoked; the
			// lock entry follows. A pack that is not installed has none,
			// and a modified one does not run.
			_, err = a.MirrorGrants(ctx, args[0])
			switch {
			case errors.Is(err, dist.ErrNotInstalled):
			case errors.Is(err, packs.ErrModified):
				res.Notes = append(res.Notes, err.Error())
			case err != nil:
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, res)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(c.stdout, "note: %s\n", n)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object (see above)")
	return cmd
}

func (c *cli) capabilitiesCommand() *cobra.Command {
	var asJSON bool
	var chat string
	cmd := &cobra.Command{
		Use:   "capabilities PACK [--json] [--chat ID]",
		Short: "Show what a pack asks for, what it was granted and what it holds",
		Long: `capabilities shows, for each capability the pack asks for: what it requested,
what the enterprise policy allows of it, what you granted, and what a call
ends up holding, with the reason for every refusal. --chat includes the
grants made for one chat.`,
		Args: nargs(1, 1, "one PACK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			// A built-in pack is there on first use.
			a, err := c.openWith(ctx, builtin.Is(args[0]))
			if err != nil {
				return err
			}
			defer a.Close()
			// An installed pack, else one used in place.
			p, ref, err := c.grantTarget(ctx, a, args[0])
			if err != nil {
				return err
			}
			return c.explain(ctx, a, p, ref, chat, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&chat, "chat", "", "include the grants made for this chat")
	return cmd
}

// explain prints what p would hold for a call, layer by layer: the report of
// both `packs capabilities` and `packs policy check`.
func (c *cli) explain(ctx context.Context, a *app.App, p *packs.Pack, ref capability.PackRef, chat string, asJSON bool) error {
	user, err := a.Grants().PeekGrants(ctx, ref, chat)
	if err != nil {
		return err
	}
	rep, err := capability.Explain(ref, p.Request(), user, a.Policy, c.explainEnv(a))
	if err != nil {
		return err
	}
	kind := ""
	if ref.Digest != "" {
		if e, err := a.Home.Entry(ref.Name); err == nil {
			if src, err := dist.ParseSource(e.Source); err == nil {
				kind = src.Kind.String()
			}
		}
	}
	trust := trustLines(a.Policy, ref, kind)
	if asJSON {
		out := reportJSON(rep, a.Policy)
		out.Trust = trust
		return writeJSON(c.stdout, out)
	}
	printReport(c.stdout, rep, a.Policy)
	fmt.Fprintln(c.stdout)
	for i, l := range trust {
		if i == 0 {
			fmt.Fprintf(c.stdout, "trust: %s\n", l)
			continue
		}
		fmt.Fprintf(c.stdout, "       %s\n", l)
	}
	return nil
}

// trustLines says what the policy's [trust] makes of the pack: who signed
// it and whether that key is trusted or blocked, whether its kind of source
// must be signed, and what the policy pre-approves for it.
func trustLines(pol *capability.Policy, ref capability.PackRef, kind string) []string {
	var out []string
	switch {
	case ref.Signer == "":
		out = append(out, "unsigned")
	case slices.Contains(pol.BlockedSigners(), ref.Signer):
		out = append(out, "signed by "+ref.Signer+": a BLOCKED signer")
	case slices.Contains(pol.TrustedSigners(), ref.Signer):
		out = append(out, "signed by "+ref.Signer+": a trusted signer")
	default:
		out = append(out, "signed by "+ref.Signer+": not among the policy's trusted signers")
	}
	if kind != "" {
		if pol.SignatureRequired(kind) {
			out = append(out, "the policy requires a signature for "+kind+" sources, which this pack came from")
		} else {
			out = append(out, "the policy requires no signature for "+kind+" sources, which this pack came from")
		}
	}
	var pre []string
	for _, n := range capability.All() {
		if pol.PreApproved(ref, n) {
			pre = append(pre, string(n))
		}
	}
	if len(pre) > 0 {
		out = append(out, "pre-approved by the policy (by name, digest or signer): "+strings.Join(pre, ", "))
	}
	return out
}

// installedPack loads an installed pack and its reference (name and
// integrity) for the grant commands.
func installedPack(a *app.App, name string) (*packs.Pack, capability.PackRef, error) {
	ip, err := a.Pack(context.Background(), name)
	if errors.Is(err, dist.ErrNotInstalled) {
		return nil, capability.PackRef{}, usageError("%w", err)
	}
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	if ip.Pack == nil {
		return nil, capability.PackRef{}, fmt.Errorf("installed pack %s does not load (%s): reinstall it with packs add: %w", name, ip.Status, ip.LoadErr)
	}
	return ip.Pack, ip.Entry.Ref(), nil
}

// explainEnv expands grant paths the way packs run does: the person's home,
// the CLI workspace.
func (c *cli) explainEnv(a *app.App) capability.Env {
	home, _ := os.UserHomeDir()
	return capability.Env{Home: home, Getenv: c.getenv, Workspace: filepath.Join(a.Home.WorkspacesDir(), "cli")}
}

// joinOr joins list, or says none.
func joinOr(list []string, none string) string {
	if len(list) == 0 {
		return none
	}
	return strings.Join(list, ", ")
}
