package tools

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Root is the host directory the session file system lives in: the chat
// workspace, which the guest sees at /workspace. Tests point it elsewhere.
var Root = "/workspace"

// Caps on what one call reads or returns, within the host's output limit.
const (
	MaxReadBytes  = 512 << 10 // read_file: bigger files are refused
	MaxGrepFile   = 1 << 20   // grep_files skips bigger files
	MaxGrepHits   = 500       // grep_files stops after this many matches
	MaxLineBytes  = 500       // a matched line is cut to this length
	MaxListing    = 2000      // list_directory lists at most this many entries
	maxGrepFiles  = 10000     // grep_files looks at most at this many files
	maxPatternLen = 1000
)

// sessionPath turns the model's path ("/docs/a.txt", "docs/a.txt") into
// the session path ("/docs/a.txt") and the host path under Root. ".." can
// never climb above the root: the path is cleaned as if absolute.
func sessionPath(p string) (string, string, error) {
	if strings.ContainsRune(p, 0) {
		return "", "", invalid("path %q holds a NUL byte", p)
	}
	p = strings.ReplaceAll(p, "\\", "/")
	sp := path.Clean("/" + p)
	return sp, filepath.Join(Root, filepath.FromSlash(sp)), nil
}

// fsError says what went wrong with a path in the session's own terms,
// without the host's directory names.
func fsError(sp string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return invalid("%s does not exist", sp)
	case errors.Is(err, fs.ErrPermission):
		return invalid("%s: permission denied", sp)
	case errors.Is(err, fs.ErrExist):
		return invalid("%s already exists", sp)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return invalid("%s: %s %v", sp, pe.Op, pe.Err)
	}
	return invalid("%s: %v", sp, err)
}

type pathArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

// FileContent is read_file's result.
type FileContent struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Encoding  string `json:"encoding"`
	SizeBytes int64  `json:"size_bytes"`
}

// ReadFile is session-file-system's read_file: text comes back as it is,
// anything that is not UTF-8 as base64.
var ReadFile = wrap(func(a pathArgs) (FileContent, error) {
	sp, hp, err := sessionPath(a.Path)
	if err != nil {
		return FileContent{}, err
	}
	fi, err := os.Stat(hp)
	if err != nil {
		return FileContent{}, fsError(sp, err)
	}
	if fi.IsDir() {
		return FileContent{}, invalid("%s is a directory: use list_directory", sp)
	}
	if fi.Size() > MaxReadBytes {
		return FileContent{}, invalid("%s is %d bytes, more than read_file returns (%d): use grep_files to find what you need", sp, fi.Size(), MaxReadBytes)
	}
	b, err := os.ReadFile(hp)
	if err != nil {
		return FileContent{}, fsError(sp, err)
	}
	r := FileContent{Path: sp, Content: string(b), Encoding: "text", SizeBytes: int64(len(b))}
	if !utf8.Valid(b) {
		r.Content, r.Encoding = base64.StdEncoding.EncodeToString(b), "base64"
	}
	return r, nil
})

type writeArgs struct {
	Path     string  `json:"path"`
	Content  *string `json:"content"`
	Encoding string  `json:"encoding"`
}

