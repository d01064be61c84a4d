package packs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// What a pack ships. A pack folder is often also its tool's source tree, with
// build output beside it (a Rust target/, node_modules/). One rule, this
// file's, decides which of its files are the pack: packs add copies only
// those, packs pack (and so publish and bundle export) archives only those,
// and the integrity digest of an installed pack is the digest of those, so
// the three cannot disagree.
//
// The rule: every file and folder, except .git folders and what the pack's
// root .gitignore and then .packignore exclude (gitignore syntax, read with
// go-git's matcher; a later rule wins, so .packignore can re-include with
// "!path" what .gitignore excludes). A file that the pack's own
// definition names (entry doc, skill.toml, tools.json, a tool's module, the
// [executable] module, a recipe) cannot be excluded: that is an error
// wrapping ErrIgnoredReference, never a pack installed without its module.

// Ignore files, read at the pack's root.
const (
	packIgnoreFile = ".packignore"
	gitIgnoreFile  = ".gitignore"
)

// maxIgnoreBytes bounds an ignore file: patterns, not data.
const maxIgnoreBytes = 1 << 20

// ErrIgnoredReference: an ignore rule excludes a file the pack's definition
// names.
var ErrIgnoredReference = errors.New("packs: an ignore rule excludes a file the pack needs")

// errIgnoreFile: an ignore file cannot be read (too large, not a file).
var errIgnoreFile = errors.New("packs: unreadable ignore file")

// ignoreOrigin is one rule that excludes files: where it is written and what.
type ignoreOrigin struct {
	File string // ".packignore", ".gitignore", or "" for the built-in .git rule
	Line int
	Text string
}

func (r ignoreOrigin) String() string {
	if r.File == "" {
		return "the built-in rule " + r.Text
	}
	return fmt.Sprintf("%s:%d (%s)", r.File, r.Line, r.Text)
}

type ignoreRule struct {
	ignoreOrigin
	pat gitignore.Pattern
}

// selection is the file-selection rule of one pack folder. The zero value
// excludes only .git folders.
type selection struct {
	rules []ignoreRule // lowest priority first
}

// readSelection reads the ignore files at the root of the pack folder dir.
// Missing ones are no rules; one that is a folder, a link, or over 1 MiB is
// an error wrapping errIgnoreFile.
func readSelection(dir string) (*selection, error) {
	s := &selection{}
	for _, name := range []string{gitIgnoreFile, packIgnoreFile} {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errIgnoreFile, p, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %s is not a regular file: make it one", errIgnoreFile, p)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errIgnoreFile, p, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errIgnoreFile, p, err)
		}
		if len(data) > maxIgnoreBytes {
			return nil, fmt.Errorf("%w: %s is over %d bytes: an ignore file holds patterns only", errIgnoreFile, p, maxIgnoreBytes)
		}
		s.rules = append(s.rules, parseIgnore(name, data)...)
	}
	return s, nil
}

// parseIgnore reads gitignore lines as git does: blank lines and lines
// starting with # are not rules; go-git parses each other line.
func parseIgnore(file string, data []byte) []ignoreRule {
	var out []ignoreRule
	for i, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSuffix(string(line), "\r")
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		out = append(out, ignoreRule{ignoreOrigin: ignoreOrigin{File: file, Line: i + 1, Text: s}, pat: gitignore.ParsePattern(s, nil)})
	}
	return out
}

// excluded returns the rule that leaves the slash-separated path rel
// (relative to the pack root; isDir when it is a folder) out of the pack, and
// whether one does. A path under an excluded folder is excluded by the
// folder's rule, as in git.
func (s *selection) excluded(rel string, isDir bool) (ignoreOrigin, bool) {
	parts := strings.Split(rel, "/")
	for i := range parts {
		if r, ok := s.excludes(parts[:i+1], isDir || i < len(parts)-1); ok {
			return r, true
		}
	}
	return ignoreOrigin{}, false
}

