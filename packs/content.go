package packs

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stamp identifies what a file held when it was last read, without reading
// it: a change of content changes the size, the modification time or the
// change time (which cannot be set back without changing the system
// clock), and a replacement changes the inode. Git's index relies on the
// same fields.
type Stamp struct {
	dev, ino     uint64
	mode         fs.FileMode
	size         int64
	mtime, ctime time.Time
	full         bool // the stat had an inode and a change time
}

// StampOf returns the stamp of a file from its (l)stat.
func StampOf(fi fs.FileInfo) Stamp {
	s := Stamp{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
	s.dev, s.ino, s.ctime, s.full = statIDs(fi)
	return s
}

// Same reports whether two stamps say the file is unchanged. A stamp
// without an inode and a change time (a platform whose stat has none) is
// never the same as another: a size and a modification time alone can be
// set back, so the file is read again.
func (s Stamp) Same(o Stamp) bool { return s.full && s == o }

// MarshalText writes the stamp as seven colon-separated decimal numbers:
// device, inode, mode, size, the modification and change times in
// nanoseconds since 1970, and 1 for a full stamp (0 for one without an
// inode and a change time). It is how a stamp is kept across processes
// (see Index); UnmarshalText gives back a stamp Same as the original.
func (s Stamp) MarshalText() ([]byte, error) {
	var mtime, ctime, full int64
	if s.full {
		mtime, ctime, full = s.mtime.UnixNano(), s.ctime.UnixNano(), 1
	}
	var b []byte
	for i, n := range []int64{int64(s.dev), int64(s.ino), int64(s.mode), s.size, mtime, ctime, full} {
		if i > 0 {
			b = append(b, ':')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return b, nil
}

// UnmarshalText reads what MarshalText wrote.
func (s *Stamp) UnmarshalText(b []byte) error {
	parts := strings.Split(string(b), ":")
	if len(parts) != 7 {
		return fmt.Errorf("packs: stamp %q: want seven numbers", b)
	}
	var n [7]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return fmt.Errorf("packs: stamp %q: %w", b, err)
		}
		n[i] = v
	}
	*s = Stamp{dev: uint64(n[0]), ino: uint64(n[1]), mode: fs.FileMode(n[2]), size: n[3]}
	if n[6] == 1 {
		s.mtime, s.ctime, s.full = time.Unix(0, n[4]), time.Unix(0, n[5]), true
	}
	return nil
}

// SettledBefore reports whether the file's last change is at least a tick
// before t: a later change of the file then changes its stamp, however
// coarse the file system's clock (see racy). A stamp without a change time
// is never settled.
func (s Stamp) SettledBefore(t time.Time) bool {
	return s.full && t.Sub(s.mtime) >= stampTick && t.Sub(s.ctime) >= stampTick
}

// Content is what a pack folder held when it was read: its integrity
// (Digest's) and the hex SHA-256 of each regular file, by slash-separated
// path relative to the folder.
type Content struct {
	Digest string
	Files  map[string]string
}

// ContentCache reads pack folders' Content. It remembers the stamp of every
// entry it hashed, so a folder whose files are unchanged is checked with one
// lstat per file instead of reading them all again. It is safe for
// concurrent use; the zero value is ready.
type ContentCache struct {
	// KeepModules makes Read keep the bytes of each WebAssembly module
	// (".wasm" file) it hashes until TakeModule takes them: a command that
	// checks a pack and then runs one of its tools reads the module once.
	// A long-lived process leaves it off (the bytes would stay in memory).
	KeepModules bool

	mu   sync.Mutex
	dirs map[string]*cachedContent
}

type cachedContent struct {
	stamps  map[string]Stamp
	content Content
	kept    map[string][]byte // KeepModules: module bytes not taken yet
}

// Read returns the content of the pack folder dir.
func (c *ContentCache) Read(dir string) (Content, error) {
	entries, err := digestEntries(dir)
	if err != nil {
		return Content{}, err
	}
	c.mu.Lock()
	cached := c.dirs[dir]
	c.mu.Unlock()
	if cached != nil && sameStamps(cached.stamps, entries) {
		return cached.content, nil
	}
	h := sha256.New()
	files := map[string]string{}
	var kept map[string][]byte
	if c.KeepModules {
		kept = map[string][]byte{}
	}
	if err := digestTo(h, dir, entries, files, kept); err != nil {
		return Content{}, err
	}
	fresh := &cachedContent{stamps: make(map[string]Stamp, len(entries)), kept: kept,
		content: Content{Digest: digestPrefix + hex.EncodeToString(h.Sum(nil)), Files: files}}
	for _, e := range entries {
		fresh.stamps[e.rel] = e.stamp
	}
	c.mu.Lock()
	if c.dirs == nil {
		c.dirs = map[string]*cachedContent{}
	}
	c.dirs[dir] = fresh
	c.mu.Unlock()
	return fresh.content, nil
}

// TakeModule returns the bytes of the module rel (slash-separated, relative
// to the pack folder dir) as the last Read of dir hashed them (KeepModules),
// with their hex SHA-256 and the stamp the file had, and forgets them. It
// returns false when Read kept no such bytes.
func (c *ContentCache) TakeModule(dir, rel string) ([]byte, string, Stamp, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cached := c.dirs[dir]
	if cached == nil {
		return nil, "", Stamp{}, false
	}
	data, ok := cached.kept[rel]
	if !ok {
		return nil, "", Stamp{}, false
	}
	delete(cached.kept, rel)
	return data, cached.content.Files[rel], cached.stamps[rel], true
}

// Verify reads dir and checks that its digest is want (a packs.lock
// integrity). A mismatch wraps ErrModified.
func (c *ContentCache) Verify(name, dir, want string) (Content, error) {
	got, err := c.Read(dir)
	if err != nil {
		return Content{}, fmt.Errorf("%w: %s: %w", ErrModified, name, err)
	}
	if subtle.ConstantTimeCompare([]byte(got.Digest), []byte(want)) != 1 {
		return Content{}, fmt.Errorf("%w: %s: the files in %s no longer match packs.lock (%s, found %s)", ErrModified, name, dir, want, got.Digest)
	}
	return got, nil
}

// FileSHA returns the hex SHA-256 of the regular file at the absolute path
// p, when p lies inside the pack folder dir and was part of c.
func (c Content) FileSHA(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return "", false
	}
	sha, ok := c.Files[filepath.ToSlash(rel)]
	return sha, ok
}

