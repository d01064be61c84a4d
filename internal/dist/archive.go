package dist

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// Errors from ExtractTarGz. Check them with errors.Is.
var (
	// ErrArchiveUnsafe: an entry would land outside the pack (absolute path,
	// "..", a symlink that leaves the pack or is traversed), or is a kind of
	// file a pack may not hold (hard link, device, FIFO).
	ErrArchiveUnsafe = errors.New("packs: unsafe archive")
	// ErrArchiveTooLarge: the archive expands past ArchiveLimits.
	ErrArchiveTooLarge = errors.New("packs: archive too large")
	// ErrArchiveInvalid: the input is not a gzip-compressed tar archive.
	ErrArchiveInvalid = errors.New("packs: invalid archive")
)

// ArchiveLimits bound what one archive may expand to. A zero field means the
// default from DefaultArchiveLimits.
type ArchiveLimits struct {
	MaxBytes     int64 // total size of all files, expanded
	MaxFiles     int   // number of entries: files, folders and symlinks
	MaxFileBytes int64 // size of any one file
}

// DefaultArchiveLimits are 64 MiB in all, 10,000 entries, 16 MiB per file.
func DefaultArchiveLimits() ArchiveLimits {
	return ArchiveLimits{MaxBytes: 64 << 20, MaxFiles: 10_000, MaxFileBytes: 16 << 20}
}

func (l ArchiveLimits) withDefaults() ArchiveLimits {
	d := DefaultArchiveLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	return l
}

// ExtractTarGz expands the gzip-compressed tar archive r into the folder dst,
// which must not exist yet. When every entry of the archive sits under one
// top-level folder, that folder is stripped: dst receives its content.
//
// Only regular files, folders and symlinks whose target stays inside the
// pack are accepted; owners, times and permission bits other than "any
// execute bit" are dropped, so files come out 0644 or 0755. Nothing is
// flushed to stable storage (installing does that once, for any source).
// On any error nothing is left behind: dst does not exist.
func ExtractTarGz(r io.Reader, dst string, lim ArchiveLimits) error {
	_, err := extractTarGz(r, dst, lim)
	return err
}

// extractTarGz is ExtractTarGz that also returns the name of the stripped
// top-level folder ("" when nothing was stripped); installing from an
// archive names the pack folder after it.
func extractTarGz(r io.Reader, dst string, lim ArchiveLimits) (string, error) {
	lim = lim.withDefaults()
	if _, err := os.Lstat(dst); err == nil {
		return "", fmt.Errorf("packs: extract: %s already exists: extract into a new folder", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("packs: extract: %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(dst), ".extract-*")
	if err != nil {
		return "", fmt.Errorf("packs: extract: %w", err)
	}
	top, err := extractInto(r, stage, lim)
	if err == nil {
		err = moveExtracted(stage, top, dst)
	}
	if rmErr := os.RemoveAll(stage); err == nil && rmErr != nil {
		err = fmt.Errorf("packs: extract: %w", rmErr)
	}
	if err != nil {
		os.RemoveAll(dst)
		return "", err
	}
	return top, nil
}

// moveExtracted renames the extracted tree (stage, or stage/top when a
// top-level folder is stripped) to dst and checks its symlinks.
func moveExtracted(stage, top, dst string) error {
	src := stage
	if top != "" {
		src = filepath.Join(stage, top)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("packs: extract: %w", err)
	}
	if err := checkLinks(dst); err != nil {
		return fmt.Errorf("%w: %w", ErrArchiveUnsafe, err)
	}
	return nil
}

// extractor holds the state of one extraction.
type extractor struct {
	root    *os.Root
	lim     ArchiveLimits
	files   int
	bytes   int64
	links   map[string]bool // entries that are symlinks
	seen    map[string]bool // entries already written (folders excluded)
	tops    map[string]bool // first path element of every entry
	topFile bool            // some entry is a file or link at the top level
}

// extractInto writes the archive's entries under dir and returns the
// top-level folder to strip, if the archive has exactly one.
func extractInto(r io.Reader, dir string, lim ArchiveLimits) (string, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return "", fmt.Errorf("%w: not gzip-compressed (%v): pass a .tar.gz made with tar -czf", ErrArchiveInvalid, err)
	}
	defer zr.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("packs: extract: %w", err)
	}
	defer root.Close()
	// The tar stream itself is bounded too: headers and padding of a
	// legitimate archive add at most a few KiB per entry.
	budget := lim.MaxBytes + int64(lim.MaxFiles)*4096 + 1<<20
	tr := tar.NewReader(&boundedReader{r: zr, left: budget})
	x := &extractor{root: root, lim: lim, links: map[string]bool{}, seen: map[string]bool{}, tops: map[string]bool{}}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, ErrArchiveTooLarge) {
				return "", err
			}
			return "", fmt.Errorf("%w: %v: the file is not a valid .tar.gz", ErrArchiveInvalid, err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return "", err
		}
	}
	if len(x.tops) == 1 && !x.topFile {
		for t := range x.tops {
			return t, nil
		}
	}
	return "", nil
}

