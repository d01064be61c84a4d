// Package app wires the packs application together: the state directory,
// packs.db, and (as they arrive) the policy, runtime, audit log and chat.
// cmd/packs parses flags into Options, calls Open, runs one command against
// the App and closes it. Behaviour lives here and in the library packages,
// so tests drive it without a terminal.
package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// Options configure Open.
type Options struct {
	Home   string       // state directory, absolute (see dist.ResolveHome)
	Policy string       // enterprise policy file; "" for none
	Logger *slog.Logger // nil discards
	// Builtins installs or updates the built-in packs as the home opens
	// (EnsureBuiltins): the commands that run chats (chat, mcp, serve)
	// and tools (run) set it.
	Builtins bool
	// Now is the state directory's clock (dist.HomeOptions.Now); nil is
	// time.Now.
	Now func() time.Time
	// Getenv reads the environment (PATH, for the required tools a pack
	// names); nil is os.Getenv.
	Getenv func(string) string
	// WorkDir is the working directory whose project skills folders hold
	// packs used in place (an agent may name one); "" for none.
	WorkDir string
	// ModuleCache is where compiled modules are kept when not in the
	// state directory (dist.HomeOptions.ModuleCache); "" reads
	// $PACKS_CACHE through Getenv, and an empty one is the home's cache/.
	ModuleCache string
	// Store is a postgres:// URL: the PostgreSQL database that replicas
	// share, in place of packs.db in the state directory ("", the
	// default). The audit key stays in the state directory either way.
	Store string
}

// App is one open state directory and what is built on it.
type App struct {
	Home       *dist.Home
	DB         *store.DB
	Logger     *slog.Logger
	PolicyPath string
	Policy     *capability.Policy // the enterprise policy; nil when none is configured
	Getenv     func(string) string
	WorkDir    string // Options.WorkDir

	// Installed runs after a pack is installed and its packs.db row is
	// written, with the new lock entry (including the granted
	// capabilities); Removed after a pack is removed. Components that keep
	// their own per-pack state (grants, compiled modules) append here.
	Installed []func(ctx context.Context, e dist.LockEntry) error
	Removed   []func(ctx context.Context, name string) error

	// shared says the store is a database that replicas share
	// (Options.Store): its packs table and grants are the team's truth,
	// and this state directory's packs.lock never rewrites them (see
	// checkStoreContent).
	shared bool
}

// getenv is Options.Getenv: os.Getenv when none was given.
func (a *App) getenv() func(string) string {
	if a.Getenv == nil {
		return os.Getenv
	}
	return a.Getenv
}