// WriteResult is write_file's result.
type WriteResult struct {
	Path      string `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
	Created   bool   `json:"created"`
}

// WriteFile is session-file-system's write_file; missing parent
// directories are created.
var WriteFile = wrap(func(a writeArgs) (WriteResult, error) {
	sp, hp, err := sessionPath(a.Path)
	if err != nil {
		return WriteResult{}, err
	}
	if sp == "/" {
		return WriteResult{}, invalid("path %q names the root directory: name a file, e.g. /notes.txt", a.Path)
	}
	if a.Content == nil {
		return WriteResult{}, invalid("content is missing")
	}
	data := []byte(*a.Content)
	switch a.Encoding {
	case "", "text":
	case "base64":
		if data, err = base64.StdEncoding.DecodeString(*a.Content); err != nil {
			return WriteResult{}, invalid("content is not valid base64: %v", err)
		}
	default:
		return WriteResult{}, invalid("encoding %q: use text or base64", a.Encoding)
	}
	created := false
	switch fi, err := os.Stat(hp); {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return WriteResult{}, fsError(sp, err)
	case fi.IsDir():
		return WriteResult{}, invalid("%s is a directory", sp)
	}
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		return WriteResult{}, fsError(path.Dir(sp), err)
	}
	if err := os.WriteFile(hp, data, 0o644); err != nil {
		return WriteResult{}, fsError(sp, err)
	}
	return WriteResult{Path: sp, SizeBytes: int64(len(data)), Created: created}, nil
})

// Entry is one entry of a listing.
type Entry struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	IsDirectory bool   `json:"is_directory"`
	SizeBytes   int64  `json:"size_bytes"`
}

// Listing is list_directory's result.
type Listing struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Count     int     `json:"count"`
	Truncated bool    `json:"truncated,omitempty"`
}

// ListDirectory is session-file-system's list_directory.
var ListDirectory = wrap(func(a pathArgs) (Listing, error) {
	if a.Path == "" {
		a.Path = "/"
	}
	sp, hp, err := sessionPath(a.Path)
	if err != nil {
		return Listing{}, err
	}
	des, err := os.ReadDir(hp)
	if err != nil {
		return Listing{}, fsError(sp, err)
	}
	l := Listing{Path: sp, Entries: []Entry{}}
	for _, de := range des {
		if len(l.Entries) == MaxListing {
			l.Truncated = true
			break
		}
		e := Entry{Name: de.Name(), Path: path.Join(sp, de.Name()), IsDirectory: de.IsDir()}
		if fi, err := de.Info(); err == nil && !de.IsDir() {
			e.SizeBytes = fi.Size()
		}
		l.Entries = append(l.Entries, e)
	}
	l.Count = len(l.Entries)
	return l, nil
})

type grepArgs struct {
	Pattern     string `json:"pattern"`
	PathPattern string `json:"path_pattern"`
}

// Match is one matching line.
type Match struct {
	Path       string `json:"path"`
	LineNumber int    `json:"line_number"`
	Line       string `json:"line"`
}

// GrepResult is grep_files's result.
type GrepResult struct {
	Pattern    string  `json:"pattern"`
	Matches    []Match `json:"matches"`
	MatchCount int     `json:"match_count"`
	Truncated  bool    `json:"truncated,omitempty"`
}

// GrepFiles is session-file-system's grep_files: a regular expression (Go
// RE2 syntax) over every text file, optionally only those whose name or
// path matches path_pattern (a glob such as *.txt or /docs/*.md).
var GrepFiles = wrap(func(a grepArgs) (GrepResult, error) {
	if a.Pattern == "" || len(a.Pattern) > maxPatternLen {
		return GrepResult{}, invalid("pattern must be 1 to %d characters", maxPatternLen)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return GrepResult{}, invalid("pattern %q is not a regular expression: %v", a.Pattern, err)
	}
	if a.PathPattern != "" {
		if _, err := path.Match(a.PathPattern, ""); err != nil {
			return GrepResult{}, invalid("path_pattern %q is not a glob: %v", a.PathPattern, err)
		}
	}
	r := GrepResult{Pattern: a.Pattern, Matches: []Match{}}
	var files []string
	root := filepath.Clean(Root)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: skipped
		}
		if d.Type().IsRegular() && len(files) < maxGrepFiles {
			rel, _ := filepath.Rel(root, p)
			files = append(files, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return GrepResult{}, fsError("/", err)
	}
	sort.Strings(files)
	for _, sp := range files {
		if a.PathPattern != "" && !globMatch(a.PathPattern, sp) {
			continue
		}
		if grepFile(re, sp, &r) {
			r.Truncated = true
			break
		}
	}
	r.MatchCount = len(r.Matches)
	return r, nil
})

func globMatch(pattern, sp string) bool {
	if strings.Contains(pattern, "/") {
		ok, _ := path.Match(path.Clean("/"+pattern), sp)
		return ok
	}
	ok, _ := path.Match(pattern, path.Base(sp))
	return ok
}

// grepFile adds the matches of one file to r; it reports whether r is full.
func grepFile(re *regexp.Regexp, sp string, r *GrepResult) bool {
	_, hp, _ := sessionPath(sp)
	f, err := os.Open(hp)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxGrepFile+1))
	if err != nil || len(b) > MaxGrepFile || !utf8.Valid(b) {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), MaxGrepFile)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !re.MatchString(line) {
			continue
		}
		if len(line) > MaxLineBytes {
			line = strings.ToValidUTF8(line[:MaxLineBytes], "") + "…"
		}
		r.Matches = append(r.Matches, Match{Path: sp, LineNumber: n, Line: line})
		if len(r.Matches) == MaxGrepHits {
			return true
		}
	}
	return false
}

// DeleteResult is delete_file's result.
type DeleteResult struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

// DeleteFile is session-file-system's delete_file; a directory needs
// recursive unless it is empty, and the root is never deleted.
var DeleteFile = wrap(func(a pathArgs) (DeleteResult, error) {
	sp, hp, err := sessionPath(a.Path)
	if err != nil {
		return DeleteResult{}, err
	}
	if sp == "/" {
		return DeleteResult{}, invalid("the root directory cannot be deleted: delete what is in it, one path at a time")
	}
	fi, err := os.Lstat(hp)
	if err != nil {
		return DeleteResult{}, fsError(sp, err)
	}
	if fi.IsDir() && a.Recursive {
		err = os.RemoveAll(hp)
	} else {
		err = os.Remove(hp)
	}
	if err != nil {
		if fi.IsDir() && !a.Recursive {
			return DeleteResult{}, invalid("%s is a directory that is not empty: pass recursive: true to delete it with its content", sp)
		}
		return DeleteResult{}, fsError(sp, err)
	}
	return DeleteResult{Path: sp, Deleted: true}, nil
})

// Stat is stat_file's result.
type Stat struct {
	Path        string `json:"path"`
	Name        string `json:"name"`
	Exists      bool   `json:"exists"`
	IsDirectory bool   `json:"is_directory"`
	IsReadonly  bool   `json:"is_readonly"`
	SizeBytes   int64  `json:"size_bytes"`
	ModifiedAt  string `json:"modified_at,omitempty"`
}

// StatFile is session-file-system's stat_file; a path that does not exist
// is an answer (exists: false), not an error.
var StatFile = wrap(func(a pathArgs) (Stat, error) {
	sp, hp, err := sessionPath(a.Path)
	if err != nil {
		return Stat{}, err
	}
	s := Stat{Path: sp, Name: path.Base(sp)}
	fi, err := os.Stat(hp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return Stat{}, fsError(sp, err)
	}
	s.Exists, s.IsDirectory, s.IsReadonly = true, fi.IsDir(), fi.Mode().Perm()&0o200 == 0
	if !fi.IsDir() {
		s.SizeBytes = fi.Size()
	}
	s.ModifiedAt = fi.ModTime().UTC().Format(time.RFC3339)
	return s, nil
})