// entry writes one archive entry.
func (x *extractor) entry(hdr *tar.Header, body io.Reader) error {
	name, err := entryName(hdr.Name)
	if err != nil {
		return err
	}
	if name == "" {
		return nil // "." or "./": the archive root itself
	}
	x.files++
	if x.files > x.lim.MaxFiles {
		return fmt.Errorf("%w: more than %d entries: a pack this big is not supported", ErrArchiveTooLarge, x.lim.MaxFiles)
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.links[p] {
			return fmt.Errorf("%w: %s lies under the symlink %s: an archive may not write through a symlink", ErrArchiveUnsafe, name, p)
		}
	}
	if hdr.Typeflag != tar.TypeDir {
		if x.seen[name] {
			return fmt.Errorf("%w: %s appears twice: rebuild the archive", ErrArchiveUnsafe, name)
		}
		x.seen[name] = true
	}
	first, rest, _ := strings.Cut(name, "/")
	x.tops[first] = true
	if rest == "" && hdr.Typeflag != tar.TypeDir {
		x.topFile = true
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.root.MkdirAll(name, 0o755); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrArchiveUnsafe, name, err)
		}
		return nil
	case tar.TypeReg: // the reader reports the old TypeRegA as TypeReg
		return x.file(name, hdr, body)
	case tar.TypeSymlink:
		return x.symlink(name, hdr.Linkname)
	case tar.TypeLink:
		return fmt.Errorf("%w: %s is a hard link: archive the file itself (tar --hard-dereference)", ErrArchiveUnsafe, name)
	case tar.TypeChar, tar.TypeBlock:
		return fmt.Errorf("%w: %s is a device: a pack holds only files, folders and symlinks", ErrArchiveUnsafe, name)
	case tar.TypeFifo:
		return fmt.Errorf("%w: %s is a named pipe: a pack holds only files, folders and symlinks", ErrArchiveUnsafe, name)
	}
	return fmt.Errorf("%w: %s has tar type %q: a pack holds only files, folders and symlinks", ErrArchiveUnsafe, name, hdr.Typeflag)
}

// entryName cleans an archive path. It returns "" for the archive root and
// an error for a path that is absolute, climbs with "..", or is not text.
func entryName(raw string) (string, error) {
	switch {
	case !utf8.ValidString(raw):
		return "", fmt.Errorf("%w: entry name %q is not UTF-8", ErrArchiveUnsafe, raw)
	case strings.ContainsAny(raw, "\x00\\"):
		return "", fmt.Errorf("%w: entry name %q holds a NUL or a backslash", ErrArchiveUnsafe, raw)
	case strings.HasPrefix(raw, "/") || len(raw) >= 2 && raw[1] == ':':
		return "", fmt.Errorf("%w: entry %q has an absolute path: archive relative paths (tar -C DIR)", ErrArchiveUnsafe, raw)
	}
	for _, el := range strings.Split(raw, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w: entry %q climbs out with \"..\"", ErrArchiveUnsafe, raw)
		}
	}
	name := path.Clean(raw)
	if name == "." {
		return "", nil
	}
	return name, nil
}