// excludes decides one path by its own name: the last matching rule wins.
func (s *selection) excludes(parts []string, isDir bool) (ignoreOrigin, bool) {
	if isDir && parts[len(parts)-1] == ".git" {
		return ignoreOrigin{Text: ".git"}, true
	}
	if s == nil {
		return ignoreOrigin{}, false
	}
	for i := len(s.rules) - 1; i >= 0; i-- {
		switch s.rules[i].pat.Match(parts, isDir) {
		case gitignore.Exclude:
			return s.rules[i].ignoreOrigin, true
		case gitignore.Include:
			return ignoreOrigin{}, false
		}
	}
	return ignoreOrigin{}, false
}

// referencedFiles lists the files the definition of p names, slash-separated
// and relative to its root.
func referencedFiles(p *Pack) []string {
	var out []string
	if p.EntryDoc != "" {
		out = append(out, p.EntryDoc)
	}
	out = append(out, "skill.toml", "tools.json", resourcesFile)
	for _, t := range p.Tools {
		if t.Run.Wasm != "" {
			out = append(out, path.Clean(filepath.ToSlash(t.Run.Wasm)))
		}
	}
	if d := p.Declarations; d != nil {
		for _, r := range d.Resources {
			out = append(out, r.File)
		}
		for _, pr := range d.Prompts {
			for _, m := range pr.Messages {
				if f := m.Image + m.Audio; f != "" {
					out = append(out, f)
				}
			}
		}
	}
	for _, r := range p.Recipes {
		out = append(out, r.File)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkReferences returns an error wrapping ErrIgnoredReference for the
// first file that p's definition names and s excludes (p may be partial).
func (s *selection) checkReferences(p *Pack) error {
	if p == nil {
		return nil
	}
	for _, rel := range referencedFiles(p) {
		if _, err := os.Lstat(filepath.Join(p.Dir, filepath.FromSlash(rel))); err != nil {
			continue // a missing file is the loader's finding
		}
		if r, ok := s.excluded(rel, false); ok {
			return fmt.Errorf("%w: %s is needed by the pack, but %s excludes it: remove the rule or add \"!%s\" to %s", ErrIgnoredReference, rel, r, rel, packIgnoreFile)
		}
	}
	return nil
}

// selectFiles reads the selection of the pack folder dir and checks it
// against the pack's own definition.
func selectFiles(dir string) (*selection, error) {
	sel, err := readSelection(dir)
	if err != nil {
		return nil, err
	}
	p, _ := load(dir, LoadOptions{})
	if err := sel.checkReferences(p); err != nil {
		return nil, err
	}
	return sel, nil
}

// WalkShipped walks what the pack folder dir ships like filepath.WalkDir:
// no .git folder, nothing its ignore files exclude. It fails with
// ErrIgnoredReference when an ignore rule excludes a file the pack needs.
// fn gets rel, slash-separated ("." for the root).
func WalkShipped(dir string, fn func(p, rel string, d fs.DirEntry) error) error {
	sel, err := selectFiles(dir)
	if err != nil {
		return err
	}
	return walkSelected(dir, sel, fn)
}

// walkSelected walks the pack folder dir like filepath.WalkDir, skipping what
// sel excludes; fn gets rel, slash-separated ("." for the root).
func walkSelected(dir string, sel *selection, fn func(p, rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." {
			if _, ok := sel.excluded(rel, d.IsDir()); ok {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		return fn(p, rel, d)
	})
}

// PruneExcluded deletes from the pack folder dir (an extracted archive) what
// its selection excludes, so that an installed pack holds exactly what it
// ships.
func PruneExcluded(dir string) error {
	sel, err := selectFiles(dir)
	if err != nil {
		return err
	}
	var drop []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		if _, ok := sel.excludes(strings.Split(filepath.ToSlash(rel), "/"), d.IsDir()); ok {
			drop = append(drop, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, p := range drop {
		if err == nil {
			err = os.RemoveAll(p)
		}
	}
	return err
}

// buildOutput names what a build leaves in a source tree, by folder name
// (and the marker file that proves it, "" for none) or file extension.
var buildDirs = []struct{ name, marker, what string }{
	{"target", "CACHEDIR.TAG", "a Rust (cargo) build folder"},
	{"node_modules", "", "npm's installed dependencies"},
	{"__pycache__", "", "Python's bytecode cache"},
	{"zig-cache", "", "a Zig build cache"},
	{".zig-cache", "", "a Zig build cache"},
}

var buildExts = map[string]string{".o": "an object file", ".a": "a static library", ".rlib": "a Rust library", ".pyc": "Python bytecode", ".obj": "an object file"}

// maxBuildFindings bounds the build-output warnings of one pack.
const maxBuildFindings = 20

// CheckShipped checks what the pack folder dir ships (p is its load, nil
// or partial when it has errors): an unreadable ignore file and an excluded file that the pack needs
// are errors, and so is a symlink that leaves the pack (Stage refuses it);
// build output that would be installed is a warning.
//
// loaded are the findings of loading dir: when they already say that a
// path leaves the pack, a symlink is not reported a second time.
func CheckShipped(dir string, p *Pack, loaded []Finding) []Finding {
	escaped := slices.ContainsFunc(loaded, func(f Finding) bool { return f.Rule == "path-escape" && f.Severity == SeverityError })
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	pack := filepath.Base(abs)
	show := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	sel, err := readSelection(abs)
	if err != nil {
		return []Finding{{Pack: pack, File: dir, Severity: SeverityError, Rule: "ignore-file", Message: err.Error()}}
	}
	var out []Finding
	if p != nil {
		for _, rel := range referencedFiles(p) {
			if _, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(rel))); err != nil {
				continue
			}
			if r, ok := sel.excluded(rel, false); ok {
				file, line := show(r.File), r.Line
				if r.File == "" {
					file, line = show(rel), 0
				}
				out = append(out, Finding{Pack: pack, File: file, Line: line, Severity: SeverityError, Rule: "ignored-reference",
					Message: fmt.Sprintf("%q excludes %s, which the pack needs: remove the rule or add \"!%s\" to %s", r.Text, rel, rel, packIgnoreFile)})
			}
		}
	}
	builds := 0
	warn := func(rel, what string) {
		builds++
		if builds <= maxBuildFindings {
			out = append(out, Finding{Pack: pack, File: show(rel), Severity: SeverityWarning, Rule: "build-output",
				Message: fmt.Sprintf("%s is %s and would be installed with the pack: add %q to %s (or .gitignore)", rel, what, "/"+rel, packIgnoreFile)})
		}
	}
	_ = walkSelected(abs, sel, func(p, rel string, d fs.DirEntry) error {
		if d.IsDir() {
			for _, b := range buildDirs {
				if d.Name() != b.name {
					continue
				}
				if b.marker != "" {
					if _, err := os.Lstat(filepath.Join(p, b.marker)); err != nil {
						continue
					}
				}
				warn(rel+"/", b.what)
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if target, err := os.Readlink(p); err == nil && !escaped && LinkLeaves(rel, target) {
				out = append(out, Finding{Pack: pack, File: show(rel), Severity: SeverityError, Rule: "path-escape",
					Message: fmt.Sprintf("symlink %s -> %s leaves the pack, and packs add refuses it: make it relative and inside the pack, or copy the file in", rel, target)})
			}
			return nil
		}
		if what, ok := buildExts[path.Ext(rel)]; ok && d.Type().IsRegular() {
			warn(rel, what)
		}
		return nil
	})
	if builds > maxBuildFindings {
		out = append(out, Finding{Pack: pack, File: dir, Severity: SeverityWarning, Rule: "build-output",
			Message: fmt.Sprintf("%d more build outputs are not listed", builds-maxBuildFindings)})
	}
	return out
}

// LinkLeaves reports whether a symlink at slashRel (slash-separated,
// relative to the pack) whose target is target points outside the pack:
// the one rule that Stage (which refuses such a pack) and CheckShipped
// (which packs validate reports) share.
func LinkLeaves(slashRel, target string) bool {
	return filepath.IsAbs(target) || !filepath.IsLocal(path.Join(path.Dir(slashRel), filepath.ToSlash(target)))
}
