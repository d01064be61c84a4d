package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

func (c *cli) publishCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publish oci://REGISTRY/REPO:TAG PACK",
		Short: "Push a pack to an OCI registry",
		Long: `publish pushes PACK to an OCI registry as a pack artifact (an OCI 1.1 image
manifest with artifactType application/vnd.packs.pack.v1, one layer of type
application/vnd.packs.pack.archive.v1.tar+gzip holding the archive and, when
PACK.sig exists, one of type application/vnd.packs.pack.signature.v1.sshsig
holding its SSH signature) and tags it. PACK is an archive (as packs pack
writes it, signed with packs sign) or a pack folder, packed on the fly. It
prints the manifest digest: install exactly that with
packs add oci://REGISTRY/REPO@sha256:HEX.

A registry on loopback (localhost, 127.0.0.1, ::1) is spoken to over plain
HTTP; any other over HTTPS. Credentials are not supported yet.`,
		Args: nargs(2, 2, "an oci:// reference and a PACK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, pack := args[0], args[1]
			fi, err := os.Stat(pack)
			if err != nil {
				return fmt.Errorf("publish: %w", err)
			}
			var archive, sig []byte
			if fi.IsDir() {
				var b bytes.Buffer
				if _, err := dist.PackArchive(pack, &b); err != nil {
					var le *packs.LoadError
					if errors.As(err, &le) {
						for _, f := range le.Findings {
							fmt.Fprintln(c.stderr, f.String())
						}
						return fmt.Errorf("publish: %s has errors: fix them (packs validate shows them)", pack)
					}
					return err
				}
				archive = b.Bytes()
			} else {
				if archive, err = os.ReadFile(pack); err != nil {
					return fmt.Errorf("publish: %w", err)
				}
				if sig, err = os.ReadFile(pack + dist.SignatureExt); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("publish: %w", err)
				}
			}
			digest, err := dist.PublishOCI(cmd.Context(), ref, archive, sig, nil)
			if err != nil {
				return err
			}
			signed := "unsigned"
			if sig != nil {
				signed = "signed"
			}
			fmt.Fprintf(c.stdout, "published %s (%s)\n%s\n", ref, signed, digest)
			return nil
		},
	}
	return cmd
}