// file writes one regular file, refusing it before reading when its
// declared size passes a limit.
func (x *extractor) file(name string, hdr *tar.Header, body io.Reader) error {
	if hdr.Size > x.lim.MaxFileBytes {
		return fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit per file", ErrArchiveTooLarge, name, hdr.Size, x.lim.MaxFileBytes)
	}
	x.bytes += hdr.Size
	if x.bytes > x.lim.MaxBytes {
		return fmt.Errorf("%w: expands past %d bytes", ErrArchiveTooLarge, x.lim.MaxBytes)
	}
	if d := path.Dir(name); d != "." {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrArchiveUnsafe, name, err)
		}
	}
	perm := fs.FileMode(0o644)
	if hdr.Mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrArchiveUnsafe, name, err)
	}
	src := &readErrs{r: body}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case errors.Is(src.err, ErrArchiveTooLarge):
		return src.err
	case src.err != nil || err == nil && n != hdr.Size:
		return fmt.Errorf("%w: %s is truncated or corrupt (%v): the file is not a valid .tar.gz", ErrArchiveInvalid, name, src.err)
	case err != nil:
		return fmt.Errorf("packs: extract %s: %w", name, err)
	}
	return nil
}

// readErrs remembers the error its reader returned, so a failed copy can
// blame the archive (a read) or the disk (a write).
type readErrs struct {
	r   io.Reader
	err error
}

func (r *readErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// symlink creates a symlink whose target, resolved from the link's folder,
// stays inside the archive. checkLinks repeats the check on the finished
// tree, where every link's full resolution is known.
func (x *extractor) symlink(name, target string) error {
	if target == "" || strings.ContainsRune(target, 0) || path.IsAbs(target) || filepath.IsAbs(target) {
		return fmt.Errorf("%w: symlink %s -> %q leaves the pack: links must be relative and stay inside", ErrArchiveUnsafe, name, target)
	}
	if resolved := path.Join(path.Dir(name), target); resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Errorf("%w: symlink %s -> %q leaves the pack: links must be relative and stay inside", ErrArchiveUnsafe, name, target)
	}
	if d := path.Dir(name); d != "." {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrArchiveUnsafe, name, err)
		}
	}
	if err := x.root.Symlink(target, name); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrArchiveUnsafe, name, err)
	}
	x.links[name] = true
	return nil
}

// boundedReader fails with ErrArchiveTooLarge once more than left bytes have
// been read: the decompressed stream of a gzip bomb stops here.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: the decompressed stream is too long", ErrArchiveTooLarge)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// checkLinks fails if any symlink under dir is dangling or resolves (through
// any chain of links) to a place outside dir.
func checkLinks(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("symlink %s does not resolve inside the pack: point it at a file in the pack", filepath.ToSlash(rel))
		}
		if !insideDir(real, got) {
			return fmt.Errorf("symlink %s resolves outside the pack: point it at a file in the pack", filepath.ToSlash(rel))
		}
		return nil
	})
}

// insideDir reports whether p is root or inside it. Both are clean absolute paths.
func insideDir(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// syncTree flushes every file and folder under dir to stable storage.
func syncTree(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.IsDir() || d.Type().IsRegular()) {
			paths = append(paths, p)
		}
		return err
	})
	if err == nil {
		err = syncAll(paths...)
	}
	if err != nil {
		return fmt.Errorf("packs: sync %s: %w", dir, err)
	}
	return nil
}

// syncAll fsyncs files and folders, in parallel: the file system batches
// concurrent flushes into few journal commits, which makes a 50-file pack
// several times faster to install than one fsync after another. All of
// them complete before syncAll returns, and that is the only order that
// matters: nothing refers to these paths until the caller's next step.
func syncAll(paths ...string) error {
	work := make(chan string)
	errs := make([]error, min(syncWorkers, len(paths)))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := syncPath(p); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		}()
	}
	for _, p := range paths {
		work <- p
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// syncWorkers bounds the fsyncs syncAll runs at once.
const syncWorkers = 16

// syncPath fsyncs one file or folder.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
