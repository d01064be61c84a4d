package packs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/packs-run/packs/capability"
)

// Pack is a loaded pack: its entry doc's frontmatter, its manifest and its
// tools, each checked once at load.
type Pack struct {
	Name        string // the frontmatter name, equal to the folder name
	Dir         string // absolute
	EntryDoc    string // relative to Dir, e.g. "SKILL.md"
	Frontmatter Frontmatter
	Body        int64     // byte offset in EntryDoc where the Markdown body starts
	Manifest    *Manifest // nil without skill.toml
	Tools       []*Tool   // nil without tools.json
	Recipes     []*Recipe // recipes/*.yaml, sorted by file name
	Findings    []Finding // warnings (Load) or every finding (Validate)

	// Declarations are the resources, resource templates and prompts of
	// resources.json (nil without it).
	Declarations *Declarations

	// fromFrontmatter is what the entry doc's allowed-tools stand for
	// (mapAllowedTools), the request of a pack without skill.toml.
	fromFrontmatter capability.Request
}

// Request is what the pack asks for: the manifest's capabilities; without
// a manifest, what its frontmatter's allowed-tools map to (mapAllowedTools),
// else the zero Request (nothing beyond the defaults).
func (p *Pack) Request() capability.Request {
	if p.Manifest == nil {
		return p.fromFrontmatter
	}
	return p.Manifest.Capabilities
}

// ErrComingSoon: the pack's [skill].status is coming_soon. It is listed,
// but no chat or agent takes it on.
var ErrComingSoon = errors.New("packs: pack is coming soon")

// Attachable returns an error wrapping ErrComingSoon for a coming_soon
// pack, nil for any other (a deprecated pack still works).
func (p *Pack) Attachable() error {
	if p.Manifest != nil && p.Manifest.Status == StatusComingSoon {
		return fmt.Errorf("%w: %s", ErrComingSoon, p.Name)
	}
	return nil
}

