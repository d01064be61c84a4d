package dist

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/packs-run/packs/packs"
	"golang.org/x/sync/errgroup"
)

// Errors about installed packs. Check them with errors.Is.
var (
	// ErrNotInstalled: no lock entry of that name.
	ErrNotInstalled = errors.New("packs: not installed")
)

// Layout of the state directory.
const (
	dbFile         = "packs.db"
	lockFile       = "packs.lock"
	packsDir       = "packs"
	cacheDir       = "cache"
	workspacesDir  = "workspaces"
	tmpDir         = "tmp"
	journalFile    = "txn.json"
	stagePrefix    = "stage-"
	asidePrefix    = "old-"
	homeEnv        = "PACKS_HOME"
	xdgDataHomeEnv = "XDG_DATA_HOME"
)

// ResolveHome picks the state directory: flag (from --home) if set, else
// $PACKS_HOME, else $XDG_DATA_HOME/packs, else ~/.local/share/packs. getenv
// reads the environment (os.Getenv in a program, a map in a test) and home is
// the user's home directory, used only for the last fallback.
func ResolveHome(flag string, getenv func(string) string, home func() (string, error)) (string, error) {
	switch {
	case flag != "":
		return filepath.Abs(flag)
	case getenv(homeEnv) != "":
		return filepath.Abs(getenv(homeEnv))
	case getenv(xdgDataHomeEnv) != "" && filepath.IsAbs(getenv(xdgDataHomeEnv)):
		// The XDG spec says a relative XDG_DATA_HOME is invalid and ignored.
		return filepath.Join(getenv(xdgDataHomeEnv), "packs"), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", fmt.Errorf("packs: no state directory: pass --home DIR or set PACKS_HOME (no home directory: %v)", err)
	}
	return filepath.Join(h, ".local", "share", "packs"), nil
}

// HomeOptions configure OpenHome.
type HomeOptions struct {
	Logger *slog.Logger // nil discards
	// Now is the clock that tells a settled file stamp from a racy one
	// (see Settled); nil is time.Now. A test sets one ahead of the files'
	// times instead of waiting for them to settle.
	Now func() time.Time
	// ModuleCache is where compiled modules are kept (CacheDir), an
	// absolute folder that several state directories may share
	// ($PACKS_CACHE); "" is cache/ in the state directory. Entries are
	// keyed by the module's digest and the compiler's version, so sharing
	// never mixes two modules.
	ModuleCache string
}

// Home is the state directory:
//
//	packs.db      SQLite state (internal/store)
//	packs.lock    installed packs and their integrity (the source of truth)
//	packs/<name>/ installed packs
//	cache/        compiled wasm modules
//	workspaces/   chat workspaces
//	tmp/          staging and the journal of the one install or remove in flight
//
// Processes share a Home safely: installs and removes take an exclusive
// lock on the directory, readers that need a stable view take a shared one.
type Home struct {
	dir         string
	moduleCache string // HomeOptions.ModuleCache, cleaned; "" for cache/
	log         *slog.Logger
	// hook, when set (by tests), runs before each step of a transaction; a
	// test makes it fail or panic to prove every interruption recovers.
	hook func(step string) error

	// entries remembers the lock entries Entry looked up, for the
	// packs.lock whose stamp is entriesOf: packs.lock is always replaced by
	// a rename, so the same stamp is the same content (see racy).
	mu        sync.Mutex
	entriesOf packs.Stamp
	entries   map[string]LockEntry

	// index, when set (SetIndex), answers for packs.lock and the packs'
	// folders what an earlier process read there.
	index Index
	// now is the clock that tells a settled stamp from a racy one; tests
	// move it forward instead of waiting.
	now func() time.Time
}

// Index keeps, across processes, what Home read in packs.lock and in the
// installed folders, so that a later command need not read it all again:
// internal/app keeps it in packs.db. It is only ever asked about a file
// whose stamp (see packs.Stamp) is the one it was given with the answer, and
// given only settled stamps (see racy), so a changed file is read again.
type Index interface {
	// LockEntry returns the entry name of the packs.lock whose stamp is
	// lock, and found false when it has none. known is false when the
	// index does not hold that packs.lock: Home then reads the file.
	LockEntry(lock packs.Stamp, name string) (e LockEntry, found, known bool, err error)
	// FolderChecks returns the checks given to RecordFolderChecks, by
	// pack name.
	FolderChecks(ctx context.Context) (map[string]packs.FolderCheck, error)
	// RecordFolderChecks keeps put, by pack name, and forgets the checks
	// of the packs in drop.
	RecordFolderChecks(ctx context.Context, put map[string]packs.FolderCheck, drop []string) error
}

