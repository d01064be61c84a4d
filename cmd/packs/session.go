package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/runtime"
)

// openSession opens the application and builds what a chat session needs,
// for the commands that run sessions: packs chat, packs mcp, packs serve.
// The built-in packs are installed (or updated) first. The returned func
// closes both, the session's components first.
func (c *cli) openSession(ctx context.Context) (*app.App, chat.Deps, func(), error) {
	a, err := c.openWith(ctx, true)
	if err != nil {
		return nil, chat.Deps{}, nil, err
	}
	deps, closeDeps, err := c.sessionDeps(ctx, a)
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
// application: the runtime, the audit log, and the policy the App loaded.
// The returned func closes what it opened.
func (c *cli) sessionDeps(ctx context.Context, a *app.App) (chat.Deps, func(), error) {
	log, err := a.OpenAudit(ctx)
	if err != nil {
		return chat.Deps{}, nil, err
	}
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir(), Logger: a.Logger, Recorder: log})
	if err != nil {
		log.Close()
		return chat.Deps{}, nil, err
	}
	pl, err := app.NewPipeline(rt, a.DB, a.Home, a.Policy, log, c.getenv, &c.own)
	if err != nil {
		rt.Close(context.WithoutCancel(ctx))
		log.Close()
		return chat.Deps{}, nil, err
	}
	// Installed packs first, then the skills used in place, from the
	// folders discovered from here (docs/inplace.md).
	wd, _ := os.Getwd()
	catalog := chat.Catalogs{chat.HomeCatalog{Home: a.Home, DB: a.DB}, app.InPlaceCatalog{App: a, WorkDir: wd}}
	deps := chat.Deps{
		Store: a.DB, Catalog: catalog, Pipeline: pl,
		Workspaces: a.Home.WorkspacesDir(), Logger: a.Logger,
	}
	return deps, func() {
		rt.Close(context.WithoutCancel(ctx))
		log.Close()
	}, nil
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
