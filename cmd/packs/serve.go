package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/httpguard"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/telemetry"
	"github.com/packs-run/packs/internal/web"
)

// serveTokenEnv holds the token for packs serve when no --token-file is
// given. A token is never a flag value: those show in ps.
const serveTokenEnv = tokenEnv

// howToConfigure is what the web app shows when no model is configured.
const howToConfigure = `Or put provider, base_url and model in the [llm] table of <home>/config.toml (PACKS_PROVIDER, PACKS_BASE_URL and PACKS_MODEL work too), then restart packs serve with the same home.`

func (c *cli) serveCommand() *cobra.Command {
	var (
		addr        string
		allowHosts  []string
		tokenFile   string
		metricsAddr string
		flags       llm.Config
		oidc        oidcFlags
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr ADDR]",
		Short: "Serve the web app and HTTP API: chat, tool cards, packs, audit",
		Long: `packs serve runs the local web app at http://ADDR (default ` + web.DefaultAddr + `):
a chat with any configured model, tool cards you approve with a click (Run,
Deny, Always for this chat), the installed packs with what they ask for and
hold, and the audit trail with chain verification. The JSON API is under /v1.

Every request to the API but GET /v1/status needs a token, on loopback too:
a tool allowed to reach 127.0.0.1 must not change grants or approve calls.
packs serve makes a fresh token at each start and prints the address with
it (http://127.0.0.1:7777/?token=...); opening that address puts the token
in a cookie and drops it from the address. Scripts send it as
"Authorization: Bearer TOKEN". To choose the token, set $` + serveTokenEnv + `,
pass --token-file FILE, or put it in <home>/token (mode 0600).

With --oidc-issuer URL, people sign in at that OpenID issuer instead: the
web app at /auth/login (authorization code with PKCE), API clients with a
bearer JWT the issuer signed for packs' client id. The policy's [roles]
maps their claims to admin, member and auditor, and each person's chats
and calls are their own. The client id and secret come from the secret
store (packs secret set oidc-client-id, oidc-client-secret) or from
--oidc-client-id-file and --oidc-client-secret-file. The token still
admits its holder, in every role.

It listens on loopback unless ADDR names another host. The model is set on
the app's Settings page (saved in <home>/model.json, its API key in the
secret store), and applies at once. Flags, PACKS_PROVIDER, PACKS_BASE_URL,
PACKS_MODEL and the API key variables win over it, and the [llm] table of
<home>/config.toml lies under it, as for packs chat. Without a model, tools
still run by hand.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			metrics := newMetrics()
			a, deps, closeSession, err := c.openSession(ctx, metrics)
			if err != nil {
				return err
			}
			defer closeSession()
			if err := watchQueue(metrics, a); err != nil {
				return err
			}
			a.Installed = append(a.Installed, precompileHook(a))
			configPath := filepath.Join(a.Home.Dir(), configFile)
			resolve := func(saved llm.Config) (llm.Config, []llm.Override, error) {
				return llm.ResolveSaved(configPath, saved, c.getenv, flags)
			}
			model, err := c.serveModel(a.Home.Dir(), configPath, flags, resolve)
			if err != nil {
				return err
			}
			token, err := c.serverToken(a.Home.Dir(), tokenFile, serveTokenEnv)
			if err != nil {
				return err
			}
			signIn, err := oidc.provider(ctx, a)
			if err != nil {
				return err
			}
			srv, err := web.New(web.Config{App: a, Chat: deps, Model: model, Addr: addr, AllowedHosts: allowHosts, Token: token,
				Version: version(), Logger: a.Logger, HowToConfigure: howToConfigure, ResolveModel: resolve,
				InPlace: &app.InPlaceCatalog{App: a, WorkDir: mustGetwd()}, OIDC: signIn, Metrics: metrics.Handler()})
			if err != nil {
				return err
			}
			ln, err := srv.Listen()
			if errors.Is(err, web.ErrBadAddr) {
				return usageError("serve: %v", err)
			}
			if err != nil {
				return err
			}
			c.own.Add(ln.Addr())
			hosts, err := httpguard.New(ln.Addr().String(), allowHosts)
			if err != nil {
				ln.Close()
				return usageError("serve: %v", err)
			}
			reach := hosts.Reach()
			what := "no model configured"
			if model.Provider != nil {
				what = "model " + model.Describe
			}
			page := func(hostport string) string { return "http://" + hostport + "/?token=" + url.QueryEscape(token) }
			// The warning comes first: the address line is the last one a
			// person (or a script waiting for it) reads before the server runs.
			ctx, stop := context.WithCancel(ctx)
			defer stop()
			waitMetrics, err := c.serveMetrics(ctx, metricsAddr, metrics)
			if err != nil {
				ln.Close()
				return err
			}
			sayReach(c.stderr, reach, "--addr", page)
			if signIn != nil {
				fmt.Fprintf(c.stderr, "packs: people sign in at %s: http://%s/auth/login\n", signIn.Issuer(), reach.OpenAt[0])
			}
			fmt.Fprintf(c.stderr, "packs: serving the web app at %s (%s; Ctrl-C to stop)\n", page(reach.OpenAt[0]), what)
			err = srv.Serve(ctx, ln)
			stop()
			return errors.Join(err, waitMetrics())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", web.DefaultAddr, "listen on ADDR (host:port; a bare :port means 127.0.0.1)")
	f.StringArrayVar(&allowHosts, "allow-host", nil, "also answer to this Host header (a name or IP a proxy forwards); repeatable")
	f.StringVar(&tokenFile, "token-file", "", "file holding the token clients must send (default $"+serveTokenEnv+", else <home>/token, else a fresh one)")
	f.StringVar(&metricsAddr, "metrics-addr", "", "also serve Prometheus metrics at http://ADDR/metrics without the token (a bare :port means 127.0.0.1); /metrics on --addr needs the token")
	f.StringVar(&flags.Provider, "provider", "", "openai (Chat Completions: Ollama, llama.cpp, vLLM, OpenAI) or anthropic")
	f.StringVar(&flags.BaseURL, "base-url", "", "the provider's base URL")
	f.StringVar(&flags.Model, "model", "", "the model name")
	f.BoolVar(&flags.NoTools, "no-tools", false, "the model cannot call tools")
	oidc.add(f)
	return cmd
}

// serveModel resolves the model as packs chat does, with the settings
// saved on the web app's Settings page laid over the config file, but only
// when one was asked for (a flag, an environment variable, the config file
// or saved settings): the web app then says how to set one, rather than
// failing on a missing Ollama. Saved settings that no longer make a model
// leave the server without one, with a warning: the Settings page shows
// why and mends them.
func (c *cli) serveModel(home, configPath string, flags llm.Config, resolve func(llm.Config) (llm.Config, []llm.Override, error)) (web.Model, error) {
	_, statErr := os.Stat(configPath)
	asked := flags != (llm.Config{}) || statErr == nil
	for _, k := range []string{"PACKS_PROVIDER", "PACKS_BASE_URL", "PACKS_MODEL"} {
		asked = asked || c.getenv(k) != ""
	}
	saved, hasSaved, savedErr := web.LoadSavedModel(home)
	if !asked && !hasSaved {
		if savedErr != nil {
			fmt.Fprintf(c.stderr, "packs: warning: %v\n", savedErr)
		}
		return web.Model{}, nil
	}
	cfg, _, err := resolve(saved)
	if err == nil {
		var p llm.Provider
		if p, err = llm.New(cfg); err == nil {
			return web.Model{Provider: p, Describe: web.DescribeModel(cfg), NoTools: cfg.NoTools, Config: cfg}, nil
		}
	}
	if asked {
		return web.Model{}, usageError("serve: %v", err)
	}
	fmt.Fprintf(c.stderr, "packs: warning: the model saved on the Settings page is not usable, starting without one: %v\n", err)
	return web.Model{}, nil
}

// sayReach warns, for a server that listens beyond loopback (packs serve,
// packs mcp --http), that others can reach it, and lists the other
// addresses it can be opened at (page makes the address to print).
func sayReach(w io.Writer, reach httpguard.Reach, flag string, page func(hostport string) string) {
	if !reach.Beyond {
		return
	}
	fmt.Fprintf(w, "packs: warning: listening on %s, beyond this machine: whoever can reach it and holds the token acts as you (%s 127.0.0.1:PORT keeps it on this machine)\n", reach.Bound, flag)
	if len(reach.OpenAt) == 1 {
		fmt.Fprintf(w, "packs: other machines are refused until you name the address they use: --allow-host NAME\n")
	}
	for _, a := range reach.OpenAt[1:] {
		fmt.Fprintf(w, "packs: also at %s\n", page(a))
	}
}

// newMetrics is the metrics of packs serve and packs mcp --http: the
// pipeline's calls (app.PipelineOptions.Metrics), and the approval queue
// of a's packs.db.
func newMetrics() *telemetry.Metrics { return telemetry.NewMetrics() }

// watchQueue adds a's approval queue to m.
func watchQueue(m *telemetry.Metrics, a *app.App) error {
	return m.WatchQueue(func(ctx context.Context) (int, error) {
		w, err := a.DB.WaitingCalls(ctx, time.Now())
		return len(w), err
	})
}

// serveMetrics serves m alone at http://addr/metrics, without the token,
// when addr is set (--metrics-addr), until ctx is done; wait waits for it
// to stop. A bare :port is loopback. Tools never connect to it (c.own).
func (c *cli) serveMetrics(ctx context.Context, addr string, m *telemetry.Metrics) (wait func() error, err error) {
	if addr == "" {
		return func() error { return nil }, nil
	}
	bind, err := httpguard.ListenAddr(addr, "")
	if err != nil {
		return nil, usageError("--metrics-addr: %v", err)
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	c.own.Add(ln.Addr())
	fmt.Fprintf(c.stderr, "packs: serving metrics at http://%s/metrics, without the token: whoever reaches that address reads the call counts\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- telemetry.ServeMetrics(ctx, ln, m.Handler()) }()
	return func() error { return <-done }, nil
}
