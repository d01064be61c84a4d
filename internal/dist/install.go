package dist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// Errors from installing. Check them with errors.Is.
var (
	// ErrUnsupportedSource: the source is neither a folder nor a local
	// .tar.gz or .tgz file.
	ErrUnsupportedSource = errors.New("packs: unsupported source")
	// ErrNotRequested: a grant names a capability the pack does not ask for.
	ErrNotRequested = errors.New("packs: capability not requested")
)

// StageOptions configure Home.Stage.
type StageOptions struct {
	Load   packs.LoadOptions
	Limits ArchiveLimits // for archive sources; zero fields mean the defaults
}

// Staged is a pack copied into the state directory, loaded and validated,
// waiting for Commit (install it) or Discard. What Commit installs is
// exactly what was loaded here: the source is not read again.
type Staged struct {
	Pack      *packs.Pack     // loaded from the staged copy
	Source    string          // "file:///abs/path" of the folder or archive
	Integrity string          // Digest of the staged copy
	Findings  []packs.Finding // warnings, with files named as in the source
	Resolved  string          // LockEntry.Resolved: set by StageSource
	Signer    string          // LockEntry.Signer: set by StageSource

	home    *Home
	root    string // tmp/stage-XXXX, locked while the Staged lives
	dir     string // root/<name>: the pack
	release func()
}

// Ref is how grants and policy name the staged pack once it is installed.
func (s *Staged) Ref() capability.PackRef {
	return capability.PackRef{Name: s.Name(), Digest: s.Integrity, Signer: s.Signer}
}

// Stage copies source (a pack folder, or a .tar.gz/.tgz archive of one)
// into a private folder of the state directory, loads it and computes its
// integrity. When the pack has errors it returns a *LoadError whose findings
// name the files as the source does. Call Commit or Discard on the result.
//
// A folder is copied without its .git folders; a symlink in it must point
// inside the pack. An archive is extracted with ExtractTarGz under
// opt.Limits, and the pack folder is named after its single top-level
// folder, or after the archive file without its extension.
func (h *Home) Stage(ctx context.Context, source string, opt StageOptions) (*Staged, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return nil, fmt.Errorf("packs: add %s: %w", source, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("packs: add %s: %w", source, err)
	}
	archive := fi.Mode().IsRegular() && archiveBase(abs) != ""
	if !fi.IsDir() && !archive {
		return nil, fmt.Errorf("%w: %s is neither a pack folder nor a .tar.gz/.tgz file", ErrUnsupportedSource, source)
	}
	s, err := h.newStage(ctx)
	if err != nil {
		return nil, err
	}
	s.Source = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	display := strings.TrimSuffix(source, string(filepath.Separator))
	if archive {
		display += "!"
		err = s.extract(abs, opt.Limits)
	} else {
		s.dir = filepath.Join(s.root, filepath.Base(abs))
		err = copyTree(ctx, abs, s.dir)
	}
	if err == nil {
		err = s.load(display, opt.Load)
	}
	if err != nil {
		s.Discard()
		return nil, err
	}
	return s, nil
}

// newStage makes and locks a staging folder under tmp/. It holds the shared
// state lock meanwhile, so OpenHome's cleanup (exclusive) never sees the
// folder unlocked.
func (h *Home) newStage(ctx context.Context) (*Staged, error) {
	unlock, err := h.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	root, err := os.MkdirTemp(h.tmp(), stagePrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("packs: stage: %w", err)
	}
	release, ok := tryLockDir(root)
	if !ok {
		os.RemoveAll(root)
		return nil, fmt.Errorf("packs: stage: cannot lock %s", root)
	}
	return &Staged{home: h, root: root, release: release}, nil
}

