package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

const (
	maxFiles   = 500
	maxVisited = 200000
	// maxLineBytes caps one line; the rest of a longer line is skipped.
	maxLineBytes = 64 << 10
)

var defaultPaths = []string{"**/*.log", "**/*.log.*", "**/*.jsonl"}

// skipDirs are never searched: they hold no logs and can be huge.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".venv": true, "__pycache__": true}

// glob is a compiled path pattern: "/"-separated segments where "**" matches
// any number of directories and the others follow path.Match.
type glob []string

func compileGlob(p string) (glob, error) {
	if p == "" {
		return nil, errors.New("an empty pattern")
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return nil, fmt.Errorf("%q: write patterns relative to the workspace, or absolute, with \"/\" between folders, as in \"logs/*.log\"", p)
	}
	segs := strings.Split(path.Clean(p), "/")
	for _, s := range segs {
		if s == ".." {
			return nil, fmt.Errorf("%q: \"..\" would leave the workspace", p)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%q: bad pattern %q (* ? and [a-z] are the wildcards)", p, s)
		}
	}
	return glob(segs), nil
}

func (g glob) match(rel []string) bool {
	if len(g) == 0 {
		return len(rel) == 0
	}
	if g[0] == "**" {
		for i := 0; i <= len(rel); i++ {
			if g[1:].match(rel[i:]) {
				return true
			}
		}
		return false
	}
	if len(rel) == 0 {
		return false
	}
	ok, _ := path.Match(g[0], rel[0])
	return ok && g[1:].match(rel[1:])
}

func hasWildcard(p string) bool { return strings.ContainsAny(p, "*?[") }

// logFile is one file to read: where it lives and how it is reported.
type logFile struct {
	fsys fs.FS
	name string // path inside fsys
	path string // as reported: relative to the workspace, or absolute
}

// source is a directory to search and the patterns that apply below it.
type source struct {
	dir    string // "" for the workspace, else an absolute host path
	globs  []glob
	prefix string // prepended to reported paths
}

// findFiles resolves patterns to files, sorted by reported path. Relative
// patterns search the workspace; absolute ones search the granted host path
// before their first wildcard (the guest sees granted paths at their host
// paths). A pattern without wildcards must name an existing file.
func findFiles(open func(dir string) fs.FS, workspace string, patterns []string) ([]logFile, []string, error) {
	var sources []*source
	sourceFor := func(dir string) *source {
		for _, s := range sources {
			if s.dir == dir {
				return s
			}
		}
		s := &source{dir: dir}
		if dir != "" {
			s.prefix = strings.TrimSuffix(dir, "/") + "/"
		}
		sources = append(sources, s)
		return s
	}
	var found []logFile
	var warnings []string
	for _, p := range patterns {
		dir, rel := "", p
		if strings.HasPrefix(p, "/") {
			dir, rel = splitAbsolute(p)
		}
		g, err := compileGlob(rel)
		if err != nil {
			return nil, nil, err
		}
		if !hasWildcard(rel) {
			fsys := open(orWorkspace(dir, workspace))
			name := path.Clean(rel)
			st, err := fs.Stat(fsys, name)
			switch {
			case err != nil:
				return nil, nil, fmt.Errorf("%s: %s", p, accessHint(err, dir))
			case st.IsDir():
				return nil, nil, fmt.Errorf("%s is a folder: use %q to search the logs in it", p, strings.TrimSuffix(p, "/")+"/**/*.log")
			}
			found = append(found, logFile{fsys: fsys, name: name, path: sourceFor(dir).prefix + name})
			continue
		}
		s := sourceFor(dir)
		s.globs = append(s.globs, g)
	}
	for _, s := range sources {
		if len(s.globs) == 0 {
			continue
		}
		fsys := open(orWorkspace(s.dir, workspace))
		visited := 0
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == "." {
					return err
				}
				warnings = append(warnings, fmt.Sprintf("%s%s: skipped (%v)", s.prefix, p, unwrapPathError(err)))
				return nil
			}
			if visited++; visited > maxVisited {
				warnings = append(warnings, fmt.Sprintf("stopped after %d files and folders: narrow paths", maxVisited))
				return fs.SkipAll
			}
			if d.IsDir() {
				if p != "." && skipDirs[d.Name()] {
					return fs.SkipDir
				}
				return nil
			}
			rel := strings.Split(p, "/")
			if slices.ContainsFunc(s.globs, func(g glob) bool { return g.match(rel) }) {
				found = append(found, logFile{fsys: fsys, name: p, path: s.prefix + p})
			}
			return nil
		})
		if err != nil {
			where := "the workspace"
			if s.dir != "" {
				where = s.dir
			}
			return nil, nil, fmt.Errorf("cannot list %s: %s", where, accessHint(err, s.dir))
		}
	}
	slices.SortFunc(found, func(a, b logFile) int { return strings.Compare(a.path, b.path) })
	found = slices.CompactFunc(found, func(a, b logFile) bool { return a.path == b.path })
	if len(found) > maxFiles {
		warnings = append(warnings, fmt.Sprintf("%d files match; only the first %d (by name) were read: narrow paths", len(found), maxFiles))
		found = found[:maxFiles]
	}
	return found, warnings, nil
}

