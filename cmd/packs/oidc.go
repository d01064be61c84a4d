package main

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/secrets"
)

// The secret store's names for packs' client at the OIDC issuer.
const (
	oidcClientIDSecret     = "oidc-client-id"
	oidcClientSecretSecret = "oidc-client-secret"
)

// oidcFlags are the sign-in flags of packs serve and packs mcp --http.
type oidcFlags struct {
	issuer, idFile, secretFile string
}

func (o *oidcFlags) add(f *pflag.FlagSet) {
	f.StringVar(&o.issuer, "oidc-issuer", "", "let people sign in at this OpenID issuer (URL); roles from the policy's [roles]")
	f.StringVar(&o.idFile, "oidc-client-id-file", "", "file holding packs' client id at the issuer (default: the secret "+oidcClientIDSecret+")")
	f.StringVar(&o.secretFile, "oidc-client-secret-file", "", "file holding the client secret (default: the secret "+oidcClientSecretSecret+"; none for a public client)")
}

// provider returns the OIDC provider the flags name, nil without
// --oidc-issuer. The client id and secret come from the files named, else
// from the secret store (packs secret set oidc-client-id).
func (o *oidcFlags) provider(ctx context.Context, a *app.App) (*identity.Provider, error) {
	if o.issuer == "" {
		if o.idFile != "" || o.secretFile != "" {
			return nil, usageError("--oidc-client-id-file and --oidc-client-secret-file need --oidc-issuer URL")
		}
		return nil, nil
	}
	store := secrets.Open(a.Home.Dir())
	read := func(file, name string) (string, error) {
		if file != "" {
			b, err := os.ReadFile(file)
			if err != nil {
				return "", usageError("read %s: %v", file, err)
			}
			return strings.TrimSpace(string(b)), nil
		}
		v, _, err := store.Lookup(name)
		return strings.TrimSpace(string(v)), err
	}
	id, err := read(o.idFile, oidcClientIDSecret)
	if err != nil {
		return nil, err
	}
	secret, err := read(o.secretFile, oidcClientSecretSecret)
	if err != nil {
		return nil, err
	}
	return identity.New(ctx, identity.Config{Issuer: o.issuer, ClientID: id, ClientSecret: secret, Roles: a.Policy.Roles()})
}
