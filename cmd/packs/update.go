package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/packs"
)

func (c *cli) updateCommand() *cobra.Command {
	var yes, allowUnpinned bool
	var signerFiles []string
	cmd := &cobra.Command{
		Use:   "update [NAME] [--yes] [--signer KEY.pub] [--allow-unpinned]",
		Short: "Fetch installed packs again from their sources and install what changed",
		Long: `update fetches the pack NAME (or every installed pack) again from the source
recorded in packs.lock, through the same checks as packs add (validation,
limits, digests, signatures and the enterprise policy). A pack whose content
did not change is left alone. Otherwise update shows the version, the files
added, removed and changed, and the capability diff: resources the new
version asks for (+) and no longer asks for (-).

Grants never widen silently. The person's persistent grants carry over only
as far as they went before: a grant of a whole capability is pinned to the
resources the old version asked for, and resources the new version no
longer asks for are dropped. When the new version asks for more, a person
at a terminal is asked to accept the update and then about each new
request; declining keeps the old version installed and running. Without a
terminal such an update is refused unless --yes, which installs it with the
carried grants only (the new requests stay ungranted; grant them with packs
grant). A git source named by a branch follows the branch; a tag, a commit
or a pinned URL gives the same content until the source changes. A pack
installed signed must stay signed: an unsigned new version is refused, and
the key that signed the installed version is trusted for the new one.`,
		Args: nargs(0, 1, "at most one pack NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			var entries []packs.LockEntry
			if len(args) == 1 {
				e, err := a.Home.Entry(args[0])
				if err != nil {
					return err
				}
				entries = append(entries, e)
			} else {
				l, err := a.Home.ReadLock()
				if err != nil {
					return err
				}
				entries = l.Packs
			}
			var errs []error
			for _, e := range entries {
				if err := c.updateOne(ctx, a, e, yes, allowUnpinned, signerFiles); err != nil {
					if len(entries) == 1 {
						return err
					}
					fmt.Fprintf(c.stderr, "packs: update %s: %v\n", e.Name, strings.TrimPrefix(err.Error(), "packs: "))
					errs = append(errs, err)
				}
			}
			if len(errs) > 0 {
				return fmt.Errorf("update: %s failed (see above); the others are up to date", plural(len(errs), "pack"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "update without asking; new requests stay ungranted")
	cmd.Flags().BoolVar(&allowUnpinned, "allow-unpinned", false, "accept an https:// archive without #sha256=")
	cmd.Flags().StringArrayVar(&signerFiles, "signer", nil, "trust signatures by this SSH public key file (repeatable)")
	return cmd
}

// updateOne fetches e's source again and installs it when it changed, with
// the person's consent when it asks for more.
func (c *cli) updateOne(ctx context.Context, a *app.App, e packs.LockEntry, yes, allowUnpinned bool, signerFiles []string) error {
	if builtin.IsSource(e.Source) {
		// A built-in comes with the binary: bring it to this binary's
		// version (a no-op when it is).
		if err := a.EnsureBuiltins(ctx); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s is built in: it is the version this packs binary carries\n", e.Name)
		return nil
	}
	source := packs.SourceForUpdate(e.Source)
	trust, err := addTrust(a.Policy, source, signerFiles)
	if err != nil {
		return err
	}
	if e.Signer != "" {
		// A signed pack stays signed: an unsigned new version is refused,
		// and the key the person trusted at install is trusted again
		// (unless the policy now blocks it).
		trust.Require = true
		trust.Signers = append(trust.Signers, e.Signer)
	}
	st, err := a.Home.StageSource(ctx, source, packs.StageOptions{}, packs.FetchOptions{AllowUnpinned: allowUnpinned, Trust: trust})
	if errors.Is(err, packs.ErrSignatureRequired) || errors.Is(err, packs.ErrUntrustedSigner) || errors.Is(err, packs.ErrSignerBlocked) || errors.Is(err, packs.ErrSignature) {
		return exitWith(exitDenied, fmt.Errorf("update %s: %s: %s %s stays installed", e.Name, strings.TrimPrefix(err.Error(), "packs: "), e.Name, orDash(e.Version)))
	}
	var le *packs.LoadError
	if errors.As(err, &le) {
		for _, f := range le.Findings {
			fmt.Fprintln(c.stderr, f.String())
		}
		return fmt.Errorf("update: the new version of %s has errors: %s stays installed", e.Name, e.Version)
	}
	if err != nil {
		return err
	}
	defer st.Discard()
	if st.Name() != e.Name {
		return fmt.Errorf("update: %s now holds pack %q, not %q: %s stays installed; install the other with packs add", e.Source, st.Name(), e.Name, e.Name)
	}
	if st.Integrity == e.Integrity {
		fmt.Fprintf(c.stdout, "%s %s is up to date\n", e.Name, e.Version)
		return nil
	}
	ref := st.Ref()
	if err := a.Policy.Blocked(ref); err != nil {
		return exitWith(exitDenied, fmt.Errorf("update %s: the new version is blocked by policy %s: %s: %s %s stays installed", e.Name, a.Policy.Source(), blockReason(a.Policy, ref), e.Name, e.Version))
	}
	if err := c.refuseMisfit(c.stderr, "update", st.Pack, a.Home.Dir()); err != nil {
		return fmt.Errorf("%w: %s %s stays installed", err, e.Name, orDash(e.Version))
	}
	dir, err := a.Home.PackDir(e.Name)
	if err != nil {
		return err
	}
	old, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return fmt.Errorf("update: the installed %s does not load (%v): remove it and add it again", e.Name, err)
	}
	oldReq, newReq := old.Request(), st.Pack.Request()
	diff := packs.DiffRequests(oldReq, newReq)
	files, err := packs.DiffTrees(dir, st.Pack.Dir)
	if err != nil {
		return err
	}
	newVersion := ""
	if st.Pack.Manifest != nil {
		newVersion = st.Pack.Manifest.Version
	}
	fmt.Fprintf(c.stdout, "%s %s → %s", e.Name, orDash(e.Version), orDash(newVersion))
	if e.Resolved != "" || st.Resolved != "" {
		fmt.Fprintf(c.stdout, " (%s → %s)", orDash(e.Resolved), orDash(st.Resolved))
	}
	fmt.Fprintln(c.stdout)
	fmt.Fprintf(c.stdout, "files: %d added, %d removed, %d changed\n", len(files.Added), len(files.Removed), len(files.Changed))
	for _, l := range [][2]any{{"+", files.Added}, {"-", files.Removed}, {"~", files.Changed}} {
		for _, f := range l[1].([]string) {
			fmt.Fprintf(c.stdout, "  %s %s\n", l[0], f)
		}
	}
	if lines := diff.Lines(); len(lines) > 0 {
		fmt.Fprintln(c.stdout, "capabilities:")
		for _, l := range lines {
			fmt.Fprintln(c.stdout, "  "+l)
		}
	} else {
		fmt.Fprintln(c.stdout, "capabilities: unchanged")
	}
	current, err := a.Grants().PeekGrants(ctx, e.Ref(), "")
	if err != nil {
		return err
	}
	grants, dropped := packs.CarryGrants(oldReq, newReq, current)
	pre := preApproved(a.Policy, ref, newReq)
	switch {
	case diff.Widened() && !c.interactive && !yes:
		return usageError("update: %s %s asks for more than %s (see above) and nobody can answer here: %s %s stays installed; run packs update %s at a terminal, or pass --yes to update without granting the new requests",
			e.Name, orDash(newVersion), orDash(e.Version), e.Name, orDash(e.Version), e.Name)
	case c.interactive && !yes:
		q := fmt.Sprintf("Update %s to %s?", e.Name, orDash(newVersion))
		if diff.Widened() {
			q = fmt.Sprintf("Update %s to %s? It asks for more (above).", e.Name, orDash(newVersion))
		}
		ok, err := c.ask(q, !diff.Widened())
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(c.stdout, "kept %s %s: you declined the update\n", e.Name, orDash(e.Version))
			return nil
		}
		for _, n := range capability.All() {
			added, ok := diff.Added[n]
			if !ok || slices.Contains(pre, n) {
				continue
			}
			yes, err := c.ask(fmt.Sprintf("Grant %s (new: %s)?", n, orNone(strings.Join(added, ", "))), false)
			if err != nil {
				return err
			}
			if yes {
				grants = widenGrant(grants, n, added, newReq)
			}
		}
	}
	a.Installed = append(a.Installed, compileHook(a, c.stderr), grantsHook(a, grants))
	ne, err := a.InstallGrants(ctx, st, grants)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "updated %s %s → %s (%s)\n", ne.Name, orDash(e.Version), orDash(ne.Version), ne.Integrity)
	if len(dropped) > 0 {
		fmt.Fprintf(c.stdout, "grants dropped (no longer asked for): %s\n", capNames(dropped))
	}
	var notGranted []string
	for _, n := range capability.All() {
		added, ok := diff.Added[n]
		if !ok || slices.Contains(pre, n) {
			continue
		}
		got := ne.Capabilities[n]
		for _, r := range added {
			if !got.Granted || len(got.Resources) > 0 && !slices.Contains(got.Resources, r) {
				notGranted = append(notGranted, string(n)+" "+r)
			}
		}
		if len(added) == 0 && !got.Granted {
			notGranted = append(notGranted, string(n))
		}
	}
	if len(notGranted) > 0 {
		fmt.Fprintf(c.stdout, "new requests not granted: %s (grant with packs grant %s CAP)\n", strings.Join(notGranted, ", "), ne.Name)
	}
	return nil
}

// widenGrant adds resources to the grant of n, or grants them when n has
// no grant yet. A capability with no resources is granted whole.
func widenGrant(grants []capability.UserGrant, n capability.Name, added []string, req capability.Request) []capability.UserGrant {
	for i, u := range grants {
		if u.Capability == n {
			if len(u.Resources) > 0 {
				grants[i].Resources = append(slices.Clone(u.Resources), added...)
			}
			return grants
		}
	}
	u := capability.UserGrant{Capability: n, Scope: capability.ScopePersistent}
	if len(req.Resources(n)) > 0 {
		u.Resources = slices.Clone(added)
	}
	return append(grants, u)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