// splitAbsolute cuts an absolute pattern before its first wildcard segment:
// "/var/log/app/**/*.log" is the directory /var/log/app and "**/*.log".
func splitAbsolute(p string) (string, string) {
	segs := strings.Split(path.Clean(p), "/")
	i := 1
	for i < len(segs)-1 && !hasWildcard(segs[i]) {
		i++
	}
	dir := strings.Join(segs[:i], "/")
	if dir == "" {
		dir = "/"
	}
	return dir, strings.Join(segs[i:], "/")
}

func orWorkspace(dir, workspace string) string {
	if dir == "" {
		return workspace
	}
	return dir
}

// accessHint explains a failed open: missing, or not granted.
func accessHint(err error, dir string) string {
	e := unwrapPathError(err)
	switch {
	case errors.Is(e, fs.ErrNotExist) && dir == "":
		return "no such file in the workspace"
	case errors.Is(e, fs.ErrNotExist):
		return "no such file or folder (a path outside the workspace must also be granted)"
	case errors.Is(e, fs.ErrPermission):
		return "permission denied: the pack reads the workspace and the paths granted to it under filesystem_read; ask the person to grant this path"
	}
	return e.Error() + " (a path outside the workspace must be granted under filesystem_read)"
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// listing names what the workspace root holds, for an error message that
// helps the model pick better patterns.
func listing(fsys fs.FS) string {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
		if len(names) == 20 {
			names = append(names, "...")
			break
		}
	}
	if len(names) == 0 {
		return "the workspace is empty"
	}
	return "the workspace holds: " + strings.Join(names, ", ")
}

// eachLine calls f with every line of the file (gzip-compressed when its name
// ends in .gz), without its line terminator; longer lines are cut.
func eachLine(lf logFile, f func(line string)) error {
	name := lf.path
	file, err := lf.fsys.Open(lf.name)
	if err != nil {
		return fmt.Errorf("%s: %v", name, unwrapPathError(err))
	}
	defer file.Close()
	var r io.Reader = file
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(file)
		if err != nil {
			return fmt.Errorf("%s: not a gzip file (%v)", name, err)
		}
		defer gz.Close()
		r = gz
	}
	br := bufio.NewReaderSize(r, maxLineBytes)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			f(strings.TrimRight(string(line), "\r"))
			for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of the long line
				_, err = br.ReadSlice('\n')
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			continue
		}
		if len(line) > 0 {
			s := strings.TrimSuffix(string(line), "\n")
			f(strings.TrimSuffix(s, "\r"))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
	}
}
