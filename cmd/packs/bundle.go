package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
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
			signers, err := readSigners(signerFiles)
			if err != nil {
				return err
			}
			consent := app.ConsentFunc(func(_ context.Context, o app.Offer) ([]capability.UserGrant, error) {
				if !c.interactive && !yes {
					return nil, usageError("bundle import: nobody can answer here (no terminal), so nothing was installed: pass --yes")
				}
				if c.interactive && !yes {
					showRequest(c.stdout, o.Staged, o.Request, o.PreApproved, capability.Report{}, a.Policy.Source())
					ok, err := c.ask(fmt.Sprintf("Install %s?", o.Staged.Name()), true)
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, fmt.Errorf("bundle import: %w: you declined %s, so nothing was installed", app.ErrDeclined, o.Staged.Name())
					}
				}
				if keepGrants {
					return o.Bundled, nil
				}
				return nil, nil
			})
			a.Installed = append(a.Installed, compileHook(a, c.stderr))
			res, err := a.InstallBundle(ctx, args[0], app.InstallRequest{Signers: signers, Consent: consent, By: "packs bundle import"})
			if err != nil {
				stays := "nothing was installed"
				if len(res) > 0 {
					stays = "" // a commit failed after others succeeded: they stay
				}
				return c.installError("bundle import", args[0], a, err, stays)
			}
			for _, r := range res {
				e := r.Entry
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