// SetIndex makes h consult ix (see Index); nil stops it.
func (h *Home) SetIndex(ix Index) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.index = ix
}

func (h *Home) getIndex() Index {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.index
}

// Settled reports whether the file stamp s is old enough to tell the file
// from a rewrite of it (see racy): only settled stamps go to an Index.
func (h *Home) Settled(s packs.Stamp) bool { return !h.racy(s) }

// OpenHome opens the state directory dir, creating it and its layout with
// mode 0700 when missing. It finishes or rolls back an install or remove
// that a crash interrupted and deletes abandoned staging folders.
func OpenHome(ctx context.Context, dir string, opt HomeOptions) (*Home, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("packs: state directory %q must be an absolute path", dir)
	}
	if opt.ModuleCache != "" && !filepath.IsAbs(opt.ModuleCache) {
		return nil, fmt.Errorf("packs: module cache %q ($PACKS_CACHE) must be an absolute path", opt.ModuleCache)
	}
	h := &Home{dir: filepath.Clean(dir), log: opt.Logger, now: opt.Now}
	if opt.ModuleCache != "" {
		h.moduleCache = filepath.Clean(opt.ModuleCache)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{h.dir, h.PacksDir(), filepath.Join(h.dir, cacheDir), h.WorkspacesDir(), h.tmp()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, mkdirError("state directory", dir, "pass --home a folder", err)
		}
	}
	if h.moduleCache != "" {
		if err := os.MkdirAll(h.moduleCache, 0o700); err != nil {
			return nil, mkdirError("module cache", h.moduleCache, "set PACKS_CACHE to a folder or unset it", err)
		}
	}
	unlock, err := h.lock(ctx, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := h.recover(); err != nil {
		return nil, err
	}
	h.cleanTmp()
	return h, nil
}

// mkdirError says why the folder dir (the state directory or the module
// cache, what) could not be made, and what to do: a file in the way is a
// file, not a permissions problem.
func mkdirError(what, dir, fix string, err error) error {
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("packs: %s %s: %s is a file, not a folder: %s", what, dir, pe.Path, fix)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("packs: %s: %w: check the permissions of %s or %s", what, err, dir, fix)
	}
	return fmt.Errorf("packs: %s: %w: %s", what, err, fix)
}

// Dir is the state directory.
func (h *Home) Dir() string { return h.dir }

// DBPath is the SQLite database.
func (h *Home) DBPath() string { return filepath.Join(h.dir, dbFile) }

// LockPath is packs.lock.
func (h *Home) LockPath() string { return filepath.Join(h.dir, lockFile) }

// PacksDir holds one folder per installed pack.
func (h *Home) PacksDir() string { return filepath.Join(h.dir, packsDir) }

// CacheDir is for the runtime's compiled-module cache: cache/ in the
// state directory, or HomeOptions.ModuleCache.
func (h *Home) CacheDir() string {
	if h.moduleCache != "" {
		return h.moduleCache
	}
	return filepath.Join(h.dir, cacheDir)
}

// WorkspacesDir holds chat workspaces.
func (h *Home) WorkspacesDir() string { return filepath.Join(h.dir, workspacesDir) }

// PackDir is the folder of the installed pack name. It fails for a name that
// cannot be a folder under PacksDir.
func (h *Home) PackDir(name string) (string, error) {
	if !validDirName(name) {
		return "", fmt.Errorf("%w: %q is not a pack name", ErrNotInstalled, name)
	}
	return filepath.Join(h.PacksDir(), name), nil
}

func (h *Home) tmp() string { return filepath.Join(h.dir, tmpDir) }

// ReadLock reads packs.lock.
func (h *Home) ReadLock() (*Lockfile, error) { return ReadLock(h.LockPath()) }

