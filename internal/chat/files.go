package chat

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/packs-run/packs/packs"
)

// Limits on what the model can read in one call.
const (
	// DefaultReadLength is the page size when read_file gives no length.
	DefaultReadLength int64 = 32 << 10
	// MaxReadLength caps one page of read_file.
	MaxReadLength int64 = 256 << 10
	// MaxDocBytes caps one doc returned by open_docs (spec 002's
	// max_skill_md_bytes); longer docs are cut with a notice.
	MaxDocBytes int64 = 200_000
	// maxListedDocs caps the list of a pack's other docs.
	maxListedDocs = 50
	// sniffBytes is how much of a file decides text or binary.
	sniffBytes = 8 << 10
)

// Encodings of FilePage.Content.
const (
	EncodingUTF8   = "utf-8"
	EncodingBase64 = "base64"
)

// FilePage is one page of a pack file, as read_file returns it.
type FilePage struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Encoding   string `json:"encoding"` // EncodingUTF8, or EncodingBase64 for binary files
	Offset     int64  `json:"offset"`
	Truncated  bool   `json:"truncated"` // more of the file follows this page
	NextOffset *int64 `json:"next_offset,omitempty"`
	Size       int64  `json:"size"`
	MIME       string `json:"mime"`
}

// ErrNotAFile: the path names a directory or something that is not a
// regular file.
var ErrNotAFile = errors.New("chat: not a regular file")

