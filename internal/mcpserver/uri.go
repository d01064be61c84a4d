package mcpserver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ErrBadURI is wrapped by every error about a pack:// URI that cannot name a
// file inside a pack.
var ErrBadURI = errors.New("mcpserver: bad pack resource uri")

// uriScheme prefixes every resource this server offers.
const uriScheme = "pack://"

// maxURILen bounds a resource URI; a longer one is refused before any work.
const maxURILen = 4096

// resourceTemplate is the URI template advertised for reading any file of a
// pack ({+path} lets the path hold slashes).
const resourceTemplate = "pack://{pack}/{+path}"

// packURI is a parsed pack://<pack>/<path>. Path is slash-separated and
// relative; it has no "." or ".." element, no empty element and no NUL. It is
// still only a request: the file is opened through packs.SafeJoin, which
// also stops symlink escapes.
type packURI struct {
	Pack string
	Path string
}

// String formats u back into its canonical URI.
func (u packURI) String() string {
	parts := strings.Split(u.Path, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return uriScheme + u.Pack + "/" + strings.Join(parts, "/")
}

// parsePackURI parses s as pack://<pack>/<path>, percent-decoding the path.
func parsePackURI(s string) (packURI, error) {
	bad := func(format string, args ...any) (packURI, error) {
		return packURI{}, fmt.Errorf("%w %q: %s (want pack://<pack>/<path>, e.g. pack://json-tools/SKILL.md)", ErrBadURI, trimForError(s), fmt.Sprintf(format, args...))
	}
	if len(s) > maxURILen {
		return bad("longer than %d bytes", maxURILen)
	}
	rest, ok := strings.CutPrefix(s, uriScheme)
	if !ok {
		return bad("not a pack:// uri")
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		return bad("query and fragment are not allowed")
	}
	name, rawPath, ok := strings.Cut(rest, "/")
	if !ok || rawPath == "" {
		return bad("no file path after the pack name")
	}
	if !validPackName(name) {
		return bad("%q is not a pack name (a-z, 0-9 and single hyphens, 1 to 64 characters)", name)
	}
	path, err := url.PathUnescape(rawPath)
	if err != nil {
		return bad("bad percent-encoding in the path")
	}
	if !utf8.ValidString(path) || strings.ContainsRune(path, 0) || strings.Contains(path, "\\") {
		return bad("the path holds a NUL, a backslash or invalid UTF-8")
	}
	for _, el := range strings.Split(path, "/") {
		switch el {
		case "":
			return bad("empty path element (absolute path or double slash)")
		case ".", "..":
			return bad("%q path elements are not allowed", el)
		}
	}
	return packURI{Pack: name, Path: path}, nil
}

// validPackName applies the Agent Skills name rule: 1 to 64 characters of
// a-z, 0-9 and '-', without a leading, trailing or doubled '-'.
func validPackName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// trimForError keeps error messages short when a URI is huge.
func trimForError(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