// Entry returns the lock entry of the installed pack name. It reads that
// entry only (ReadLockEntry), or asks the Index, which answers without
// reading packs.lock: looking up one pack costs the same with ten packs
// installed or ten thousand.
func (h *Home) Entry(name string) (LockEntry, error) {
	var stamp packs.Stamp
	fi, statErr := os.Lstat(h.LockPath())
	if statErr == nil {
		stamp = packs.StampOf(fi)
		h.mu.Lock()
		e, ok := h.entries[name]
		if ok && h.entriesOf.Same(stamp) {
			h.mu.Unlock()
			e.Capabilities = maps.Clone(e.Capabilities) // the caller's to change
			return e, nil
		}
		h.mu.Unlock()
	}
	e, ok, known, err := LockEntry{}, false, false, error(nil)
	if ix := h.getIndex(); statErr == nil && ix != nil && !h.racy(stamp) {
		if e, ok, known, err = ix.LockEntry(stamp, name); err != nil {
			h.log.Warn("packs: the index of packs.lock failed; reading the file", "err", err)
			known = false
		}
	}
	if !known {
		if e, ok, err = ReadLockEntry(h.LockPath(), name); err != nil {
			return LockEntry{}, err
		}
	}
	if !ok {
		return LockEntry{}, fmt.Errorf("%w: %s", ErrNotInstalled, name)
	}
	if fi, err := os.Lstat(h.LockPath()); statErr == nil && err == nil && packs.StampOf(fi).Same(stamp) && !h.racy(stamp) {
		// packs.lock did not change while it was read: remember the entry.
		h.mu.Lock()
		if !h.entriesOf.Same(stamp) {
			h.entriesOf, h.entries = stamp, map[string]LockEntry{}
		}
		h.entries[name] = e
		h.mu.Unlock()
		e.Capabilities = maps.Clone(e.Capabilities)
	}
	return e, nil
}

// racy reports whether a file's stamp is too recent to tell it from a
// rewrite: a new file written within the same tick as the old one, with
// the same size, could reuse its inode and so its whole stamp. Git's index
// treats such "racily clean" entries the same way: it does not trust them.
func (h *Home) racy(s packs.Stamp) bool { return !s.SettledBefore(h.now()) }

// Verify checks that the installed files of pack name still have the
// integrity its lock entry records. It returns an error wrapping
// ErrNotInstalled when there is no entry, and one wrapping ErrModified when
// the content differs or the folder is gone. Anything that runs a pack must
// call Verify (or VerifyContent) first. It waits for an install or remove in
// flight to finish; those hold the lock for milliseconds.
func (h *Home) Verify(name string) error {
	_, _, err := h.VerifyContent(nil, name)
	return err
}

// VerifyContent is Verify through the content cache c: a later check of the
// same folder through c (the runtime's, at every call) hashes no file that
// has not changed since. It returns the lock entry it checked against and
// the content found. A nil c hashes every file.
func (h *Home) VerifyContent(c *packs.ContentCache, name string) (LockEntry, packs.Content, error) {
	unlock, err := h.lock(context.Background(), false)
	if err != nil {
		return LockEntry{}, packs.Content{}, err
	}
	defer unlock()
	e, err := h.Entry(name)
	if err != nil {
		return LockEntry{}, packs.Content{}, err
	}
	got, err := h.verifyEntry(c, e)
	return e, got, err
}

