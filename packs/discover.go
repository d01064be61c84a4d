package packs

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// Summary is what discovery learns about a pack from its frontmatter alone.
type Summary struct {
	Name, Description string
	Dir               string // absolute
	Root              string // the absolute scan root that produced it
	EntryDoc          string // relative to Dir
	HasTools          bool   // a tools.json exists (not parsed by discovery)
}

// Collision records a pack hidden by an earlier one of the same name.
// Winner and Loser are pack folders.
type Collision struct {
	Name, Winner, Loser string
}

// DiscoverOptions bound a scan. Zero fields take the defaults.
type DiscoverOptions struct {
	MaxDepth      int    // how deep below each root to look; 1 means the root's children only
	MaxPacks      int    // stop after this many packs
	MaxEntryBytes int64  // an entry doc larger than this warns
	EntryDoc      string // configured entry filename, tried before SKILL.md
}

// Defaults for DiscoverOptions, after spec 002 (max_skills = 200).
const (
	DefaultMaxDepth = 1
	DefaultMaxPacks = 200
)

// DiscoverResult lists the valid packs in precedence order, the collisions
// and every finding (invalid packs are excluded and their findings kept).
type DiscoverResult struct {
	Packs      []Summary
	Collisions []Collision
	Findings   []Finding
}

// Discover scans roots in order (spec 000 §4, spec 002 §3-4). Each root's
// children are candidate packs, and with MaxDepth > 1 their children too,
// but a folder that is a pack is not descended into. The first pack of a
// name wins and each later one is a Collision. ".git" and "node_modules"
// are skipped; symlinks are followed only when they resolve inside the
// root being scanned. Only frontmatter is read. A missing root is skipped
// with a warning. The error is non-nil only when ctx ends the scan.
func Discover(ctx context.Context, roots []string, opt DiscoverOptions) (DiscoverResult, error) {
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = DefaultMaxDepth
	}
	if opt.MaxPacks <= 0 {
		opt.MaxPacks = DefaultMaxPacks
	}
	if opt.MaxEntryBytes <= 0 {
		opt.MaxEntryBytes = DefaultMaxEntryBytes
	}
	s := &scanner{ctx: ctx, opt: opt, byName: map[string]int{}, visited: map[string]bool{}}
	for _, root := range roots {
		if err := s.root(root); err != nil {
			return s.res, err
		}
		if s.full {
			break
		}
	}
	return s.res, nil
}

type scanner struct {
	ctx     context.Context
	opt     DiscoverOptions
	res     DiscoverResult
	byName  map[string]int  // pack name -> index in res.Packs
	visited map[string]bool // real paths of folders already scanned
	full    bool            // MaxPacks reached
	readers []*bufio.Reader // one per probing goroutine, reused across folders

	rootAbs, rootReal string // the root being scanned
}

func (s *scanner) warn(file, rule, format string, args ...any) {
	rep := reporter{}
	rep.warnf(file, 0, rule, format, args...)
	s.res.Findings = append(s.res.Findings, rep.list...)
}

func (s *scanner) root(root string) error {
	if rest, ok := strings.CutPrefix(root, "~"); ok && (rest == "" || rest[0] == '/' || rest[0] == filepath.Separator) {
		if home, err := os.UserHomeDir(); err == nil {
			root = filepath.Join(home, rest)
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		s.warn(root, "root-missing", "cannot resolve the root: %v", err)
		return nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			s.warn(root, "root-missing", "is not a folder: skipped")
			return nil
		}
	}
	if err != nil {
		s.warn(root, "root-missing", "%s: skipped", statReason(err))
		return nil
	}
	s.rootAbs, s.rootReal = abs, real
	return s.dir(abs, real, 1)
}

// child is one subfolder of a scanned folder and what probing it found.
type child struct {
	path, real, name string
	escape           string // a symlink target outside the root: warn, do not follow
	probe            probe
}