// openInPack opens rel inside the pack. packs.SafeJoin explains a refusal
// (absolute path, "..", symlink escape); the open itself goes through
// os.Root, so a link swapped in after the check still cannot escape.
func openInPack(p *packs.Pack, rel string) (*os.File, fs.FileInfo, error) {
	if rel == "" {
		return nil, nil, fmt.Errorf("%w: path is empty: give a path relative to the pack root, such as %q", ErrBadArguments, p.EntryDoc)
	}
	if _, err := packs.SafeJoin(p.Dir, rel); err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(p.Dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	f, err := root.Open(filepath.Clean(filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: %s is not in pack %s", ErrNotFound, rel, p.Name)
		}
		return nil, nil, fmt.Errorf("chat: %s in pack %s: %w", rel, p.Name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.IsDir() {
		names, _ := f.Readdirnames(50)
		f.Close()
		slices.Sort(names)
		return nil, nil, fmt.Errorf("%w: %s is a directory; read a file in it: %s", ErrNotAFile, rel, strings.Join(names, ", "))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s", ErrNotAFile, rel)
	}
	return f, fi, nil
}

// ReadPackFile reads one page of a pack file: length bytes from offset
// (DefaultReadLength when length is 0, at most MaxReadLength). Text comes
// back as UTF-8, cut on character boundaries; binary comes back as base64.
// The path is confined to the pack (ErrPathEscape, via packs.SafeJoin).
func ReadPackFile(p *packs.Pack, rel string, offset, length int64) (FilePage, error) {
	if offset < 0 || length < 0 {
		return FilePage{}, fmt.Errorf("%w: offset and length must not be negative", ErrBadArguments)
	}
	if length == 0 {
		length = DefaultReadLength
	}
	length = min(length, MaxReadLength)
	f, fi, err := openInPack(p, rel)
	if err != nil {
		return FilePage{}, err
	}
	defer f.Close()
	size := fi.Size()
	page := FilePage{Path: filepath.ToSlash(filepath.Clean(rel)), Offset: offset, Size: size, Encoding: EncodingUTF8}
	head := make([]byte, min(size, sniffBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		return FilePage{}, err
	}
	binary := isBinary(head, int64(len(head)) < size)
	page.MIME = mimeType(rel, head, binary)
	if offset >= size {
		return page, nil
	}
	buf := make([]byte, min(length, size-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return FilePage{}, err
	}
	buf = buf[:n]
	end := offset + int64(n)
	if !binary {
		start := 0
		for start < len(buf) && start < utf8.UTFMax && !utf8.RuneStart(buf[start]) {
			start++ // the offset fell inside a character: begin at the next one
		}
		stop := len(buf)
		if end < size {
			stop = completeRunes(buf)
		}
		if text := buf[start:stop]; utf8.Valid(text) {
			page.Offset, page.Content = offset+int64(start), string(text)
			end = offset + int64(stop)
		} else {
			binary = true
		}
	}
	if binary {
		page.Encoding = EncodingBase64
		page.Content = base64.StdEncoding.EncodeToString(buf)
	}
	if end < size {
		page.Truncated = true
		page.NextOffset = &end
	}
	return page, nil
}

// completeRunes returns the length of b without a character cut at its end.
func completeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// isBinary reports whether a file whose first bytes are head is binary: it
// holds a NUL byte or is not UTF-8. cut says head ends mid-file, where a
// character may be split.
func isBinary(head []byte, cut bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if cut {
		head = head[:completeRunes(head)]
	}
	return !utf8.Valid(head)
}

// textTypes names the text files packs commonly hold; Go's built-in table
// lacks most of them, and the system's varies between machines.
var textTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
	".json": "application/json", ".toml": "application/toml", ".yaml": "application/yaml",
	".yml": "application/yaml", ".csv": "text/csv", ".sh": "text/x-shellscript",
	".py": "text/x-python", ".go": "text/x-go", ".rs": "text/x-rust", ".js": "text/javascript",
	".ts": "text/x-typescript", ".html": "text/html", ".css": "text/css", ".xml": "application/xml",
	".sql": "application/sql", ".wat": "text/plain", ".wasm": "application/wasm",
}

// mimeType names a file's type from its extension, else from its content.
func mimeType(name string, head []byte, binary bool) string {
	ext := strings.ToLower(path.Ext(filepath.ToSlash(name)))
	if t, ok := textTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if base, _, err := mime.ParseMediaType(t); err == nil {
			return base
		}
	}
	if !binary {
		return "text/plain"
	}
	base, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	return base
}

// readDoc reads a Markdown doc from offset on, up to MaxDocBytes. It
// refuses binary files.
func readDoc(p *packs.Pack, rel string, offset int64) (content string, truncated bool, err error) {
	return readDocLimit(p, rel, offset, MaxDocBytes, fmt.Sprintf("open_docs shows at most %d bytes of a doc", MaxDocBytes))
}

// readDocLimit reads a Markdown doc from offset on, up to limit bytes. A
// doc cut short ends in a notice that says why (capped) and how to read the
// rest with read_file.
func readDocLimit(p *packs.Pack, rel string, offset, limit int64, capped string) (content string, truncated bool, err error) {
	f, fi, err := openInPack(p, rel)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if offset > fi.Size() {
		offset = fi.Size()
	}
	buf := make([]byte, max(0, min(fi.Size()-offset, limit)))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, err
	}
	buf = buf[:n]
	truncated = offset+int64(n) < fi.Size()
	if truncated {
		buf = buf[:completeRunes(buf)]
	}
	if bytes.IndexByte(buf, 0) >= 0 || !utf8.Valid(buf) {
		return "", false, fmt.Errorf("%w: %s is not a text doc: read it with read_file", ErrNotAFile, rel)
	}
	content = string(buf)
	if truncated {
		next := offset + int64(len(buf))
		content += fmt.Sprintf("\n\n[truncated: shown up to byte %d of %d, as %s; read the rest with read_file(pack_id=%q, path=%q, offset=%d)]", next, fi.Size(), capped, p.Name, rel, next)
	}
	return content, truncated, nil
}

// listDocs lists the pack's Markdown files other than its entry doc,
// sorted, at most maxListedDocs, three levels deep at most. Hidden folders
// are skipped.
func listDocs(p *packs.Pack) []string {
	var out []string
	_ = filepath.WalkDir(p.Dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(p.Dir, full)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || strings.Count(rel, string(filepath.Separator)) >= 2) {
				return filepath.SkipDir
			}
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.Type().IsRegular() && strings.EqualFold(path.Ext(rel), ".md") && rel != p.EntryDoc {
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	if len(out) > maxListedDocs {
		out = out[:maxListedDocs]
	}
	return out
}
