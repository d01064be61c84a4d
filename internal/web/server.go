// Package web is the local web app and HTTP API of packs serve: a chat with
// streaming replies (server-sent events), tool cards the person approves
// with a click, the installed packs with what they ask for and hold, and the
// audit trail.
//
// The API is JSON under /v1. Every error is {"error": {"code", "message",
// "status"}}. The server binds to loopback unless told otherwise and always
// has a token: every /v1 request but the public ones (GET /v1/status and
// GET /v1/openapi.json) must carry it (as a bearer token, or in the cookie
// that opening the printed address sets), on loopback too, so that a tool
// allowed to reach 127.0.0.1 cannot change grants or approvals. With an
// OIDC issuer (Config.OIDC), people sign in instead (identity.go): each
// route declares its roles, and a chat is its owner's. It answers only to allowlisted Host and Origin
// headers (DNS rebinding), and refuses cross-origin state changes (CSRF).
// The UI is plain HTML, CSS and JavaScript embedded in the binary.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/httpguard"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/llm"
)

//go:embed assets
var assets embed.FS

// DefaultAddr is where packs serve listens without --addr: loopback only.
const DefaultAddr = "127.0.0.1:7777"

// MetricsPath is where Config.Metrics is served.
const MetricsPath = "/metrics"

var (
	// ErrTokenRequired: Config.Token is missing or too weak to guard the
	// API (see httpguard.CheckToken). The server never runs without one.
	ErrTokenRequired = errors.New("web: a token is required")
	// ErrBadAddr: the listen address or an allowed host cannot be parsed.
	// It is httpguard.ErrBadAddr, which the shared guard returns.
	ErrBadAddr = httpguard.ErrBadAddr
	// ErrConfig: a required component is missing from Config.
	ErrConfig = errors.New("web: incomplete configuration")
)

// Model is the language model chats talk to, as configured.
type Model struct {
	Provider llm.Provider // nil: no model is configured
	// Describe says which model it is, for the UI ("openai llama3.2 at
	// http://localhost:11434/v1"). It never holds the API key.
	Describe string
	NoTools  bool // the model cannot call tools
	// Config is what the model was built from, for the Settings page and
	// the agents' default max tokens. Its key is never shown.
	Config llm.Config
}

// Config configures a Server.
type Config struct {
	App   *app.App  // the state directory: packs, packs.db
	Chat  chat.Deps // what each chat session works with
	Model Model     // the model at start; the Settings page can change it
	// ResolveModel lays the settings saved on the Settings page (key
	// included) under packs serve's config file, environment and flags,
	// which win (llm.ResolveSaved), and names what those fix. nil: the
	// saved settings stand alone.
	ResolveModel func(saved llm.Config) (llm.Config, []llm.Override, error)
	// Addr is host:port; a missing host means 127.0.0.1 (DefaultAddr when
	// empty).
	Addr string
	// AllowedHosts are extra Host header names the server answers to, e.g.
	// a reverse proxy's. Loopback names and the bound host always are.
	AllowedHosts []string
	// Token must come with every request but those for the page's files
	// and GET /v1/status: as a bearer token, or in the cookie that opening
	// /?token=TOKEN sets. Required, on loopback too; httpguard.NewToken
	// makes one.
	Token   string
	Version string
	Logger  *slog.Logger
	// HowToConfigure tells the person how to set a model, shown when none is
	// configured. "<home>" in it stands for the state directory and is
	// replaced by its path (only for a request with the token).
	HowToConfigure string
	// Executable is how the person runs packs from where the server was
	// started, for the commands the app shows; empty: found from
	// os.Executable, PATH and the working directory ("bin/packs").
	Executable string
	// MaxWorkspaceFile bounds one file uploaded into a chat's workspace
	// (default 32 MiB).
	MaxWorkspaceFile int64
	// InPlace, when set, lists the packs used in place (found in the
	// skills folders) beside the installed ones, and grants them; Chat's
	// Catalog should serve them too (chat.Catalogs).
	InPlace *app.InPlaceCatalog
	// OIDC, when set, lets people sign in at its issuer: the web app
	// through /auth/login, API clients with a bearer JWT it signed; their
	// roles say what they may do, and each has their own chats. The
	// Token still admits its holder, in every role. nil: the token alone.
	OIDC *identity.Provider
	// Metrics, when set, is served at GET /metrics (Prometheus' text
	// format), behind the token like the API (telemetry.Metrics.Handler).
	Metrics http.Handler
}