// Tool returns the tool of that name.
func (p *Pack) Tool(name string) (*Tool, bool) {
	for _, t := range p.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// HasTools reports whether the pack declares at least one tool.
func (p *Pack) HasTools() bool { return len(p.Tools) > 0 }

// LoadOptions configure Load and Validate.
type LoadOptions struct {
	EntryDoc      string // configured entry filename, tried before SKILL.md
	MaxEntryBytes int64  // a larger entry doc warns; 0 means DefaultMaxEntryBytes
}

// Load reads a pack folder in full: entry doc frontmatter, skill.toml,
// tools.json and the tools' schemas. When any finding is an error it returns
// a *LoadError (wrapping ErrInvalidPack) holding every finding; otherwise the
// warnings are in Pack.Findings.
func Load(dir string, opt LoadOptions) (*Pack, error) {
	p, fs := load(dir, opt)
	if HasErrors(fs) {
		return nil, &LoadError{Findings: fs}
	}
	p.Findings = fs
	return p, nil
}

// Inspect loads the pack folder as far as it reads and returns every
// finding of Load. The pack is partial when a finding is an error, and nil
// when the folder cannot be read.
func Inspect(dir string, opt LoadOptions) (*Pack, []Finding) { return load(dir, opt) }

// Validate returns every finding for the pack folder, errors and warnings,
// including what it would ship (shipFindings): build output, and ignore
// rules that exclude a file the pack needs.
// It never panics, whatever the folder holds.
func Validate(dir string, opt LoadOptions) []Finding {
	p, fs := load(dir, opt)
	return append(fs, CheckShipped(dir, p, fs)...)
}

// load does the work of Load and Validate. The pack it returns is partial
// when there are errors.
func load(dir string, opt LoadOptions) (*Pack, []Finding) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, []Finding{{File: dir, Severity: SeverityError, Rule: "pack-missing", Message: err.Error()}}
	}
	folder := filepath.Base(abs)
	rep := &reporter{pack: folder}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		rep.errorf(dir, 0, "pack-missing", "not a pack folder (%s): give the path of a folder that holds SKILL.md", statReason(err))
		return nil, rep.list
	}
	p := &Pack{Name: folder, Dir: abs}
	show := func(rel string) string { return filepath.Join(dir, rel) }

	entry, err := resolveEntry(abs, opt.EntryDoc)
	switch {
	case errors.Is(err, ErrPathEscape):
		rep.errorf(show(opt.EntryDoc), 0, "path-escape", "the configured entry doc %v: name a file inside the pack", why(err))
		return p, rep.list
	case err != nil:
		rep.errorf(dir, 0, "read-error", "cannot list the pack folder: %v", err)
		return p, rep.list
	case entry.rel == "":
		rep.errorf(dir, 0, "entry-missing", "no entry doc: add SKILL.md with name and description frontmatter")
		return p, rep.list
	case opt.EntryDoc != "" && entry.rel != opt.EntryDoc:
		rep.warnf(show(opt.EntryDoc), 0, "entry-missing", "the configured entry doc does not exist: using %s", entry.rel)
	}
	p.EntryDoc = entry.rel
	maxBytes := opt.MaxEntryBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxEntryBytes
	}
	br := bufio.NewReaderSize(nil, readerBytes)
	fm, body, ok := readEntry(abs, entry, show(entry.rel), folder, maxBytes, br, rep)
	if last := len(rep.list) - 1; entry.fallback && last >= 0 && rep.list[last].Rule == "frontmatter-missing" {
		// A README or other Markdown without frontmatter is not an entry
		// doc that went wrong: the pack has none, and SKILL.md is what to
		// add.
		rep.list[last] = Finding{Pack: folder, File: show(skillDoc), Severity: SeverityError, Rule: "entry-missing",
			Message: fmt.Sprintf("no SKILL.md (and %s, read in its place, has no frontmatter): add SKILL.md beginning with YAML frontmatter between \"---\" lines, holding at least name and description", entry.rel)}
	}
	p.Frontmatter, p.Body = fm, body
	if ok && fm.Name != "" {
		p.Name = fm.Name
	}

	if doc, ok := readSmall(abs, manifestFile, show(manifestFile), maxManifestBytes, rep); ok {
		p.Manifest = parseManifest(doc, show(manifestFile), abs, rep)
	}
	if len(fm.AllowedTools) > 0 {
		req := allowedToolsRequest(fm, p.Manifest, show(entry.rel), rep)
		if c, err := req.Compile(); err == nil {
			p.fromFrontmatter = c
		}
	}
	if doc, ok := readSmall(abs, toolsFile, show(toolsFile), maxToolsBytes, rep); ok {
		man := p.Manifest
		if man == nil {
			// Without skill.toml, allowed-tools is the request: an exec
			// tool whose command it names asks for nothing more.
			man = &Manifest{Capabilities: p.fromFrontmatter}
		}
		p.Tools = parseTools(doc, show(toolsFile), abs, p.Name, man, rep)
	}
	if doc, ok := readSmall(abs, resourcesFile, show(resourcesFile), maxResourcesBytes, rep); ok {
		p.Declarations = parseDeclarations(doc, show(resourcesFile), abs, rep)
	}
	p.Recipes = loadRecipes(abs, show, p.Manifest, p.Tools, rep)
	checkProvides(p, rep)
	return p, rep.list
}

// readEntry opens the entry doc and reads its frontmatter only, through br.
func readEntry(dir string, entry entryChoice, file, folder string, maxBytes int64, br *bufio.Reader, rep *reporter) (Frontmatter, int64, bool) {
	f, size, err := openEntry(dir, entry)
	if err != nil {
		if errors.Is(err, ErrPathEscape) {
			rep.errorf(file, 0, "path-escape", "the entry doc %v: make it a regular file inside the pack", why(err))
		} else {
			rep.errorf(file, 0, "read-error", "cannot open the entry doc: %v", err)
		}
		return Frontmatter{}, 0, false
	}
	defer f.Close()
	if size > maxBytes {
		rep.warnf(file, 0, "size", "is %d bytes, over the %d-byte limit: readers truncate it, so move detail into references/", size, maxBytes)
	}
	br.Reset(f)
	return readFrontmatter(br, file, folder, rep)
}

// readSmall reads a pack file that is read whole (skill.toml, tools.json).
// It reports false when the file does not exist or cannot be read; the
// latter is a finding.
// ReadPackFile reads the small file rel of the pack folder dir, which
// findings name file, as Load reads skill.toml and tools.json: a regular
// file inside the pack, at most limit bytes. ok is false when the file is
// missing (no finding) or cannot be read (a finding says why).
func ReadPackFile(dir, rel, file string, limit int64) (doc []byte, ok bool, findings []Finding) {
	rep := &reporter{}
	doc, ok = readSmall(dir, rel, file, limit, rep)
	return doc, ok, rep.list
}

