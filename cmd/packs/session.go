package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/telemetry"
)

// openSession opens the application and builds what a chat session needs,
// for the commands that run sessions: packs chat, packs mcp, packs serve.
// The built-in packs are installed (or updated) first. The returned func
// closes both, the session's components first.
func (c *cli) openSession(ctx context.Context, m *telemetry.Metrics) (*app.App, chat.Deps, func(), error) {
	a, err := c.openWith(ctx, true)
	if err != nil {
		return nil, chat.Deps{}, nil, err
	}
	deps, closeDeps, err := c.sessionDeps(ctx, a, m)
	if err != nil {
		a.Close()
		return nil, chat.Deps{}, nil, err
	}
	return a, deps, func() {
		closeDeps()
		a.Close()
	}, nil
}

// sessionDeps builds the components a chat session needs from the open
// application: its pipeline (app.OpenPipeline), over the policy the App
// loaded, counting its calls in m when m is set. The returned func closes
// what it opened.
func (c *cli) sessionDeps(ctx context.Context, a *app.App, m *telemetry.Metrics) (chat.Deps, func(), error) {
	pl, release, err := a.OpenPipeline(ctx, app.PipelineOptions{Own: &c.own, Metrics: m, Version: version()})
	if err != nil {
		return chat.Deps{}, nil, err
	}
	// Installed packs first, then the skills used in place, from the
	// folders discovered from here (docs/inplace.md).
	catalog := chat.Catalogs{chat.HomeCatalog{Home: a.Home, DB: a.DB}, app.InPlaceCatalog{App: a, WorkDir: mustGetwd()}}
	deps := chat.Deps{
		Store: a.DB, Catalog: catalog, Pipeline: pl,
		Workspaces: a.Home.WorkspacesDir(), Logger: a.Logger,
	}
	return deps, release, nil
}

// readToken reads the token an HTTP server requires (packs mcp --http,
// packs serve) from file, else from the environment variable env. A token
// is never a flag value: those show in ps.
func (c *cli) readToken(env, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(c.getenv(env)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("packs: --token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("packs: --token-file %s is empty: put the token in it", file)
	}
	return token, nil
}