// Server is the web app. Build it with New, bind with Listen, run with
// Serve.
type Server struct {
	cfg     Config
	log     *slog.Logger
	static  fs.FS
	pending *approvals
	byHand  byHandChats
	// questions are the tools' questions waiting for the person (questions.go)
	questions *toolQuestions

	// modelMu guards model, which the Settings page swaps (settings.go);
	// saveMu makes one save at a time.
	modelMu sync.RWMutex
	model   Model
	saveMu  sync.Mutex

	mu    sync.Mutex
	chats map[string]*chatState
	base  context.Context // Serve's context: turns end with it
	turns sync.WaitGroup
	reach httpguard.Reach // where the server can be opened, once Handler ran

	// login is the web sign-in (nil without OIDC); its cookies carry the
	// port, like the token's. Set by Handler.
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.App == nil:
		return nil, fmt.Errorf("%w: no application (state directory)", ErrConfig)
	case cfg.Chat.Store == nil || cfg.Chat.Pipeline == nil:
		return nil, fmt.Errorf("%w: no chat dependencies (store, pipeline)", ErrConfig)
	}
	if err := httpguard.CheckToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTokenRequired, err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, log: cfg.Logger, static: static, pending: newApprovals(), questions: newToolQuestions(), chats: map[string]*chatState{}, base: context.Background(),
		model: cfg.Model}, nil
}

// Listen binds the configured address.
func (s *Server) Listen() (net.Listener, error) {
	addr, err := httpguard.ListenAddr(s.cfg.Addr, DefaultAddr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve answers requests on ln until ctx ends, then stops running turns
// (a pending approval is denied), waits for them and returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	h, err := s.Handler(ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.base = tctx
	s.mu.Unlock()
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return tctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		cancel()
		s.turns.Wait()
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
	}
	cancel()
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	err = hs.Shutdown(sctx)
	s.turns.Wait()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	return nil
}

// Handler is the whole app behind its guard, for a server bound at
// boundAddr (host:port): the port and host go into the Host allowlist.
func (s *Server) Handler(boundAddr string) (http.Handler, error) {
	g, err := newGuard(boundAddr, s.cfg.AllowedHosts, s.cfg.Token)
	if err != nil {
		return nil, err
	}
	g.public = map[string]bool{}
	for _, rt := range s.apiRoutes() {
		if rt.roles == public {
			g.public[rt.pattern] = true
		}
	}
	sg := signin{loginCookie: "packs_login_" + strings.TrimPrefix(tokenCookie(boundAddr), "packs_token_"), sessionCookie: sessionCookieName(boundAddr), log: s.log}
	if s.cfg.OIDC != nil {
		sg.login = s.cfg.OIDC.NewLogin()
		g.oidc, g.login, g.session = s.cfg.OIDC, sg.login, sg.sessionCookie
	}
	s.mu.Lock()
	s.reach = g.hosts.Reach()
	s.mu.Unlock()
	return g.wrap(s.routes(sg)), nil
}

// route is one endpoint of the /v1 API: "METHOD /v1/path", as
// http.ServeMux reads it. The OpenAPI document describes exactly these
// (a test checks both ways). roles are who may call it (identity.go):
// public, or any of admin, member and auditor; a route that acts on one
// chat also checks that the chat is the person's (Server.allow).
type route struct {
	pattern string
	roles   identity.Roles
	handler http.HandlerFunc
}

// apiRoutes lists every endpoint of the /v1 API.
func (s *Server) apiRoutes() []route {
	return []route{
		{"GET /v1/status", public, s.status},
		{"GET /v1/openapi.json", public, s.openAPI},
		{"GET /v1/capabilities", people, s.listCapabilities},
		{"GET /v1/capabilities/{id}", people, s.getCapability},
		{"GET /v1/permissions", people, s.listPermissions},
		{"GET /v1/permissions/{id}", people, s.getPermission},

		{"GET /v1/agents", people, s.listAgents}, {"POST /v1/agents", admin, s.createAgent}, // agents.go
		{"GET /v1/agents/{id}", people, s.getAgent}, {"PATCH /v1/agents/{id}", admin, s.updateAgent}, {"DELETE /v1/agents/{id}", admin, s.deleteAgent},

		{"GET /v1/packs", people, s.listPacks},
		{"POST /v1/packs", admin, s.installPack},
		{"GET /v1/packs/{name}", people, s.getPack},
		{"DELETE /v1/packs/{name}", admin, s.removePack}, {"POST /v1/packs/{name}/enable", admin, s.enablePack}, {"POST /v1/packs/{name}/disable", admin, s.disablePack}, // packactions.go
		{"POST /v1/packs/{name}/update", admin, s.updatePack},
		{"POST /v1/packs/{name}/grants", admin, s.grant},
		{"DELETE /v1/packs/{name}/grants/{capability}", admin, s.revoke},
		{"POST /v1/packs/{name}/calls", people, s.runByHand},
		{"GET /v1/policy", admin, s.policy},
		{"GET /v1/review", admin, s.listReview}, {"POST /v1/packs/{name}/grants/{capability}/keep", admin, s.keepGrant}, // review.go

		{"GET /v1/chats", people, s.listChats},
		{"POST /v1/chats", people, s.createChat},
		{"GET /v1/chats/{id}", people, s.getChat},
		{"POST /v1/chats/{id}/packs", people, s.attach},
		{"DELETE /v1/chats/{id}/packs/{pack}", people, s.detach},
		{"POST /v1/chats/{id}/messages", people, s.send},
		{"POST /v1/chats/{id}/stop", people, s.stop},
		{"POST /v1/chats/{id}/calls", people, s.callByHand},
		{"GET /v1/chats/{id}/events", people, s.events},
		{"GET /v1/chats/{id}/artifacts", people, s.listArtifacts},
		{"GET /v1/chats/{id}/files", people, s.listFiles},
		{"POST /v1/chats/{id}/files", people, s.uploadFiles},
		{"GET /v1/chats/{id}/files/{path...}", people, s.file},

		{"GET /v1/invocations", people, s.listPending},
		{"POST /v1/invocations/{id}/approve", people, s.approve},
		{"POST /v1/invocations/{id}/deny", people, s.deny},
		{"POST /v1/invocations/{id}/parameters", people, s.answerParams}, // recipes.go
		{"POST /v1/questions/{id}/answer", people, s.answerQuestion},     // questions.go

		{"GET /v1/settings/model", people, s.getSettings}, {"PUT /v1/settings/model", admin, s.putSettings}, {"POST /v1/settings/model/test", admin, s.testSettings}, // settings.go

		{"GET /v1/audit", admin | auditor, s.audit},
		{"GET /v1/audit/verify", admin | auditor, s.verifyAudit},

		{"GET /v1/queue", people, s.listQueue}, {"POST /v1/queue/{id}/approve", people, s.approveQueued}, {"POST /v1/queue/{id}/deny", people, s.denyQueued}, // queue.go
	}
}

