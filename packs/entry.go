package packs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Entry doc names, in the order of spec 000 §4.2 after the configured one.
const (
	skillDoc  = "SKILL.md"
	readmeDoc = "README.md"
)

// entryChoice is the outcome of entry doc resolution.
type entryChoice struct {
	rel      string // relative to the pack root; "" when there is none
	fallback bool   // found by README.md or the first *.md, not by name
	link     bool   // the doc is a symlink, to be confined before opening
}

// resolveEntry picks a pack's entry doc: the configured name, then
// SKILL.md, then README.md, then the first root-level *.md in lexicographic
// order. A configured name that is absent falls through to the defaults.
func resolveEntry(dir, configured string) (entryChoice, error) {
	if configured != "" {
		full, err := SafeJoin(dir, configured)
		if err != nil {
			return entryChoice{}, err
		}
		if isFile(full) {
			return entryChoice{rel: configured, link: true}, nil
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, skillDoc)); err == nil {
		return entryChoice{rel: skillDoc, link: fi.Mode()&fs.ModeSymlink != 0}, nil
	}
	if fi, err := os.Lstat(filepath.Join(dir, readmeDoc)); err == nil {
		return entryChoice{rel: readmeDoc, fallback: true, link: fi.Mode()&fs.ModeSymlink != 0}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return entryChoice{}, err
	}
	// os.ReadDir sorts by name, so the first match is the lexicographic one.
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") && (e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) {
			return entryChoice{rel: e.Name(), fallback: true, link: e.Type()&fs.ModeSymlink != 0}, nil
		}
	}
	return entryChoice{}, nil
}

// openEntry opens the chosen entry doc and returns its size. A symlink is
// followed only when it resolves inside the pack.
func openEntry(dir string, e entryChoice) (*os.File, int64, error) {
	p := filepath.Join(dir, e.rel)
	if e.link {
		var err error
		if p, err = SafeJoin(dir, e.rel); err != nil {
			return nil, 0, err
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, errors.New("not a regular file")
	}
	return f, st.Size(), nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
