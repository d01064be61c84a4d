package app

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/secrets"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/telemetry"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Grants is the one source of the person's grants, for every front end
// (packs run, chat, MCP, the web app): the rows in packs.db that apply in
// the chat (grants scoped to another chat are left out), and, for an
// installed pack with no row at all, the grants mirrored in its packs.lock
// entry (a lock carried over from another machine or a bundle). A pack run
// from a folder (a reference without a digest) holds no grant at all, even
// if it takes an installed pack's name. A pack used in place (a reference
// with InPlace set) holds the grants the person made to its folder at the
// reference's digest (store.DB.InPlaceGrants).
//
// Under a policy whose [review] lapses grants, a persistent grant older
// than LapseAfter (since it was granted or last kept) holds no more: it
// reads as revoked until the person keeps it (App.KeepGrant).
//
// In a store that replicas share (Shared), the store's rows are the only
// grants: no replica's packs.lock mirror stands in for them, and a call is
// refused (ErrNotStoreContent) unless this replica's copy of the pack is
// the content the store records for its name.
type Grants struct {
	DB         *store.DB
	Home       *dist.Home
	LapseAfter time.Duration // 0: grants do not lapse
	Shared     bool
}

var _ capability.GrantSource = Grants{}

// Grants is the application's grant source (see the type).
func (a *App) Grants() Grants {
	return Grants{DB: a.DB, Home: a.Home, LapseAfter: lapseAfter(a.Policy), Shared: a.shared}
}

// Lapse is the time before which a persistent grant (granted or last
// kept) has lapsed, for store.DB's CallGrants and PeekGrants; zero when
// grants do not lapse.
func (g Grants) Lapse() time.Time {
	if g.LapseAfter <= 0 {
		return time.Time{}
	}
	return time.Now().Add(-g.LapseAfter)
}

// lapseAfter is Grants.LapseAfter under pol.
func lapseAfter(pol *capability.Policy) time.Duration {
	if !pol.ReviewLapse() {
		return 0
	}
	return pol.ReviewAfter()
}

// PeekGrants implements capability.GrantSource.
func (g Grants) PeekGrants(ctx context.Context, ref capability.PackRef, chat string) ([]capability.UserGrant, error) {
	return g.get(ctx, ref, chat, false)
}

// TakeGrants implements capability.GrantSource: it spends "once" grants.
func (g Grants) TakeGrants(ctx context.Context, ref capability.PackRef, chat string) ([]capability.UserGrant, error) {
	return g.get(ctx, ref, chat, true)
}

func (g Grants) get(ctx context.Context, ref capability.PackRef, chat string, take bool) ([]capability.UserGrant, error) {
	if ref.InPlace != "" {
		// A pack used in place holds what the person granted its folder
		// at this content, never an installed pack's grants.
		return g.DB.InPlaceGrants(ctx, ref.InPlace, ref.Digest, chat, g.Lapse())
	}
	if ref.Digest == "" {
		// A pack run from a folder is not the installed pack of that name,
		// whatever it calls itself: it holds no grant.
		return nil, nil
	}
	if g.Shared && take {
		// Checked before any once grant is spent.
		if err := checkStoreContent(ctx, g.DB, ref); err != nil {
			return nil, err
		}
	}
	// A disabled pack runs nothing, from any front end: every call of an
	// installed pack's tool, and every builtin run under its grant, comes
	// here first. CallGrants refuses it in the same read as the grants.
	user, err := g.DB.CallGrants(ctx, ref.Name, chat, take, g.Lapse())
	if err != nil || len(user) > 0 || g.Home == nil || g.Shared {
		return user, err
	}
	e, err := g.Home.Entry(ref.Name)
	switch {
	case errors.Is(err, dist.ErrNotInstalled):
		return nil, nil
	case err != nil:
		return nil, err
	case e.Integrity != ref.Digest:
		// Another version than the one the call was resolved for.
		return nil, nil
	}
	return capability.FromLock(e.Capabilities), nil
}

// NewPipeline returns the pipeline every front end runs tools through,
// over what Open opened: rt runs the tools, the person's grants come from
// Grants over a.DB and a.Home, the policy is the one Open loaded (never
// read again), and log audits every call. own, when set, lists packs' own
// listening addresses, which no tool may connect to. It is the one
// constructor of a pipeline over a state directory.
func (a *App) NewPipeline(rt *runtime.Runtime, log capability.Auditor, own *Listeners) (*runtime.Pipeline, error) {
	return runtime.NewPipeline(rt, a.pipelineConfig(log, own))
}

func (a *App) pipelineConfig(log capability.Auditor, own *Listeners) runtime.PipelineConfig {
	userHome, _ := os.UserHomeDir()
	cfg := runtime.PipelineConfig{
		Grants: a.Grants(), Policy: a.Policy, Audit: log, Home: userHome, Getenv: a.getenv(),
		Secrets: secrets.Open(a.Home.Dir()),
	}
	if own != nil {
		cfg.Reserved = own.All
	}
	return cfg
}

