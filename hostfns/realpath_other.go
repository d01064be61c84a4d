//go:build !linux

package hostfns

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// realPath returns the host path of the file f actually is: the lexical
// path with its symbolic links resolved (os.Root already confined it).
func realPath(_ *os.File, lexical string) string {
	p, err := filepath.EvalSymlinks(lexical)
	if err != nil {
		return lexical
	}
	return p
}

// linkFree is a directory in which no name resolves through a symbolic
// link. Without openat2, each element is checked with Lstat before the
// operation, which os.Root then confines to the directory and opens with
// O_NOFOLLOW: a link swapped into a directory element between the check
// and the operation is not caught, unlike on Linux.
type linkFree struct {
	root *os.Root
}

func openLinkFree(dir string) (*linkFree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &linkFree{root: r}, nil
}

func (l *linkFree) Close() error { return l.root.Close() }

// Probe returns an error wrapping ELOOP if any element of name is a link.
// A name that does not exist (yet) is not a link.
func (l *linkFree) Probe(name string) error {
	p := ""
	for _, el := range strings.Split(name, "/") {
		p = path.Join(p, el)
		fi, err := l.root.Lstat(p)
		if err != nil {
			return nil // the operation itself reports what is wrong
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &fs.PathError{Op: "probe", Path: name, Err: syscall.ELOOP}
		}
	}
	return nil
}

// parents checks the directory elements of name.
func (l *linkFree) parents(name string) error { return l.Probe(path.Dir(name)) }

func (l *linkFree) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := l.parents(name); err != nil {
		return nil, err
	}
	return l.root.OpenFile(name, flag|syscall.O_NOFOLLOW, perm)
}

func (l *linkFree) Lstat(name string) (fs.FileInfo, error) {
	if err := l.parents(name); err != nil {
		return nil, err
	}
	return l.root.Lstat(name)
}

func (l *linkFree) Mkdir(name string, perm fs.FileMode) error {
	if err := l.parents(name); err != nil {
		return err
	}
	return l.root.Mkdir(name, perm)
}

func (l *linkFree) Remove(name string) error {
	if err := l.parents(name); err != nil {
		return err
	}
	return l.root.Remove(name)
}

func (l *linkFree) Rename(from, to string) error {
	if err := l.parents(from); err != nil {
		return err
	}
	if err := l.parents(to); err != nil {
		return err
	}
	return l.root.Rename(from, to)
}

func (l *linkFree) Chmod(name string, perm fs.FileMode) error {
	if err := l.Probe(name); err != nil {
		return err
	}
	return l.root.Chmod(name, perm)
}

func (l *linkFree) Chtimes(name string, atime, mtime time.Time) error {
	if err := l.Probe(name); err != nil {
		return err
	}
	return l.root.Chtimes(name, atime, mtime)
}
