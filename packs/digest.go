package packs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// digestPrefix starts every integrity string: "sha256:" and 64 hex digits.
const digestPrefix = "sha256:"

// ErrUnsupportedFile is wrapped by errors about a pack entry that is neither
// a regular file, a directory nor a symlink (a device, a FIFO, a socket).
var ErrUnsupportedFile = errors.New("packs: unsupported file type")

// Digest returns the integrity of the pack folder dir: "sha256:" followed by
// the hex SHA-256 of its canonical content. The canonical content lists every
// regular file and symlink under dir, sorted by slash-separated relative path;
// for each, the path, a kind byte ('f' plain file, 'x' file with any execute
// bit, 'l' symlink), the size in bytes and the bytes themselves (for a
// symlink: its target, not what it points to). Directories, modification
// times, owners and the order in which the file system lists entries play no
// part, so a copy or an extracted archive has the same digest as its source.
// Digest never follows a symlink.
func Digest(dir string) (string, error) {
	h := sha256.New()
	entries, err := digestEntries(dir)
	if err != nil {
		return "", err
	}
	if err := digestTo(h, dir, entries, nil, nil); err != nil {
		return "", err
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// digestEntry is one file or symlink of the canonical content.
type digestEntry struct {
	rel   string // slash-separated, relative to the pack root
	kind  byte
	size  int64
	stamp Stamp
}

// pathIn is where e is on disk in the pack folder dir.
func (e digestEntry) pathIn(dir string) string { return filepath.Join(dir, filepath.FromSlash(e.rel)) }

// digestEntries lists the canonical content's entries of dir, sorted.
func digestEntries(dir string) ([]digestEntry, error) {
	entries, handled, err := walkEntries(dir)
	if !handled {
		entries, err = walkDirEntries(dir)
	}
	if err != nil {
		return nil, err
	}
	// A walk visits in lexical order of each directory at best, but that
	// is not the order of full paths ("a-b" sorts before "a/b" as a path,
	// after it as a walk); sort the full relative paths so the order is
	// defined by the names alone.
	slices.SortFunc(entries, func(a, b digestEntry) int { return strings.Compare(a.rel, b.rel) })
	return entries, nil
}

// walkDirEntries lists the entries of dir, unsorted, with filepath.WalkDir.
func walkDirEntries(dir string) ([]digestEntry, error) {
	var entries []digestEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("packs: digest %s: %w", dir, err)
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return fmt.Errorf("packs: digest %s: %w", dir, err)
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("packs: digest %s: %w", dir, err)
		}
		e := digestEntry{rel: filepath.ToSlash(rel), size: info.Size(), stamp: StampOf(info)}
		switch mode := info.Mode(); {
		case mode.IsRegular() && mode&0o111 != 0:
			e.kind = 'x'
		case mode.IsRegular():
			e.kind = 'f'
		case mode&fs.ModeSymlink != 0:
			e.kind = 'l'
		default:
			return fmt.Errorf("%w: %s is a %s: a pack holds only files, folders and symlinks", ErrUnsupportedFile, p, FileKindName(mode))
		}
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// digestTo writes the canonical content of entries to h. When files is not
// nil, it also stores the SHA-256 of each regular file in it, by rel. When
// kept is not nil, it also stores there the bytes of each WebAssembly
// module (a ".wasm" file) as it hashed them.
func digestTo(h hash.Hash, dir string, entries []digestEntry, files map[string]string, kept map[string][]byte) error {
	// A kept module's own hash runs on its own goroutine, beside the pack's
	// hash of the same bytes: both are needed (the pack's digest is one
	// stream, the runtime keys a module by its own SHA-256), and on two cores
	// the second pass then costs no wall time.
	var (
		wg      sync.WaitGroup
		modules []*keptSum
	)
	defer wg.Wait()
	var head []byte
	for _, e := range entries {
		head = append(head[:0], e.rel...)
		head = append(head, 0, e.kind)
		if e.kind == 'l' {
			target, err := os.Readlink(e.pathIn(dir))
			if err != nil {
				return fmt.Errorf("packs: digest %s: %w", dir, err)
			}
			head = strconv.AppendInt(head, int64(len(target)), 10)
			head = append(head, 0)
			head = append(head, target...)
			h.Write(head)
			continue
		}
		head = strconv.AppendInt(head, e.size, 10)
		head = append(head, 0)
		h.Write(head)
		if files == nil {
			if err := hashFile(h, e.pathIn(dir), e.size); err != nil {
				return err
			}
			continue
		}
		if kept != nil && strings.HasSuffix(e.rel, ".wasm") {
			data, err := readFileSize(e.pathIn(dir), e.size)
			if err != nil {
				return err
			}
			m := &keptSum{rel: e.rel}
			wg.Go(func() { m.sum = sha256.Sum256(data) })
			modules = append(modules, m)
			h.Write(data)
			kept[e.rel] = data
			continue
		}
		fh := sha256.New()
		if err := hashFile(io.MultiWriter(h, fh), e.pathIn(dir), e.size); err != nil {
			return err
		}
		files[e.rel] = hex.EncodeToString(fh.Sum(nil))
	}
	wg.Wait()
	for _, m := range modules {
		files[m.rel] = hex.EncodeToString(m.sum[:])
	}
	return nil
}

// keptSum is a kept module's SHA-256, computed beside the pack's digest.
type keptSum struct {
	rel string
	sum [sha256.Size]byte
}

// hashFile writes exactly size bytes of the file at p to h, and fails if the
// file is not that size any more (it changed while we read it).
func hashFile(h io.Writer, p string, size int64) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("packs: digest: %w", err)
	}
	defer f.Close()
	n, err := io.Copy(h, io.LimitReader(f, size+1))
	if err != nil {
		return fmt.Errorf("packs: digest: %w", err)
	}
	if n != size {
		return fmt.Errorf("packs: digest: %s changed size while it was read (%d bytes, then %d): try again", p, size, n)
	}
	return nil
}

// readFileSize reads the file at p, which must hold exactly size bytes
// (else it changed while we read it).
func readFileSize(p string, size int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("packs: digest: %w", err)
	}
	defer f.Close()
	data := make([]byte, size)
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("packs: digest: %w", err)
	}
	if m, _ := f.Read(make([]byte, 1)); int64(n) != size || m != 0 {
		return nil, fmt.Errorf("packs: digest: %s changed size while it was read (%d bytes, then %d): try again", p, size, int64(n+m))
	}
	return data, nil
}

// FileKindName names a file mode that a pack may not hold.
func FileKindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ValidDigest reports whether s is "sha256:" followed by 64 lower-case hex digits.
func ValidDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for _, c := range hexPart {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