func readSmall(dir, rel, file string, limit int64, rep *reporter) ([]byte, bool) {
	p := filepath.Join(dir, rel)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false
	case err != nil:
		rep.errorf(file, 0, "read-error", "%v", err)
		return nil, false
	case fi.Mode()&fs.ModeSymlink != 0:
		if p, err = SafeJoin(dir, rel); err != nil {
			if errors.Is(err, ErrPathEscape) {
				rep.errorf(file, 0, "path-escape", "%v: make it a regular file inside the pack", why(err))
			} else {
				rep.errorf(file, 0, "read-error", "%v", err)
			}
			return nil, false
		}
	}
	f, size, err := openRegular(p)
	if err != nil {
		rep.errorf(file, 0, "read-error", "%v: make it a regular file", err)
		return nil, false
	}
	defer f.Close()
	if size > limit {
		rep.errorf(file, 0, "size", "is larger than %d KiB: this file describes the pack and stays small", limit>>10)
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		rep.errorf(file, 0, "read-error", "%v", err)
		return nil, false
	case int64(len(b)) > limit:
		rep.errorf(file, 0, "size", "is larger than %d KiB: this file describes the pack and stays small", limit>>10)
		return nil, false
	}
	return b, true
}

func statReason(err error) string {
	switch {
	case err == nil:
		return "it is a file"
	case errors.Is(err, fs.ErrNotExist):
		return "it does not exist"
	}
	return err.Error()
}

// ErrPathEscape is wrapped by every path that SafeJoin refuses.
var ErrPathEscape = errors.New("packs: path escapes its root")

// escapeError says why a path was refused; it unwraps to ErrPathEscape.
type escapeError struct {
	path   string
	reason string
}

func (e *escapeError) Error() string {
	return fmt.Sprintf("packs: path %q %s", e.path, e.reason)
}

// Unwrap returns ErrPathEscape.
func (e *escapeError) Unwrap() error { return ErrPathEscape }

// why renders an error for a finding's message, without the package prefix.
func why(err error) string { return strings.TrimPrefix(err.Error(), "packs: ") }

// SafeJoin joins rel to root and confines the result to root. It refuses
// absolute paths, ".." elements and NUL bytes outright, and resolves
// symlinks (realpath) so that neither rel nor any link on its way can lead
// outside root. It returns the resolved path; a path whose tail does not
// exist yet is checked up to its deepest existing part. Every refusal wraps
// ErrPathEscape.
//
// SafeJoin checks a path at one moment: a process that can change the tree
// afterwards can still race it. Code that opens files under a root the
// guest can write to should open them through os.Root.
func SafeJoin(root, rel string) (string, error) {
	switch {
	case strings.IndexByte(rel, 0) >= 0:
		return "", &escapeError{rel, "holds a NUL byte"}
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "":
		return "", &escapeError{rel, "is absolute"}
	}
	for _, el := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			return "", &escapeError{rel, `holds ".."`}
		}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("packs: root %q: %w", root, err)
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return "", fmt.Errorf("packs: root %q: %w", root, err)
	}
	resolved, err := resolvePath(filepath.Join(realRoot, rel), 0)
	if err != nil {
		return "", &escapeError{rel, "cannot be resolved: " + err.Error()}
	}
	if !within(realRoot, resolved) {
		return "", &escapeError{rel, "resolves through a symlink to " + resolved + ", outside " + realRoot}
	}
	return resolved, nil
}

// maxLinks bounds symlink chains, as the kernel does with ELOOP.
const maxLinks = 40

// resolvePath is filepath.EvalSymlinks that also resolves paths whose tail
// does not exist, including dangling symlinks (whose target matters: it may
// be created later).
func resolvePath(p string, links int) (string, error) {
	if links > maxLinks {
		return "", errors.New("too many levels of symbolic links")
	}
	r, err := filepath.EvalSymlinks(p)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		return resolvePath(target, links+1)
	}
	dir, base := filepath.Split(p)
	dir = filepath.Clean(dir)
	if dir == p || base == "" {
		return p, nil
	}
	rd, err := resolvePath(dir, links)
	if err != nil {
		return "", err
	}
	return filepath.Join(rd, base), nil
}

// within reports whether p is root or lies under it.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