// dir scans the children of one folder at the given depth. The children
// are probed in parallel, then merged in name order, so the outcome is the
// same as a sequential scan.
func (s *scanner) dir(path, real string, depth int) error {
	if s.visited[real] {
		return nil
	}
	s.visited[real] = true
	entries, err := os.ReadDir(path)
	if err != nil {
		s.warn(path, "read-error", "cannot list the folder: %v: skipped", err)
		return nil
	}
	var kids []child
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || name == "node_modules" {
			continue
		}
		c := child{path: filepath.Join(path, name), real: filepath.Join(real, name), name: name}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(c.path)
			if err != nil {
				continue // dangling: nothing to scan
			}
			if !within(s.rootReal, target) {
				c.escape = target
				break
			}
			if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
				continue
			}
			c.real = target
		case !e.IsDir():
			continue
		}
		kids = append(kids, c)
	}
	if err := s.probeAll(kids); err != nil {
		return err
	}
	for _, c := range kids {
		switch {
		case c.escape != "":
			s.warn(c.path, "path-escape", "is a symlink to %s, outside the root %s: not followed", c.escape, s.rootAbs)
			continue
		case s.visited[c.real]:
			continue
		case c.probe.isPack:
			s.visited[c.real] = true
			s.add(c)
		case depth < s.opt.MaxDepth:
			if err := s.dir(c.path, c.real, depth+1); err != nil {
				return err
			}
		case holdsPacks(c.path):
			s.warn(c.path, "discover-depth", "holds packs below the depth limit %d: they were not scanned; raise MaxDepth or move them up", s.opt.MaxDepth)
		}
		if s.full {
			return nil
		}
	}
	return nil
}

// probeAll probes the children on up to GOMAXPROCS goroutines, which all
// end before it returns.
func (s *scanner) probeAll(kids []child) error {
	workers := min(runtime.GOMAXPROCS(0), maxProbeWorkers, len(kids))
	for len(s.readers) < workers {
		s.readers = append(s.readers, bufio.NewReaderSize(nil, readerBytes))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(br *bufio.Reader) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(kids) || s.ctx.Err() != nil {
					return
				}
				if kids[i].escape == "" {
					kids[i].probe = probeDir(kids[i].path, kids[i].name, s.opt, br)
				}
			}
		}(s.readers[w])
	}
	wg.Wait()
	return s.ctx.Err()
}

// maxProbeWorkers bounds the goroutines that read entry docs at once.
const maxProbeWorkers = 8

// probe is what one folder's entry doc says about it.
type probe struct {
	isPack   bool
	valid    bool
	fm       Frontmatter
	entry    string
	file     string
	hasTools bool
	findings []Finding
}

// probeDir reads one folder's entry doc frontmatter. A folder whose only
// markdown is a README.md or other *.md without frontmatter is not a pack,
// just a folder. It touches no scanner state, so folders can be probed in
// parallel.
func probeDir(dir, folder string, opt DiscoverOptions, br *bufio.Reader) probe {
	entry, err := resolveEntry(dir, opt.EntryDoc)
	if err != nil || entry.rel == "" {
		return probe{}
	}
	file := filepath.Join(dir, entry.rel)
	rep := &reporter{pack: folder}
	fm, _, ok := readEntry(dir, entry, file, folder, opt.MaxEntryBytes, br, rep)
	if entry.fallback && len(rep.list) > 0 && rep.list[len(rep.list)-1].Rule == "frontmatter-missing" {
		return probe{}
	}
	p := probe{isPack: true, fm: fm, entry: entry.rel, file: file, findings: rep.list}
	p.valid = ok && !HasErrors(rep.list)
	if p.valid {
		p.hasTools = exists(filepath.Join(dir, toolsFile))
	}
	return p
}

// add records a probed pack: invalid ones only by their findings, later
// ones of a taken name as collisions.
func (s *scanner) add(c child) {
	p := c.probe
	if !p.valid {
		s.res.Findings = append(s.res.Findings, p.findings...)
		return
	}
	if i, dup := s.byName[p.fm.Name]; dup {
		winner := s.res.Packs[i].Dir
		s.res.Collisions = append(s.res.Collisions, Collision{Name: p.fm.Name, Winner: winner, Loser: c.path})
		s.res.Findings = append(s.res.Findings, p.findings...)
		rep := reporter{pack: c.name}
		rep.warnf(p.file, 0, "name-collision", "pack %q is hidden by %s, found first: rename one or drop a root", p.fm.Name, winner)
		s.res.Findings = append(s.res.Findings, rep.list...)
		return
	}
	if len(s.res.Packs) >= s.opt.MaxPacks {
		s.full = true
		s.warn(p.file, "discover-limit", "discovery stopped at %d packs: later packs were not loaded; raise MaxPacks", s.opt.MaxPacks)
		return
	}
	s.res.Findings = append(s.res.Findings, p.findings...)
	s.byName[p.fm.Name] = len(s.res.Packs)
	s.res.Packs = append(s.res.Packs, Summary{
		Name: p.fm.Name, Description: p.fm.Description, Dir: c.path, Root: s.rootAbs,
		EntryDoc: p.entry, HasTools: p.hasTools,
	})
}

// holdsPacks reports whether a folder has a child folder with a SKILL.md,
// for the depth-limit warning.
func holdsPacks(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), skillDoc)) {
			return true
		}
	}
	return false
}