// Each calls fn with every installed pack's index in packs.lock (name
// order), lock entry, and the result of checking its files against it (nil,
// or an error wrapping ErrModified). packs.lock is read once, and the shared
// lock is held until the last fn returns, so fn sees each pack's folder as it
// was verified. The packs are checked and fn is called on up to GOMAXPROCS
// goroutines at once: fn must be safe for concurrent use. The first error
// from fn stops the walk and is returned.
//
// With an Index, a folder whose files all have the stamps its last check
// recorded is not read: its recorded digest is compared with the lock
// entry. Any other folder is hashed, and the check recorded when its
// stamps are settled. Every folder is still listed and every file's stamp
// taken, so an added, removed, replaced or rewritten file is found.
func (h *Home) Each(ctx context.Context, fn func(i int, e LockEntry, verr error) error) error {
	unlock, err := h.lock(ctx, false)
	if err != nil {
		return err
	}
	defer unlock()
	l, err := h.ReadLock()
	if err != nil {
		return err
	}
	var known map[string]packs.FolderCheck
	ix := h.getIndex()
	if ix != nil {
		if known, err = ix.FolderChecks(ctx); err != nil {
			h.log.Warn("packs: the index of pack folders failed; hashing every folder", "err", err)
			known = nil
		}
	}
	var (
		mu  sync.Mutex
		put = map[string]packs.FolderCheck{}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(goruntime.GOMAXPROCS(0))
	for i, e := range l.Packs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			check, verr := h.checkFolder(e, known[e.Name])
			if check != nil && ix != nil {
				mu.Lock()
				put[e.Name] = *check
				mu.Unlock()
			}
			return fn(i, e, verr)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var drop []string
	for name := range known {
		if _, ok := l.Entry(name); !ok {
			drop = append(drop, name)
		}
	}
	if len(put) > 0 || len(drop) > 0 {
		if err := ix.RecordFolderChecks(ctx, put, drop); err != nil {
			h.log.Warn("packs: cannot record the checks of pack folders; the next listing hashes them again", "err", err)
		}
	}
	return nil
}

// checkFolder checks the folder of e against e.Integrity, trusting known
// (a check recorded earlier, or the zero value) for a folder whose files
// all kept their stamps. It returns the check to record, or nil when there
// is nothing new or its stamps are not settled yet. The caller holds the
// lock.
func (h *Home) checkFolder(e LockEntry, known packs.FolderCheck) (*packs.FolderCheck, error) {
	dir, err := h.PackDir(e.Name)
	if err != nil {
		return nil, err
	}
	// A file changed after start gets a stamp a tick newer than one
	// settled before start: stamps settled before it can be recorded.
	digest, fresh, err := known.Check(dir, h.now())
	return fresh, h.compareDigest(e, dir, digest, err)
}

// verifyEntry checks the folder of e against e.Integrity. The caller holds
// the lock.
func (h *Home) verifyEntry(c *packs.ContentCache, e LockEntry) (packs.Content, error) {
	dir, err := h.PackDir(e.Name)
	if err != nil {
		return packs.Content{}, err
	}
	var got packs.Content
	if c != nil {
		got, err = c.Read(dir)
	} else {
		got.Digest, err = packs.Digest(dir)
	}
	if err := h.compareDigest(e, dir, got.Digest, err); err != nil {
		return packs.Content{}, err
	}
	return got, nil
}

// compareDigest is the outcome of checking the folder dir of e: digest is
// what its files hash to, err why they could not be hashed.
func (h *Home) compareDigest(e LockEntry, dir, digest string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s: its folder %s is missing: %w", packs.ErrModified, e.Name, dir, err)
	case err != nil:
		return fmt.Errorf("%w: %s: %w", packs.ErrModified, e.Name, err)
	case subtle.ConstantTimeCompare([]byte(digest), []byte(e.Integrity)) != 1:
		return fmt.Errorf("%w: %s: the files in %s no longer match packs.lock (%s, found %s)", packs.ErrModified, e.Name, dir, e.Integrity, digest)
	}
	return nil
}

// journal records the one transaction in flight, written before the first
// rename. Recovery reads it to decide between finishing and undoing: the
// transaction committed exactly when packs.lock holds its outcome.
type journal struct {
	Name   string `json:"name"`
	Aside  string `json:"aside"`   // folder under tmp/ that holds the old version
	HadOld bool   `json:"had_old"` // packs/<name> existed when the transaction began
	Remove bool   `json:"remove"`  // a remove; otherwise an install
	// For an install, the new entry's integrity and time identify it.
	Integrity string    `json:"integrity,omitempty"`
	Installed time.Time `json:"installed"`
}

// step runs the test hook, if any, before a transaction step.
func (h *Home) step(name string) error {
	if h.hook == nil {
		return nil
	}
	return h.hook(name)
}

// apply runs a transaction whose journal j is not yet written. For an
// install, staged is the verified new folder and entry its lock entry. The
// steps are:
//
//  1. write the journal;
//  2. rename packs/<name> aside into tmp/ (when it exists);
//  3. rename the staged folder to packs/<name> (install only);
//  4. write packs.lock: the commit point;
//  5. delete the old folder and the journal.
//
// A crash or error before 4 rolls back to the old state, after 4 rolls
// forward: see recover. The caller holds the exclusive lock.
func (h *Home) apply(j journal, staged string, entry *LockEntry) error {
	cur, err := h.PackDir(j.Name)
	if err != nil {
		return err
	}
	// Another process may have crashed mid-change since this Home was
	// opened: settle its journal before writing ours.
	if err := h.recover(); err != nil {
		return err
	}
	lf, err := h.ReadLock()
	if err != nil {
		return err
	}
	if _, err := os.Lstat(cur); err == nil {
		j.HadOld = true
	}
	if err := h.step("journal"); err != nil {
		return err
	}
	data, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("packs: journal: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(h.tmp(), journalFile), data); err != nil {
		return err
	}
	if j.HadOld {
		if err := h.step("aside"); err != nil {
			return err
		}
		if err := os.Rename(cur, filepath.Join(h.tmp(), j.Aside)); err != nil {
			return fmt.Errorf("packs: move old %s aside: %w", j.Name, err)
		}
	}
	if entry != nil {
		if err := h.step("rename"); err != nil {
			return err
		}
		if err := os.Rename(staged, cur); err != nil {
			return fmt.Errorf("packs: move %s into place: %w", j.Name, err)
		}
		lf.put(*entry)
	} else {
		lf.remove(j.Name)
	}
	if err := syncDirs(h.PacksDir(), h.tmp()); err != nil {
		return err
	}
	if err := h.step("lock"); err != nil {
		return err
	}
	if err := WriteLock(h.LockPath(), lf); err != nil {
		return err
	}
	// Committed. A failure from here on leaves only garbage, which the
	// next OpenHome clears; the change itself stands.
	err = h.step("cleanup")
	if err == nil {
		err = h.recover()
	}
	if err != nil {
		h.log.Warn("packs: change committed, cleanup deferred to the next start", "pack", j.Name, "err", err)
	}
	return nil
}

