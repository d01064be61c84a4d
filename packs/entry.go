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
	rel      string      // relative to the pack root; "" when there is none
	fallback bool        // found by README.md or the first *.md, not by name
	info     fs.FileInfo // from Lstat; nil when the doc must be confined and checked before opening
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
			return entryChoice{rel: configured}, nil
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, skillDoc)); err == nil {
		return entryChoice{rel: skillDoc, info: plainFile(fi)}, nil
	}
	if fi, err := os.Lstat(filepath.Join(dir, readmeDoc)); err == nil {
		return entryChoice{rel: readmeDoc, fallback: true, info: plainFile(fi)}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return entryChoice{}, err
	}
	// os.ReadDir sorts by name, so the first match is the lexicographic one.
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") && (e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) {
			return entryChoice{rel: e.Name(), fallback: true}, nil
		}
	}
	return entryChoice{}, nil
}

// plainFile returns fi when it describes a regular file, which can be opened
// as it is, and nil otherwise (a symlink to confine, or something to refuse).
func plainFile(fi fs.FileInfo) fs.FileInfo {
	if fi.Mode().IsRegular() {
		return fi
	}
	return nil
}

// openEntry opens the chosen entry doc and returns its size. A symlink is
// followed only when it resolves inside the pack.
func openEntry(dir string, e entryChoice) (*os.File, int64, error) {
	if e.info != nil {
		f, err := os.Open(filepath.Join(dir, e.rel))
		return f, e.info.Size(), err
	}
	p, err := SafeJoin(dir, e.rel)
	if err != nil {
		return nil, 0, err
	}
	return openRegular(p)
}

// errNotRegular refuses FIFOs, devices, sockets and folders where a file
// belongs: opening a FIFO would block the loader.
var errNotRegular = errors.New("not a regular file")

// openRegular opens p after checking that it is a regular file, and
// returns its size.
func openRegular(p string) (*os.File, int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errNotRegular
	}
	f, err := os.Open(p)
	return f, fi.Size(), err
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