// extract expands the archive at abs into the stage.
func (s *Staged) extract(abs string, lim ArchiveLimits) error {
	f, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("packs: add: %w", err)
	}
	defer f.Close()
	tmp := filepath.Join(s.root, "archive")
	top, err := extractTarGz(f, tmp, lim)
	if err != nil {
		return fmt.Errorf("packs: add %s: %w", abs, err)
	}
	name := top
	if name == "" {
		name = archiveBase(abs)
	}
	if !validDirName(name) {
		return fmt.Errorf("%w: archive %s: %q cannot be a pack folder name: put the pack in one top-level folder named after it", ErrArchiveUnsafe, abs, name)
	}
	s.dir = filepath.Join(s.root, name)
	if s.dir != tmp {
		if err := os.Rename(tmp, s.dir); err != nil {
			return fmt.Errorf("packs: add: %w", err)
		}
	}
	// An archive packs pack made holds only what the pack ships; one made
	// by hand may hold more, which is not installed either.
	if err := packs.PruneExcluded(s.dir); err != nil {
		return fmt.Errorf("packs: add %s: %w", abs, err)
	}
	return nil
}

// load loads and validates the staged copy, computes its integrity and
// flushes it to stable storage.
// display replaces the staging folder in finding file names.
func (s *Staged) load(display string, opt packs.LoadOptions) error {
	p, err := packs.Load(s.dir, opt)
	var le *packs.LoadError
	if errors.As(err, &le) {
		return &packs.LoadError{Findings: s.rename(le.Findings, display)}
	}
	if err != nil {
		return err
	}
	if base := filepath.Base(s.dir); p.Name != base {
		return fmt.Errorf("%w: the pack is named %q but its folder is %q: rename one to match", packs.ErrInvalidPack, p.Name, base)
	}
	s.Pack = p
	s.Findings = s.rename(p.Findings, display)
	if s.Integrity, err = packs.Digest(s.dir); err != nil {
		return err
	}
	// Commit renames this tree into place: its content must be on stable
	// storage before packs.lock names its digest.
	return syncTree(s.dir)
}

// rename rewrites the staged folder in finding file names to display.
func (s *Staged) rename(in []packs.Finding, display string) []packs.Finding {
	out := make([]packs.Finding, len(in))
	for i, f := range in {
		switch rel, err := filepath.Rel(s.dir, f.File); {
		case err == nil && rel == ".":
			f.File = display
		case err == nil && filepath.IsLocal(rel):
			f.File = display + string(filepath.Separator) + rel
		}
		out[i] = f
	}
	return out
}

// Name is the name the pack will be installed under.
func (s *Staged) Name() string { return filepath.Base(s.dir) }

// Commit installs the staged pack as packs/<name>, atomically replacing an
// installed version, and records its lock entry with grant as the granted
// capabilities, each with everything the pack asks for under it (each must
// be one the pack asks for, else ErrNotRequested). A crash at any moment
// leaves either the old installation or the new one; the next OpenHome
// finishes the job. The Staged is spent afterwards.
func (s *Staged) Commit(ctx context.Context, grant []capability.Name) (LockEntry, error) {
	grants := make([]capability.UserGrant, len(grant))
	for i, n := range grant {
		grants[i] = capability.UserGrant{Capability: n, Scope: capability.ScopePersistent}
	}
	return s.CommitGrants(ctx, grants)
}