// PipelineOptions shape the runtime under a pipeline OpenPipeline opens.
type PipelineOptions struct {
	// OneShot is for a command that makes one call (or one recipe's) and
	// exits: no pool of instances is kept warm.
	OneShot bool
	// Content, when set, is the cache of the packs' verified content the
	// command already read, so the runtime does not read it again.
	Content *packs.ContentCache
	// Own lists packs' own listening addresses (packs serve, packs mcp
	// --http): no tool connects to them.
	Own *Listeners
	// Metrics, when set, counts the pipeline's calls and denials and
	// watches the runtime's pools (packs serve, packs mcp --http).
	Metrics *telemetry.Metrics
	// Version is service.version in the exported spans.
	Version string
}

// OpenPipeline opens what a command needs to run tools: the audit log, a
// runtime over the state directory's compile cache, and the pipeline
// (NewPipeline). release closes them, runtime first.
func (a *App) OpenPipeline(ctx context.Context, opt PipelineOptions) (pl *runtime.Pipeline, release func(), err error) {
	log, err := a.OpenAudit(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := runtime.Config{CacheDir: a.Home.CacheDir(), Logger: a.Logger, Recorder: log, Content: opt.Content}
	if opt.OneShot {
		cfg.PoolSize = -1
	}
	// Spans go over OTLP when the environment names a collector
	// (OTEL_EXPORTER_OTLP_ENDPOINT): for every command that runs tools.
	tracing, err := telemetry.TracingFromEnv(a.getenv(), opt.Version)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	rt, err := runtime.New(ctx, cfg)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	release = func() {
		rt.Close(context.WithoutCancel(ctx))
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(sctx); err != nil {
			a.Logger.Warn("spans not exported", "err", err)
		}
		log.Close()
	}
	pc := a.pipelineConfig(log, opt.Own)
	pc.Tracer = tracing.Tracer()
	if m := opt.Metrics; m != nil {
		pc.Audit, pc.Observer = m.Auditor(log), m
		if err := m.WatchRuntime(rt); err != nil {
			release()
			return nil, nil, err
		}
	}
	if pl, err = runtime.NewPipeline(rt, pc); err != nil {
		release()
		return nil, nil, err
	}
	return pl, release, nil
}

// Listeners is the set of addresses packs' own servers listen on (packs
// serve, packs mcp --http), filled in as they start: tools never connect to
// them. It is safe for concurrent use; the zero value is ready.
type Listeners struct {
	mu    sync.Mutex
	addrs []netip.AddrPort
}

// Add records the address of a listener that just started.
func (l *Listeners) Add(a net.Addr) {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addrs = append(l.addrs, ap)
}

// All returns the recorded addresses.
func (l *Listeners) All() []netip.AddrPort {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.addrs)
}

// OpenAudit opens the audit log of the state directory, its redaction
// masking every value of the secret store besides the secret shapes it
// knows: the one way the commands open it, so none forgets the store.
func (a *App) OpenAudit(ctx context.Context) (*audit.Log, error) {
	r := audit.DefaultRedactor()
	r.Known = secrets.Open(a.Home.Dir()).Masker()
	return audit.Open(ctx, a.DB, audit.Options{Logger: a.Logger, Redactor: r, KeyDir: a.AuditKeyDir()})
}

// AuditKeyDir is where the audit key and checkpoint live: the state
// directory, also when the store is a PostgreSQL database (the key never
// goes into the database it protects).
func (a *App) AuditKeyDir() string { return a.Home.Dir() }

// ErrNotStoreContent is wrapped, with capability.ErrDenied, by the error
// of a call of, or a grant to, an installed pack whose copy on this
// replica is not the content the shared store records for its name.
var ErrNotStoreContent = errors.New("app: this replica's copy of the pack is not the one the shared store records")

// checkStoreContent refuses ref, an installed pack of this replica, unless
// the shared store records the same content (ref.Digest) under its name:
// the store's grants were made to that content, and another replica may
// have installed other content (an update: a new decision) or removed the
// pack. The refusal says how to bring this replica in line.
func checkStoreContent(ctx context.Context, db *store.DB, ref capability.PackRef) error {
	r, err := db.Pack(ctx, ref.Name)
	switch {
	case errors.Is(err, store.ErrPackNotFound):
		return &capability.DeniedError{Layer: capability.LayerUser, Cause: ErrNotStoreContent,
			Reason: "pack " + ref.Name + " is installed on this replica, but the shared store records no such pack (it was removed on another replica, or installed here before this replica joined): install it again here (packs add) or remove it (packs remove " + ref.Name + ")"}
	case err != nil:
		return err
	case r.Integrity != ref.Digest:
		return &capability.DeniedError{Layer: capability.LayerUser, Cause: ErrNotStoreContent,
			Reason: "pack " + ref.Name + " on this replica is " + ref.Digest + ", but the shared store records " + r.Integrity + " (" + r.Source + ", version " + r.Version + "), installed on another replica: install that content here (packs add " + r.Source + ")"}
	}
	return nil
}