// routes maps every path of the API and the UI.
func (s *Server) routes(sg signin) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.apiRoutes() {
		mux.HandleFunc(rt.pattern, s.allow(rt))
	}
	mux.HandleFunc("GET /auth/login", sg.signIn)
	mux.HandleFunc("GET /auth/callback", sg.signedIn)
	mux.HandleFunc("POST /auth/logout", sg.signOut)
	// /metrics sits outside /v1 where Prometheus looks for it, and needs
	// a credential all the same (guard.go, public), of an admin or an
	// auditor: it counts every pack's calls and denials.
	if s.cfg.Metrics != nil {
		mux.HandleFunc("GET "+MetricsPath, s.allow(route{"GET " + MetricsPath, admin | auditor, s.cfg.Metrics.ServeHTTP}))
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("web: no endpoint %s %s: GET /v1/openapi.json describes the /v1 API", r.Method, r.URL.Path))
	})
	mux.Handle("/", s.ui())
	return mux
}

//go:embed openapi.json
var openAPIDoc []byte

// openAPI serves the OpenAPI 3.1 description of the /v1 API. It is public,
// like the page's own files: it describes the API and holds no data.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(openAPIDoc)
}

// ui serves the embedded assets with a strict content security policy: the
// page runs only its own script, and nothing may frame it.
func (s *Server) ui() http.Handler {
	files := http.FileServerFS(s.static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, codeBadRequest, "web: the app's pages are read with GET")
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; media-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// status tells the UI the version, whether a model is configured and
// whether the request carried the token. It is public, so that the page can
// say how to get in: the state directory is named only with the token.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	type model struct {
		Configured     bool   `json:"configured"`
		Describe       string `json:"describe,omitempty"`
		NoTools        bool   `json:"no_tools"`
		MaxTokens      int    `json:"max_tokens,omitempty"` // what agents default to
		HowToConfigure string `json:"how_to_configure,omitempty"`
		// Commands restart this server with a model: its executable, its
		// home. Only with the token, as they name the home.
		Commands []string `json:"commands,omitempty"`
	}
	cur := s.currentModel()
	m := model{Configured: cur.Provider != nil, NoTools: cur.NoTools}
	if isAuthenticated(r) {
		m.Describe = cur.Describe
		m.MaxTokens = cur.Config.MaxTokens
	}
	if !m.Configured {
		m.HowToConfigure = s.cfg.HowToConfigure
		if isAuthenticated(r) {
			m.HowToConfigure = strings.ReplaceAll(m.HowToConfigure, "<home>", s.cfg.App.Home.Dir())
			m.Commands = s.serveCommands()
		}
	}
	type listen struct {
		Address        string   `json:"address"`
		OpenAt         []string `json:"open_at"`
		BeyondLoopback bool     `json:"beyond_loopback"`
	}
	s.mu.Lock()
	reach := s.reach
	s.mu.Unlock()
	out := map[string]any{"version": s.cfg.Version, "model": m, "authenticated": isAuthenticated(r),
		"listen": listen{Address: reach.Bound, OpenAt: orEmpty(reach.OpenAt), BeyondLoopback: reach.Beyond}}
	if p, ok := personOf(r); ok {
		out["home"] = s.cfg.App.Home.Dir()
		out["person"] = personJSON{Name: p.Name, Subject: p.Subject, Issuer: p.Issuer, Roles: p.Roles.Names()}
	}
	if s.cfg.OIDC != nil {
		out["sign_in"] = "/auth/login"
	}
	writeJSON(w, http.StatusOK, out)
}