// stampTick is how far apart two changes of a file must be for their
// stamps to differ on any file system packs runs on: file times advance in
// ticks (two seconds on FAT).
const stampTick = 2 * time.Second

// ErrModified: the installed files no longer match their lock entry's
// integrity (or are gone). Such a pack must not run.
var ErrModified = errors.New("packs: installed pack modified")

// sameStamps reports whether entries are exactly the paths of stamps, each
// with its stamp.
func sameStamps(stamps map[string]Stamp, entries []digestEntry) bool {
	if len(stamps) != len(entries) {
		return false
	}
	for _, de := range entries {
		if s, ok := stamps[de.rel]; !ok || !s.Same(de.stamp) {
			return false
		}
	}
	return true
}

// FolderCheck is what hashing an installed pack's folder found: its
// Digest, and the stamp of every file and symlink hashed, by
// slash-separated path. A folder that later lists the same paths with the
// same stamps holds the same content, as git's index assumes of a work
// tree; dist.Home.Each then compares Digest with the lock entry without reading a
// file.
type FolderCheck struct {
	Digest string
	Stamps map[string]Stamp
}

// Check hashes the folder dir, trusting c for a folder whose files all kept
// their stamps (then digest is c.Digest and fresh is nil). Otherwise fresh
// is the check to record, or nil when a stamp is not settled before start.
func (c FolderCheck) Check(dir string, start time.Time) (digest string, fresh *FolderCheck, err error) {
	entries, err := digestEntries(dir)
	switch {
	case err != nil:
	case c.Digest != "" && sameStamps(c.Stamps, entries):
		digest = c.Digest
	default:
		hsh := sha256.New()
		if err = digestTo(hsh, dir, entries, nil, nil); err != nil {
			break
		}
		digest = digestPrefix + hex.EncodeToString(hsh.Sum(nil))
		fresh = &FolderCheck{Digest: digest, Stamps: make(map[string]Stamp, len(entries))}
		for _, de := range entries {
			if !de.stamp.SettledBefore(start) {
				fresh = nil
				break
			}
			fresh.Stamps[de.rel] = de.stamp
		}
	}
	return digest, fresh, err
}
