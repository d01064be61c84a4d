package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

func (c *cli) bundleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle export|import",
		Short: "Move installed packs to a machine without network, in one file",
		Long: `bundle export writes installed packs, their packs.lock entries and their
signatures into one file; bundle import installs them from it on another
machine, with no network, checking everything packs add checks.`,
		Args: nargs(0, 0, "a subcommand: export or import"),
	}
	cmd.AddCommand(c.bundleExportCommand(), c.bundleImportCommand())
	return cmd
}

func (c *cli) bundleExportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "export FILE [NAME...]",
		Short: "Write installed packs (all, or those named) to one bundle file",
		Long: `export writes the installed packs NAME... (all when none is named) to FILE:
for each, the archive it was installed from (or its folder packed as packs
pack does), its SSH signature when it was installed signed, and its
packs.lock entry with the grants it has here. A pack whose files were
modified since it was installed is refused.`,
		Args: nargs(1, -1, "FILE and optional pack NAMEs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			out := args[0]
			f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
			if err != nil {
				return fmt.Errorf("bundle export: %w", err)
			}
			entries, err := a.Home.ExportBundle(ctx, f, args[1:])
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(f.Name(), out)
			}
			if err != nil {
				os.Remove(f.Name())
				return err
			}
			for _, e := range entries {
				signed := ""
				if e.Signer != "" {
					signed = ", signed"
				}
				fmt.Fprintf(c.stdout, "exported %s %s (%s%s)\n", e.Name, orDash(e.Version), e.Integrity, signed)
			}
			fmt.Fprintf(c.stdout, "wrote %s\n", out)
			return nil
		},
	}
}

func (c *cli) bundleImportCommand() *cobra.Command {
	var keepGrants, yes bool
	var signerFiles []string
	cmd := &cobra.Command{
		Use:   "import FILE [--signer KEY.pub] [--grants-from-bundle] [--yes]",
		Short: "Install the packs of a bundle file, offline",
		Long: `import installs every pack in the bundle FILE without using the network.
Before installing anything it checks each archive's digest, its signature
(a pack the bundle records as signed must carry a good signature by the
same key, and the key must be trusted here: the policy's [trust] signers or
--signer KEY.pub), the archive limits, the pack itself, the enterprise
policy, that each pack unpacks to exactly the content its lock entry
records, and that each fits this machine as packs add checks it (a
dependency may come in the same bundle). One failure installs nothing.

The packs get no capabilities unless --grants-from-bundle applies the grants
their lock entries carry (within what each pack asks for). Without a
terminal pass --yes.`,
		Args: nargs(1, 1, "one bundle FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			trust, err := addTrust(a.Policy, args[0], signerFiles)
			if err != nil {
				return err
			}
			staged, err := a.Home.StageBundle(ctx, args[0], packs.StageOptions{}, trust)
			if errors.Is(err, packs.ErrUntrustedSigner) {
				return exitWith(exitDenied, fmt.Errorf("bundle import: %s: if you trust that key, pass --signer KEY.pub", strings.TrimPrefix(err.Error(), "packs: ")))
			}
			if err != nil {
				return err
			}
			defer func() {
				for _, p := range staged {
					p.Staged.Discard()
				}
			}()
			for _, p := range staged {
				ref := p.Staged.Ref()
				if err := a.Policy.Blocked(ref); err != nil {
					return exitWith(exitDenied, fmt.Errorf("bundle import: %s is blocked by policy %s: %s: nothing was installed", ref.Name, a.Policy.Source(), blockReason(a.Policy, ref)))
				}
			}
			// Each pack must fit this machine; a dependency may come with it
			// in the bundle.
			var together []packs.Installed
			for _, p := range staged {
				in := packs.Installed{Name: p.Staged.Name()}
				if m := p.Staged.Pack.Manifest; m != nil {
					in.ID, in.Version = m.ID, m.Version
				}
				together = append(together, in)
			}
			for _, p := range staged {
				if err := c.refuseMisfit(c.stderr, "bundle import", p.Staged.Pack, a.Home.Dir(), together...); err != nil {
					return fmt.Errorf("%w: nothing was installed", err)
				}
			}
			if !c.interactive && !yes {
				return usageError("bundle import: nobody can answer here (no terminal), so nothing was installed: pass --yes")
			}
			if c.interactive && !yes {
				for _, p := range staged {
					showRequest(c.stdout, p.Staged, p.Staged.Pack.Request(), nil, capability.Report{}, a.Policy.Source())
				}
				ok, err := c.ask(fmt.Sprintf("Install %s?", plural(len(staged), "pack")), true)
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("bundle import: nothing installed: you declined")
				}
			}
			hooks := a.Installed
			for _, p := range staged {
				var grants []capability.UserGrant
				if keepGrants {
					grants = capability.FromLock(p.Entry.Capabilities)
				}
				a.Installed = append(hooks[:len(hooks):len(hooks)], compileHook(a, c.stderr), grantsHook(a, grants))
				e, err := a.InstallGrants(ctx, p.Staged, grants)
				if err != nil {
					return err
				}
				signed := ""
				if e.Signer != "" {
					signed = ", signed by " + e.Signer
				}
				fmt.Fprintf(c.stdout, "installed %s %s (%s%s)\n", e.Name, orDash(e.Version), e.Integrity, signed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&keepGrants, "grants-from-bundle", false, "grant what each pack's lock entry in the bundle grants")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "install without asking")
	cmd.Flags().StringArrayVar(&signerFiles, "signer", nil, "trust signatures by this SSH public key file (repeatable)")
	return cmd
}
