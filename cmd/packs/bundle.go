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

// bundleJSON is packs bundle export --json and import --json: the bundle
// file and each pack written to it or installed from it.
type bundleJSON struct {
	File  string     `json:"file"`
	Packs []packJSON `json:"packs"`
}

func (c *cli) bundleExportCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "export FILE [NAME...] [--json]",
		Short: "Write installed packs (all, or those named) to one bundle file",
		Long: `export writes the installed packs NAME... (all when none is named) to FILE:
for each, the archive it was installed from (or its folder packed as packs
pack does), its SSH signature when it was installed signed, and its
packs.lock entry with the grants it has here. A pack whose files were
modified since it was installed is refused.

--json prints {"file": FILE, "packs": [...]}, each pack as packs list
--json shows it.`,
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
			if asJSON {
				res := bundleJSON{File: out, Packs: []packJSON{}}
				for _, e := range entries {
					ip, err := a.Pack(ctx, e.Name)
					if err != nil {
						ip = app.InstalledPack{Entry: e, Status: app.StatusOK}
					}
					res.Packs = append(res.Packs, toJSON(ip))
				}
				return writeJSON(c.stdout, res)
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was written as JSON")
	return cmd
}

func (c *cli) bundleImportCommand() *cobra.Command {
	var keepGrants, yes, asJSON bool
	var signerFiles []string
	cmd := &cobra.Command{
		Use:   "import FILE [--signer KEY.pub] [--grants-from-bundle] [--yes] [--json]",
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
terminal pass --yes.

--json prints {"file": FILE, "packs": [...]}, each installed pack as packs
list --json shows it; what a question shows goes to stderr then.`,
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
					show := c.stdout
					if asJSON {
						show = c.stderr
					}
					showRequest(show, o.Staged, o.Request, o.PreApproved, capability.Report{}, a.Policy.Source())
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
			if asJSON {
				out := bundleJSON{File: args[0], Packs: []packJSON{}}
				for _, r := range res {
					out.Packs = append(out.Packs, toJSON(app.InstalledPack{Entry: r.Entry, Status: app.StatusOK, Pack: r.Pack}))
				}
				return writeJSON(c.stdout, out)
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was installed as JSON")
	cmd.Flags().StringArrayVar(&signerFiles, "signer", nil, "trust signatures by this SSH public key file (repeatable)")
	return cmd
}
