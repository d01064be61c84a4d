package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

func (c *cli) packCommand() *cobra.Command {
	var output, key string
	cmd := &cobra.Command{
		Use:   "pack DIR [--output FILE] [--sign KEY]",
		Short: "Write a pack folder as a reproducible .tar.gz",
		Long: `pack validates the pack folder DIR and writes it as a .tar.gz whose bytes
depend only on the pack's content: entries sorted, under one folder named
after the pack, with fixed times, owners and modes (0755 for folders and
executables, 0644 otherwise), and a gzip header without name or time. It
holds what the pack ships: no .git folders and nothing the pack's root
.gitignore or .packignore excludes, the same files packs add installs. Packing the same content anywhere gives the same
file, so anyone can check a published archive against its source.

The archive goes to --output (default NAME.tar.gz in the current folder).
pack prints its digest: pin it in a URL as https://…/NAME.tar.gz#sha256=HEX.

--sign KEY also signs it with the OpenSSH private key KEY, as packs sign
does, writing FILE.sig.`,
		Args: nargs(1, 1, "one pack folder DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := packs.Load(args[0], packs.LoadOptions{})
			var le *packs.LoadError
			if errors.As(err, &le) {
				for _, f := range le.Findings {
					fmt.Fprintln(c.stderr, f.String())
				}
				return fmt.Errorf("pack: %s has errors: fix them (packs validate shows them) and run packs pack again", args[0])
			}
			if err != nil {
				return err
			}
			if output == "" {
				output = p.Name + ".tar.gz"
			}
			digest, err := writeArchive(args[0], output)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote %s\n%s\n", output, digest)
			if key != "" {
				sig, err := signFile(output, key)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "signed %s\n", sig)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "the archive to write (default NAME.tar.gz)")
	cmd.Flags().StringVar(&key, "sign", "", "sign the archive with this OpenSSH private key")
	return cmd
}

// writeArchive packs dir into output through a temporary file in the same
// folder, so a failure never leaves half an archive under its name.
func writeArchive(dir, output string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("pack: %w", err)
	}
	digest, err := dist.PackArchive(dir, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), output)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return digest, nil
}
