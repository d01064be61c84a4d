package packs

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
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
	if cached != nil && len(cached.stamps) == len(entries) {
		same := true
		for _, e := range entries {
			if s, ok := cached.stamps[e.rel]; !ok || !s.Same(e.stamp) {
				same = false
				break
			}
		}
		if same {
			return cached.content, nil
		}
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
		content: Content{Digest: DigestPrefix + hex.EncodeToString(h.Sum(nil)), Files: files}}
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
