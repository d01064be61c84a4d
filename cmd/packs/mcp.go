package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/mcpserver"
	"github.com/packs-run/packs/internal/telemetry"
)

// mcpTokenEnv holds the bearer token for `packs mcp --http` when no
// --token-file is given; $PACKS_TOKEN is read next. A token is never a flag
// value: those show in ps.
const mcpTokenEnv = "PACKS_MCP_TOKEN"

func (c *cli) mcpCommand() *cobra.Command {
	var (
		httpAddr    string
		allowHosts  []string
		tokenFile   string
		only        []string
		timeout     time.Duration
		flat        []string
		metricsAddr string
		oidc        oidcFlags
	)
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR] [--tools PACK,...]",
		Short: "Serve the installed packs to MCP clients (stdio, or Streamable HTTP with --http)",
		Long: `packs mcp serves the installed packs, then the packs used in place from the
skills folders (see packs list), to any MCP client: over stdio by default
(the client starts packs mcp), or over Streamable HTTP at http://ADDR/mcp with
--http. Each client session is a chat: the base tools open_docs, read_file and
enable_tools, then each enabled pack's tools as <pack>__<tool>; pack files as
pack://<pack>/<path> resources; one prompt per pack. With --tools PACK,...
those packs' tools are listed from the start, without enable_tools, under
their own names (as <pack>__<tool> where a name would be ambiguous), for
clients that do not reload their tool list. Every call is approved
and audited: by the enterprise policy, through the client's elicitation form,
or, for a client that cannot elicit (Claude Desktop), by you elsewhere: the
call waits until you run packs approve (or decide it in the web app, packs
serve) or --approval-timeout passes, which denies it. --approval-timeout 0
denies such calls at once unless the policy approves them.

Over HTTP every request needs a bearer token, on loopback too: a tool
allowed to reach 127.0.0.1 must not open its own session and approve its own
calls. packs mcp makes a fresh token at each start and prints it; clients
send "Authorization: Bearer TOKEN". To choose the token (a client's config
keeps it across restarts), set $` + mcpTokenEnv + ` or $` + tokenEnv + `, pass
--token-file FILE, or put it in <home>/token (mode 0600). The server listens
on loopback unless ADDR names another host.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("mcp: unexpected argument %q: packs mcp takes only flags (see packs mcp --help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if timeout < 0 {
				return usageError("mcp: --approval-timeout %s: want a duration of 0 or more", timeout)
			}
			if timeout == 0 {
				timeout = -1 // the queue is off
			}
			// The built-in packs install in prepare: over stdio while the
			// client's first messages are answered (mcpserver.Config.Prepare).
			a, err := c.openWith(ctx, false)
			if err != nil {
				return err
			}
			defer a.Close()
			if metricsAddr != "" && httpAddr == "" {
				return usageError("mcp: --metrics-addr goes with --http")
			}
			var metrics *telemetry.Metrics
			if httpAddr != "" {
				metrics = newMetrics()
				if err := watchQueue(metrics, a); err != nil {
					return err
				}
			}
			deps, closeDeps, err := c.sessionDeps(ctx, a, metrics)
			if err != nil {
				return err
			}
			defer closeDeps()
			prepare := func(ctx context.Context) ([]string, error) {
				if err := a.EnsureBuiltins(ctx); err != nil {
					return nil, err
				}
				attach, err := servedPacks(ctx, a, deps.Pipeline.Policy(), only)
				if err != nil {
					return nil, err
				}
				for _, name := range flat {
					if !slices.Contains(attach, name) {
						return nil, usageError("mcp: --tools %s: not a served pack: see packs list (and --pack)", name)
					}
				}
				return attach, nil
			}
			cfg := mcpserver.Config{Chat: deps, Tools: flat, Version: version(), Logger: a.Logger, ApprovalTimeout: timeout}
			if httpAddr == "" && oidc.issuer != "" {
				return usageError("mcp: --oidc-issuer signs people in over HTTP: add --http ADDR")
			}
			if httpAddr == "" {
				cfg.Prepare = prepare
				srv, err := mcpserver.New(cfg)
				if err != nil {
					return err
				}
				return srv.ServeStdio(ctx, c.stdin, c.rawStdout)
			}
			if cfg.Attach, err = prepare(ctx); err != nil {
				return err
			}
			srv, err := mcpserver.New(cfg)
			if err != nil {
				return err
			}
			token, err := c.serverToken(a.Home.Dir(), tokenFile, mcpTokenEnv, tokenEnv)
			if err != nil {
				return err
			}
			signIn, err := oidc.provider(ctx, a)
			if err != nil {
				return err
			}
			h, err := srv.Listen(mcpserver.HTTPConfig{Addr: httpAddr, AllowedHosts: allowHosts, Token: token, OIDC: signIn, Metrics: metrics.Handler()})
			if err != nil {
				return err
			}
			c.own.Add(h.Addr())
			fmt.Fprintf(c.stderr, "packs: serving %d pack(s) over MCP at %s (Ctrl-C to stop)\n", len(cfg.Attach), h.URL())
			fmt.Fprintf(c.stderr, "packs: clients must send the header \"Authorization: Bearer %s\"; for Claude Code: claude mcp add --transport http packs %s --header \"Authorization: Bearer %s\"\n", token, h.URL(), token)
			sayReach(c.stderr, h.Reach(), "--http", func(hostport string) string { return "http://" + hostport + mcpserver.MCPPath })
			ctx, stop := context.WithCancel(ctx)
			defer stop()
			waitMetrics, err := c.serveMetrics(ctx, metricsAddr, metrics)
			if err != nil {
				return err
			}
			err = h.Serve(ctx)
			stop()
			return errors.Join(err, waitMetrics())
		},
	}
	f := cmd.Flags()
	oidc.add(f)
	f.StringVar(&httpAddr, "http", "", "serve Streamable HTTP on ADDR (host:port; a bare :port means 127.0.0.1), e.g. 127.0.0.1:7777")
	f.StringArrayVar(&allowHosts, "allow-host", nil, "also accept this Host header (a name or IP, e.g. one a proxy forwards); repeatable")
	f.StringVar(&tokenFile, "token-file", "", "file holding the bearer token HTTP clients must send (default $"+mcpTokenEnv+" or $"+tokenEnv+", else <home>/token, else a fresh one)")
	f.DurationVar(&timeout, "approval-timeout", approve.DefaultTimeout, "how long a call of a client that cannot elicit waits for packs approve or the web app before it is denied (0: deny at once)")
	f.StringSliceVar(&flat, "tools", nil, "list these packs' tools from the start, without enable_tools (flat mode); comma-separated or repeatable")
	f.StringVar(&metricsAddr, "metrics-addr", "", "with --http: also serve Prometheus metrics at http://ADDR/metrics without the token (a bare :port means 127.0.0.1); /metrics on --http needs the token")
	f.StringArrayVar(&only, "pack", nil, "serve only this installed pack; repeatable (default: every installed pack)")
	return cmd
}

// servedPacks lists the installed packs a session attaches: each that is
// intact and not blocked by the policy, or only those named. A pack left
// out is reported on stderr through the logger.
func servedPacks(ctx context.Context, a *app.App, pol *capability.Policy, only []string) ([]string, error) {
	installed, err := a.Packs(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ip := range installed {
		name := ip.Entry.Name
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		switch {
		case ip.Status != app.StatusOK || ip.Pack == nil:
			a.Logger.Warn("packs mcp: pack not served: its files no longer match packs.lock; reinstall it with packs add", "pack", name, "status", ip.Status)
		case pol.Blocked(ip.Entry.Ref()) != nil:
			a.Logger.Warn("packs mcp: pack not served: the policy blocks it", "pack", name)
		case ip.Disabled:
			a.Logger.Warn("packs mcp: pack not served: it is disabled; packs enable turns it back on", "pack", name)
		case ip.Pack.Attachable() != nil:
			// A coming_soon pack (the built-in research, sandbox) has
			// nothing to serve yet.
			a.Logger.Debug("packs mcp: pack not served: it is coming soon", "pack", name)
		default:
			out = append(out, name)
		}
	}
	// Then the packs used in place, from the skills folders: served
	// beside the installed ones, their tools and scripts still needing
	// the person's grants.
	found, _, err := a.InPlacePacks(ctx, mustGetwd(), nil)
	if err != nil {
		return nil, err
	}
	var inPlace []string
	for _, p := range found {
		if p.HiddenBy != "" || len(only) > 0 && !slices.Contains(only, p.Name) {
			continue
		}
		if err := p.Attachable(pol); err != nil {
			a.Logger.Warn("packs mcp: pack used in place not served", "pack", p.Name, "dir", p.Dir, "err", err)
			continue
		}
		out = append(out, p.Name)
		inPlace = append(inPlace, p.Name)
	}
	for _, name := range only {
		if !slices.Contains(out, name) && !slices.ContainsFunc(installed, func(ip app.InstalledPack) bool { return ip.Entry.Name == name }) {
			return nil, usageError("packs mcp: --pack %s: no such installed pack, nor one in a skills folder: see packs list", name)
		}
	}
	if len(inPlace) > 0 {
		a.Logger.Info("packs mcp: serving packs used in place", "packs", inPlace)
	}
	return out, nil
}