// Open opens the state directory (creating it), recovers any install or
// remove a crash interrupted, opens packs.db and brings its packs table in
// line with packs.lock (a shared store's, Options.Store, it leaves as the
// replicas wrote it). Close releases what Open acquired, also after a
// partial failure.
func Open(ctx context.Context, opt Options) (*App, error) {
	if opt.Home == "" {
		return nil, errors.New("app: no state directory: pass --home DIR or set PACKS_HOME")
	}
	a := &App{Logger: opt.Logger, PolicyPath: opt.Policy, Getenv: opt.Getenv, WorkDir: opt.WorkDir}
	if a.Logger == nil {
		a.Logger = slog.New(slog.DiscardHandler)
	}
	cache := opt.ModuleCache
	if getenv := opt.Getenv; cache == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		cache = getenv("PACKS_CACHE")
	}
	h, err := dist.OpenHome(ctx, opt.Home, dist.HomeOptions{Logger: a.Logger, Now: opt.Now, ModuleCache: cache})
	if err != nil {
		return nil, err
	}
	a.Home = h
	// A malformed policy stops every command; it is never ignored.
	if a.Policy, err = capability.FindPolicy(opt.Policy, nil); err != nil {
		return nil, err
	}
	target := h.DBPath()
	if opt.Store != "" {
		if !store.IsURL(opt.Store) {
			a.Close()
			return nil, fmt.Errorf("app: the store %q is not a postgres:// URL: without one, the store is packs.db in the state directory", opt.Store)
		}
		target, a.shared = opt.Store, true
	}
	if a.DB, err = store.Open(ctx, target); err != nil {
		a.Close()
		return nil, err
	}
	if !a.shared {
		// A shared store's packs table records what the replicas
		// installed; no replica's packs.lock rewrites it (nor answers
		// from it for this state directory's lock).
		if err := a.syncDB(ctx); err != nil {
			a.Close()
			return nil, err
		}
		h.SetIndex(storeIndex{a.DB})
	}
	if opt.Builtins {
		if err := a.EnsureBuiltins(ctx); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// Close closes the database.
func (a *App) Close() error {
	if a.DB == nil {
		return nil
	}
	if a.Home != nil {
		a.Home.SetIndex(nil)
	}
	err := a.DB.Close()
	a.DB = nil
	return err
}

// syncDB rewrites the packs table from packs.lock when they differ: the
// lockfile is the source of truth, the table a queryable mirror that a
// crash between the two writes may have left behind.
//
// The comparison parses every entry and reads every row, so it is skipped
// when packs.lock is the file the table was last brought in line with:
// the same file stamp (inode, size, times: one lstat), or else the same
// SHA-256 of its bytes (hashing the file costs milliseconds with ten
// thousand packs installed, parsing it fifty). A command's start then
// costs the same with ten packs installed or ten thousand. Every write of
// the table follows a write of packs.lock, which changes its stamp. Once
// in line, the table answers for single lock entries (storeIndex), and
// only for a packs.lock of the recorded stamp.
func (a *App) syncDB(ctx context.Context) error {
	path := a.Home.LockPath()
	fileStamp := ""
	if fi, err := os.Lstat(path); err == nil && a.Home.Settled(packs.StampOf(fi)) {
		fileStamp = stampKey(packs.StampOf(fi))
	}
	syncedHash, syncedStamp, err := a.DB.PacksSyncedWith(ctx)
	if err != nil || fileStamp != "" && fileStamp == syncedStamp {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("app: read packs.lock: %w", err)
	}
	if fi, err := os.Lstat(path); fileStamp != "" && (err != nil || stampKey(packs.StampOf(fi)) != fileStamp) {
		fileStamp = "" // it changed while it was read: its stamp says nothing of data
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if hash == syncedHash {
		if fileStamp == syncedStamp {
			return nil
		}
		return a.DB.MarkPacksSynced(ctx, hash, fileStamp)
	}
	l := &dist.Lockfile{} // no packs.lock: nothing installed
	if data != nil {
		if l, err = dist.ParseLock(path, data); err != nil {
			return err
		}
	}
	rows := make([]store.PackRow, len(l.Packs))
	for i, e := range l.Packs {
		rows[i] = packRow(e)
	}
	changed, err := a.DB.ReplacePacks(ctx, rows)
	if err != nil {
		return err
	}
	if changed {
		a.Logger.Info("app: packs.db brought in line with packs.lock")
	}
	return a.DB.MarkPacksSynced(ctx, hash, fileStamp)
}

func packRow(e dist.LockEntry) store.PackRow {
	r := store.PackRow{Name: e.Name, Version: e.Version, Source: e.Source, Integrity: e.Integrity, InstalledAt: e.Installed,
		Resolved: e.Resolved, Signer: e.Signer}
	for n, c := range e.Capabilities {
		if r.Capabilities == nil {
			r.Capabilities = map[string]store.PackCapability{}
		}
		r.Capabilities[string(n)] = store.PackCapability{Granted: c.Granted, Resources: c.Resources}
	}
	return r
}

// lockEntry is the lock entry a packs.db row mirrors: packRow's inverse.
func lockEntry(r store.PackRow) (dist.LockEntry, error) {
	e := dist.LockEntry{Name: r.Name, Version: r.Version, Source: r.Source, Integrity: r.Integrity,
		Installed: r.InstalledAt, Resolved: r.Resolved, Signer: r.Signer}
	for key, c := range r.Capabilities {
		n, err := capability.ParseName(key)
		if err != nil {
			return dist.LockEntry{}, fmt.Errorf("app: packs.db row of %s: %w", r.Name, err)
		}
		if e.Capabilities == nil {
			e.Capabilities = map[capability.Name]dist.LockCapability{}
		}
		e.Capabilities[n] = dist.LockCapability{Granted: c.Granted, Resources: c.Resources}
	}
	return e, nil
}

// MirrorGrants writes the person's live persistent grants of the installed
// pack name, as packs.db holds them, into its packs.lock entry
// (capability.ToLock through dist.Home.SetCapabilities) and its packs.db
// row. Call it after every change to the pack's grants. The request comes
// from the installed files, which must still match the lock entry: a
// modified or missing pack is an error wrapping packs.ErrModified, and its
// lock entry is left alone (the pack does not run anyway).
func (a *App) MirrorGrants(ctx context.Context, name string) (dist.LockEntry, error) {
	e, err := a.Home.SetCapabilities(ctx, name, func(cur dist.LockEntry) (map[capability.Name]dist.LockCapability, error) {
		dir, err := a.Home.PackDir(name)
		if err != nil {
			return nil, err
		}
		// Home.Verify would wait for the lock SetCapabilities holds: compare
		// the digest here.
		got, err := packs.Digest(dir)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: packs.lock was not updated: %w", packs.ErrModified, name, err)
		}
		if got != cur.Integrity {
			return nil, fmt.Errorf("%w: %s: packs.lock was not updated: the files in %s no longer match it (found %s)", packs.ErrModified, name, dir, got)
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			return nil, err
		}
		rows, err := a.DB.Grants(ctx, name)
		if err != nil {
			return nil, err
		}
		return capability.ToLock(p.Request(), store.UserGrants(rows)), nil
	})
	if err != nil {
		return dist.LockEntry{}, err
	}
	if a.shared {
		// The shared packs row records the content the replicas
		// installed (commit writes it); the grants are the store's rows.
		return e, nil
	}
	if err := a.DB.PutPack(ctx, packRow(e)); err != nil {
		return e, fmt.Errorf("app: packs.lock of %s is updated, but packs.db was not (the next start repairs it): %w", name, err)
	}
	return e, nil
}

// Grant records what the person granted the installed pack name (in chat,
// for a chat or once grant): in packs.db and in packs.lock's mirror,
// together or not at all. The pack's files are checked against packs.lock
// first, so a pack that changed since install is refused before anything is
// written (packs.ErrModified), and in a shared store so is a pack that is
// not the content the store records (checkStoreContent); if the mirror
// fails after the rows were written, the rows are put back as they were. A revoke, which only
// narrows, always reaches packs.db instead (see packs revoke).
func (a *App) Grant(ctx context.Context, name, chat string, grants []capability.UserGrant) (dist.LockEntry, error) {
	if err := a.Home.Verify(name); err != nil {
		return dist.LockEntry{}, err
	}
	if a.shared {
		// A grant in a shared store holds on every replica: it is made
		// only to the content the store records.
		e, err := a.Home.Entry(name)
		if err != nil {
			return dist.LockEntry{}, err
		}
		if err := checkStoreContent(ctx, a.DB, e.Ref()); err != nil {
			return dist.LockEntry{}, err
		}
	}
	before, err := a.DB.Grants(ctx, name)
	if err != nil {
		return dist.LockEntry{}, err
	}
	undo := func(cause error) error {
		if err := a.DB.RestoreGrants(context.WithoutCancel(ctx), name, before); err != nil {
			return errors.Join(cause, fmt.Errorf("app: the grants of %s could not be put back: %w", name, err))
		}
		return cause
	}
	for _, u := range grants {
		if err := a.DB.PutGrant(ctx, name, chat, u); err != nil {
			return dist.LockEntry{}, undo(err)
		}
	}
	e, err := a.MirrorGrants(ctx, name)
	if err != nil {
		return dist.LockEntry{}, undo(err)
	}
	return e, nil
}

// ReplaceGrants records grants, persistent grants made at install, as the
// person's only grants of the installed pack name in packs.db (a reinstall
// is new content, so a new decision: earlier grants go) and mirrors them
// into its lock entry with MirrorGrants. The installer (commit) calls it
// after every install.
func (a *App) ReplaceGrants(ctx context.Context, name string, grants []capability.UserGrant) (dist.LockEntry, error) {
	if err := a.DB.DeleteGrants(ctx, name); err != nil {
		return dist.LockEntry{}, err
	}
	for _, u := range grants {
		if err := a.DB.PutGrant(ctx, name, "", u); err != nil {
			return dist.LockEntry{}, fmt.Errorf("app: %s is installed, but its grants were not recorded: grant %s again (packs grant %s %s): %w", name, u.Capability, name, u, err)
		}
	}
	return a.MirrorGrants(ctx, name)
}

// Remove uninstalls a pack, deletes its packs.db row and every grant of
// it (persistent and per chat: a pack added again later is a new
// decision), and runs the Removed hooks. It returns the lock entry that was
// removed. Every front end removes through it (packs remove, the web app).
// In a store replicas share, removing the content the store records
// removes it for every replica; removing a copy the store does not record
// (StatusStale) removes it from this state directory only.
func (a *App) Remove(ctx context.Context, name string) (dist.LockEntry, error) {
	e, err := a.Home.Remove(ctx, name)
	if err != nil {
		return dist.LockEntry{}, err
	}
	if builtin.IsSource(e.Source) {
		// The person removed a built-in: EnsureBuiltins leaves it out.
		if err := a.setBuiltinRemoved(name, true); err != nil {
			return e, err
		}
	}
	if a.shared {
		// A copy the shared store does not record (another replica
		// updated or removed the pack) goes from this replica only:
		// the store's record and grants are of other content.
		if err := checkStoreContent(ctx, a.DB, e.Ref()); errors.Is(err, ErrNotStoreContent) {
			return e, a.removed(ctx, name)
		} else if err != nil {
			return e, fmt.Errorf("app: %s is removed here, but the shared store could not be read: %w", name, err)
		}
	}
	if err := a.DB.DeletePack(ctx, name); err != nil && !errors.Is(err, store.ErrPackNotFound) {
		return e, fmt.Errorf("app: %s is removed, but packs.db was not updated (the next start repairs it): %w", name, err)
	}
	if err := a.DB.DeleteGrants(ctx, name); err != nil {
		return e, fmt.Errorf("app: %s is removed, but its grants are still in packs.db: %w", name, err)
	}
	// A pack added again later starts enabled.
	if _, err := a.DB.SetDisabled(ctx, name, false); err != nil {
		return e, fmt.Errorf("app: %s is removed, but it is still marked disabled: %w", name, err)
	}
	return e, a.removed(ctx, name)
}

// removed runs the Removed hooks of the pack name.
func (a *App) removed(ctx context.Context, name string) error {
	for _, hook := range a.Removed {
		if err := hook(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// Status says whether an installed pack may run.
type Status string

const (
	StatusOK       Status = "ok"       // files match the lock entry
	StatusModified Status = "modified" // files differ: the pack does not run
	StatusMissing  Status = "missing"  // the folder is gone
	// StatusStale: in a store replicas share, the store records other
	// content under the pack's name (another replica installed it), or
	// none (another replica removed it): the pack does not run here.
	StatusStale Status = "stale"
)

// InstalledPack is an installed pack as list and info show it.
type InstalledPack struct {
	Entry  dist.LockEntry
	Status Status
	// Pack is loaded from the installed folder; nil when it does not load,
	// or, from Listing, when Summary was recorded.
	Pack    *packs.Pack
	LoadErr error // why Pack is nil, when it does not load
	// Summary is what a listing shows of the pack's files, when Listing
	// took it from packs.db instead of loading the pack (see SummaryOf).
	Summary Summary
	// Disabled says the person disabled the pack (packs disable): it stays
	// installed and is never attached, offered to a model or run.
	Disabled bool
}

// Summary is what a listing shows of an installed pack's files: its
// description, its tools' names and the resources it asks for under each
// capability.
type Summary struct {
	Description string                       `json:"description,omitempty"`
	Tools       []string                     `json:"tools,omitempty"`
	Requested   map[capability.Name][]string `json:"requested,omitempty"`
}

// SummaryOf is the Summary of a loaded pack.
func SummaryOf(p *packs.Pack) Summary {
	s := Summary{Description: p.Frontmatter.Description}
	for _, t := range p.Tools {
		s.Tools = append(s.Tools, t.Name)
	}
	req := p.Request()
	for _, n := range req.Names() {
		if s.Requested == nil {
			s.Requested = map[capability.Name][]string{}
		}
		s.Requested[n] = req.Resources(n)
	}
	return s
}

// Packs lists the installed packs, sorted by name, each verified and loaded.
// packs.lock is read once (dist.Home.Each): the cost grows with the number
// of packs, not with its square.
func (a *App) Packs(ctx context.Context) ([]InstalledPack, error) { return a.packs(ctx, false) }

// Listing is Packs for a listing (packs list): every pack is verified
// just as Packs does, but an intact pack is not loaded when this program
// (runtime.ProgramID) recorded its Summary for the same integrity in
// packs.db: the files hash to what they hashed to then, so loading them
// again would find the same. Its Pack is then nil and its Summary set.
// The summaries of intact packs it loads are recorded for the next
// listing.
func (a *App) Listing(ctx context.Context) ([]InstalledPack, error) { return a.packs(ctx, true) }

func (a *App) packs(ctx context.Context, listing bool) ([]InstalledPack, error) {
	var (
		mu      sync.Mutex
		out     []InstalledPack
		program string
		cached  map[string][]byte
		put     = map[string][]byte{}
		keep    = map[string]bool{}
	)
	// A shared store's listing loads every pack: the grants it shows are
	// the store's, worked out from each pack's request (fromStore).
	if listing && !a.shared {
		if program = runtime.ProgramID(); program != "" {
			var err error
			if cached, err = a.DB.PackSummaries(ctx, program); err != nil {
				a.Logger.Warn("app: cannot read the recorded pack summaries; loading every pack", "err", err)
			}
		}
	}
	err := a.Home.Each(ctx, func(i int, e dist.LockEntry, verr error) error {
		var ip InstalledPack
		var s Summary
		raw, ok := cached[e.Integrity]
		if ok && verr == nil && json.Unmarshal(raw, &s) == nil {
			ip = InstalledPack{Entry: e, Status: StatusOK, Summary: s}
		} else {
			ip = a.inspect(e, verr)
			if ip.Status == StatusOK && ip.Pack != nil && program != "" {
				raw, err := json.Marshal(SummaryOf(ip.Pack))
				if err != nil {
					return fmt.Errorf("app: summary of %s: %w", e.Name, err)
				}
				mu.Lock()
				put[e.Integrity] = raw
				mu.Unlock()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		keep[e.Integrity] = true
		if i >= len(out) {
			out = append(out, make([]InstalledPack, i+1-len(out))...)
		}
		out[i] = ip
		return nil
	})
	if err != nil {
		return nil, err
	}
	stale := false
	for integrity := range cached {
		stale = stale || !keep[integrity]
	}
	if len(put) > 0 || stale {
		if err := a.DB.RecordPackSummaries(ctx, program, put, keep); err != nil {
			a.Logger.Warn("app: cannot record the pack summaries; the next listing loads the packs again", "err", err)
		}
	}
	disabled, err := a.DB.DisabledPacks(ctx)
	if err != nil {
		return nil, err
	}
	for i := range out {
		_, out[i].Disabled = disabled[out[i].Entry.Name]
		if err := a.fromStore(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fromStore makes ip, an installed pack of this state directory, show
// what a store replicas share records of it: its grants there, which
// other replicas may have changed since this packs.lock mirrored them, or
// StatusStale when the store records other content under its name, or
// none. On one machine (no shared store) it does nothing.
func (a *App) fromStore(ctx context.Context, ip *InstalledPack) error {
	if !a.shared || ip.Status != StatusOK {
		return nil
	}
	if err := checkStoreContent(ctx, a.DB, ip.Entry.Ref()); errors.Is(err, ErrNotStoreContent) {
		ip.Status = StatusStale
		return nil
	} else if err != nil {
		return err
	}
	if ip.Pack == nil {
		return nil
	}
	rows, err := a.DB.Grants(ctx, ip.Entry.Name)
	if err != nil {
		return err
	}
	ip.Entry.Capabilities = capability.ToLock(ip.Pack.Request(), store.UserGrants(rows))
	return nil
}

// Pack returns one installed pack, or an error wrapping
// dist.ErrNotInstalled.
func (a *App) Pack(ctx context.Context, name string) (InstalledPack, error) {
	e, err := a.Home.Entry(name)
	if err != nil {
		return InstalledPack{}, err
	}
	ip := a.inspect(e, a.Home.Verify(e.Name))
	if err := a.DB.CheckEnabled(ctx, name); errors.Is(err, store.ErrPackDisabled) {
		ip.Disabled = true
	} else if err != nil {
		return InstalledPack{}, err
	}
	if err := a.fromStore(ctx, &ip); err != nil {
		return InstalledPack{}, err
	}
	return ip, nil
}

// SetEnabled enables or disables the installed pack name (packs enable,
// packs disable) and reports whether that changed anything. Its files, its
// packs.lock entry and its grants stay as they are. A pack the policy
// mandates cannot be disabled: the enterprise wins (an error wrapping
// capability.ErrDenied). A name that is not installed is an error wrapping
// dist.ErrNotInstalled.
func (a *App) SetEnabled(ctx context.Context, name string, enabled bool) (bool, error) {
	if _, err := a.Home.Entry(name); err != nil {
		return false, err
	}
	if !enabled && slices.Contains(a.Policy.Mandated(), name) {
		return false, &capability.DeniedError{Layer: capability.LayerPolicy, Reason: "the policy " + a.Policy.Source() + " mandates pack " + name + ": it stays enabled"}
	}
	return a.DB.SetDisabled(ctx, name, !enabled)
}

// inspect loads the installed pack of e, whose check against packs.lock
// returned verr.
func (a *App) inspect(e dist.LockEntry, verr error) InstalledPack {
	ip := InstalledPack{Entry: e, Status: StatusOK}
	if verr != nil {
		ip.Status = StatusModified
		if errors.Is(verr, dist.ErrNotInstalled) || errors.Is(verr, fs.ErrNotExist) {
			ip.Status = StatusMissing
		}
	}
	if ip.Status == StatusMissing {
		return ip
	}
	dir, err := a.Home.PackDir(e.Name)
	if err == nil {
		ip.Pack, err = packs.Load(dir, packs.LoadOptions{})
	}
	ip.LoadErr = err
	return ip
}
