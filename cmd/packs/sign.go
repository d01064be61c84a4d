package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/dist"
)

func (c *cli) signCommand() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "sign FILE --key KEY",
		Short: "Sign a pack archive with an SSH key",
		Long: `sign writes FILE.sig, an SSH signature of the pack archive FILE in the
namespace "packs", made with the OpenSSH private key KEY. It is the same
file as

  ssh-keygen -Y sign -n packs -f KEY FILE

writes (use that for a key with a passphrase or in an agent), and anyone
can check it without packs:

  ssh-keygen -Y verify -f allowed_signers -I SIGNER -n packs -s FILE.sig < FILE

packs add checks FILE.sig when it installs FILE (or FILE's URL plus .sig):
the signer must be trusted, by the enterprise policy's [trust] signers or
by packs add --signer KEY.pub.`,
		Args: nargs(1, 1, "one archive FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return usageError("sign: name the private key with --key KEY (an OpenSSH key, as ssh-keygen makes)")
			}
			sig, err := signFile(args[0], key)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "signed %s\n", sig)
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the OpenSSH private key to sign with")
	return cmd
}

// signFile writes file.sig, signed with the private key at key.
func signFile(file, key string) (string, error) {
	pem, err := os.ReadFile(key)
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	defer f.Close()
	sig, err := dist.SignArchive(f, pem)
	if err != nil {
		return "", err
	}
	out := file + dist.SignatureExt
	if err := os.WriteFile(out, sig, 0o644); err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	return out, nil
}