// CommitGrants is Commit with grants as a person writes them (see
// capability.ParseGrantList): a grant may narrow the resources of its
// capability, and its lock entry records exactly the granted resources
// (capability.ToLock). Each grant must be persistent and within what the
// pack asks for: a capability it does not ask for is ErrNotRequested, a
// wider resource or another scope a *capability.SpecError.
func (s *Staged) CommitGrants(ctx context.Context, grants []capability.UserGrant) (LockEntry, error) {
	if s.release == nil {
		return LockEntry{}, errors.New("packs: commit: the staged pack was already committed or discarded")
	}
	req := s.Pack.Request()
	for _, u := range grants {
		switch {
		case !req.Has(u.Capability):
			return LockEntry{}, fmt.Errorf("%w: %s does not ask for %s: grant only what it asks for", ErrNotRequested, s.Name(), u.Capability)
		case u.Scope != capability.ScopePersistent:
			return LockEntry{}, fmt.Errorf("packs: install %s: %w", s.Name(), &capability.SpecError{Spec: u.String(),
				Reason: "scope " + string(u.Scope) + ": a grant made at install lasts until revoked; grant chat or once scopes later with packs grant"})
		}
		if err := capability.CheckGrant(req, u); err != nil {
			return LockEntry{}, fmt.Errorf("packs: install %s: %w", s.Name(), err)
		}
	}
	var caps map[capability.Name]LockCapability
	if len(req.Names()) > 0 {
		caps = capability.ToLock(req, grants)
	}
	e := LockEntry{
		Name: s.Name(), Source: s.Source, Integrity: s.Integrity,
		Installed: time.Now().UTC(), Capabilities: caps,
		Resolved: s.Resolved, Signer: s.Signer,
	}
	if s.Pack.Manifest != nil {
		e.Version = s.Pack.Manifest.Version
	}
	h := s.home
	unlock, err := h.lock(ctx, true)
	if err != nil {
		return LockEntry{}, err
	}
	defer unlock()
	j := journal{Name: e.Name, Aside: asidePrefix + e.Name, Integrity: e.Integrity, Installed: e.Installed}
	if err := h.apply(j, s.dir, &e); err != nil {
		if rerr := h.recover(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		s.Discard()
		return LockEntry{}, err
	}
	s.Pack.Dir = filepath.Join(h.PacksDir(), e.Name)
	s.Discard()
	return e, nil
}

// Discard deletes the staging folder. It is safe to call more than once and
// after Commit.
func (s *Staged) Discard() {
	if s.release == nil {
		return
	}
	os.RemoveAll(s.root)
	s.release()
	s.release = nil
}

// Remove uninstalls the pack name: its folder and its lock entry go
// together, atomically. It returns the entry that was removed.
func (h *Home) Remove(ctx context.Context, name string) (LockEntry, error) {
	unlock, err := h.lock(ctx, true)
	if err != nil {
		return LockEntry{}, err
	}
	defer unlock()
	e, err := h.Entry(name)
	if err != nil {
		return LockEntry{}, err
	}
	if err := h.apply(journal{Name: name, Aside: asidePrefix + name, Remove: true}, "", nil); err != nil {
		if rerr := h.recover(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return LockEntry{}, err
	}
	return e, nil
}

// archiveBase returns the file name of an archive path without its
// .tar.gz or .tgz extension, or "" when it has neither.
func archiveBase(p string) string {
	base := filepath.Base(p)
	for _, ext := range []string{".tar.gz", ".tgz"} {
		if strings.HasSuffix(strings.ToLower(base), ext) && len(base) > len(ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return ""
}

// copyTree copies the pack folder src to dst (which must not exist): what
// it ships (packs.WalkShipped: no .git folders, nothing its ignore files exclude). Symlinks are copied as links and must resolve
// inside the pack; anything but files, folders and symlinks is refused.
func copyTree(ctx context.Context, src, dst string) error {
	err := packs.WalkShipped(src, func(p, slashRel string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := filepath.FromSlash(slashRel)
		to := filepath.Join(dst, rel)
		switch mode := d.Type(); {
		case d.IsDir():
			return os.Mkdir(to, 0o755)
		case mode.IsRegular():
			return copyFile(p, to)
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if packs.LinkLeaves(slashRel, target) {
				return fmt.Errorf("%w: symlink %s -> %s leaves the pack: make it relative and inside the pack", packs.ErrPathEscape, slashRel, target)
			}
			return os.Symlink(target, to)
		default:
			return fmt.Errorf("%w: %s is a %s: a pack holds only files, folders and symlinks", packs.ErrUnsupportedFile, p, packs.FileKindName(mode))
		}
	})
	if err == nil {
		if lerr := checkLinks(dst); lerr != nil {
			err = fmt.Errorf("%w: %w", packs.ErrPathEscape, lerr)
		}
	}
	if err != nil {
		return fmt.Errorf("packs: copy %s: %w", src, err)
	}
	return nil
}

// copyFile copies one regular file, keeping only its execute bit.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if fi.Mode()&0o111 != 0 {
		perm = 0o755
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