// recover completes or undoes the transaction in the journal, if any. The
// caller holds the exclusive lock.
func (h *Home) recover() error {
	jpath := filepath.Join(h.tmp(), journalFile)
	data, err := os.ReadFile(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("packs: read journal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || !validDirName(j.Name) || !strings.HasPrefix(j.Aside, asidePrefix) || !validDirName(j.Aside) {
		return fmt.Errorf("packs: journal %s is corrupt (%v): move it away and check %s by hand", jpath, err, h.PacksDir())
	}
	lf, err := h.ReadLock()
	if err != nil {
		return err
	}
	cur := filepath.Join(h.PacksDir(), j.Name)
	aside := filepath.Join(h.tmp(), j.Aside)
	e, ok := lf.Entry(j.Name)
	committed := !ok
	if !j.Remove {
		committed = ok && e.Integrity == j.Integrity && e.Installed.Equal(j.Installed)
	}
	// Rolling forward only deletes the old version, which is idempotent:
	// if a crash loses the deletion, the next recovery repeats it, so no
	// flush is needed. Rolling back must make its renames durable before
	// the journal goes, or a crash could lose both.
	switch {
	case committed:
		err = os.RemoveAll(aside)
	case pathExists(aside):
		if err = os.RemoveAll(cur); err == nil {
			err = os.Rename(aside, cur)
		}
	case !j.HadOld:
		err = os.RemoveAll(cur)
	}
	if err == nil && !committed {
		err = syncDirs(h.PacksDir(), h.tmp())
	}
	if err != nil {
		return fmt.Errorf("packs: recover interrupted change to %s: %w: check %s", j.Name, err, h.PacksDir())
	}
	if err := os.Remove(jpath); err != nil {
		return fmt.Errorf("packs: remove journal: %w", err)
	}
	if !committed {
		h.log.Warn("packs: rolled back an interrupted change", "pack", j.Name, "remove", j.Remove)
	}
	return nil
}

// cleanTmp deletes what interrupted processes left in tmp/: staging folders
// no live process holds, and temporary files. The caller holds the
// exclusive lock, so no stage is between creation and locking.
func (h *Home) cleanTmp() {
	ents, err := os.ReadDir(h.tmp())
	if err != nil {
		return
	}
	for _, d := range ents {
		p := filepath.Join(h.tmp(), d.Name())
		if strings.HasPrefix(d.Name(), stagePrefix) {
			release, ok := tryLockDir(p)
			if !ok {
				continue // a live process is staging here
			}
			release()
		}
		if err := os.RemoveAll(p); err != nil {
			h.log.Warn("packs: cannot clean temporary files", "path", p, "err", err)
		}
	}
}

// lock takes the state directory's lock: exclusive for changes, shared for
// a stable read. It waits, polling, until ctx is done.
func (h *Home) lock(ctx context.Context, exclusive bool) (func(), error) {
	f, err := os.Open(h.dir)
	if err != nil {
		return nil, fmt.Errorf("packs: lock state directory: %w", err)
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		ok, err := flock(f, exclusive)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("packs: lock state directory: %w", err)
		}
		if ok {
			return func() { f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("packs: waiting for another packs process to finish with %s: %w", h.dir, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// tryLockDir takes an exclusive lock on the folder p without waiting. It
// returns the release function and true when the lock was free.
func tryLockDir(p string) (func(), bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	ok, err := flock(f, true)
	if err != nil || !ok {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// syncDirs fsyncs folders so renames in them are durable.
func syncDirs(dirs ...string) error {
	if err := syncAll(dirs...); err != nil {
		return fmt.Errorf("packs: sync: %w", err)
	}
	return nil
}

func pathExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
