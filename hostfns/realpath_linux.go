package hostfns

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// realPath returns the host path of the file f actually is, as the kernel
// names it, or lexical when the kernel cannot say.
func realPath(f *os.File, lexical string) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return lexical
	}
	return p
}

// linkFree is a directory in which no name resolves through a symbolic
// link: every element of every name, the last one included, must be a real
// file or directory below it. On Linux each name is resolved by the kernel
// with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), in the same system call
// that opens it, so a link swapped in after a check is refused as well
// (ELOOP). Every change is made relative to a directory opened that way.
type linkFree struct {
	dir *os.File
}

// resolveNoLinks is how linkFree resolves a name.
const resolveNoLinks = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS

func openLinkFree(dir string) (*linkFree, error) {
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &linkFree{dir: d}, nil
}

func (l *linkFree) Close() error { return l.dir.Close() }

// at opens name below the directory without following any link; a final
// link opens as itself only with O_PATH.
func (l *linkFree) at(op, name string, flag int, perm fs.FileMode) (int, error) {
	how := unix.OpenHow{Flags: uint64(flag | unix.O_CLOEXEC | unix.O_NOFOLLOW), Resolve: resolveNoLinks}
	if flag&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for {
		fd, err := unix.Openat2(int(l.dir.Fd()), name, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue // EAGAIN: a rename raced the lookup; try again
		}
		if err != nil {
			return -1, &fs.PathError{Op: op, Path: name, Err: err}
		}
		return fd, nil
	}
}

// parent opens the directory that holds name's last element.
func (l *linkFree) parent(op, name string) (int, string, error) {
	fd, err := l.at(op, path.Dir(name), unix.O_PATH|unix.O_DIRECTORY, 0)
	return fd, path.Base(name), err
}

// Probe reports, without changing anything, whether name reaches a link:
// an error wrapping ELOOP if any element of it is one. A name that does not
// exist (yet) is not a link.
func (l *linkFree) Probe(name string) error {
	fd, err := l.at("probe", name, unix.O_PATH, 0)
	if errors.Is(err, unix.ELOOP) {
		return err
	}
	if err != nil {
		return nil // the operation itself reports what is wrong
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "probe", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &fs.PathError{Op: "probe", Path: name, Err: unix.ELOOP}
	}
	return nil
}

func (l *linkFree) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := l.at("open", name, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path.Join(l.dir.Name(), name)), nil
}

// Lstat describes name's last element itself (a link is not followed).
func (l *linkFree) Lstat(name string) (fs.FileInfo, error) {
	fd, err := l.at("lstat", name, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path.Join(l.dir.Name(), name))
	defer f.Close()
	return f.Stat()
}

func (l *linkFree) Mkdir(name string, perm fs.FileMode) error {
	p, base, err := l.parent("mkdir", name)
	if err != nil {
		return err
	}
	defer unix.Close(p)
	return pathErr("mkdir", name, unix.Mkdirat(p, base, uint32(perm.Perm())))
}

// Remove unlinks name's last element: a file, a link itself, or an empty
// directory.
func (l *linkFree) Remove(name string) error {
	p, base, err := l.parent("remove", name)
	if err != nil {
		return err
	}
	defer unix.Close(p)
	err = unix.Unlinkat(p, base, 0)
	if err == unix.EISDIR {
		err = unix.Unlinkat(p, base, unix.AT_REMOVEDIR)
	}
	return pathErr("remove", name, err)
}

func (l *linkFree) Rename(from, to string) error {
	pf, bf, err := l.parent("rename", from)
	if err != nil {
		return err
	}
	defer unix.Close(pf)
	pt, bt, err := l.parent("rename", to)
	if err != nil {
		return err
	}
	defer unix.Close(pt)
	return pathErr("rename", from, unix.Renameat(pf, bf, pt, bt))
}

// target opens name's last element as an O_PATH descriptor and refuses a
// link, for the changes that would otherwise follow it.
func (l *linkFree) target(op, name string) (int, error) {
	fd, err := l.at(op, name, unix.O_PATH, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		if err == nil {
			err = unix.ELOOP
		}
		return -1, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return fd, nil
}

func (l *linkFree) Chmod(name string, perm fs.FileMode) error {
	fd, err := l.target("chmod", name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	err = unix.Fchmodat(fd, "", uint32(perm.Perm()), unix.AT_EMPTY_PATH)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL {
		// Before fchmodat2 (Linux 6.6): through the descriptor's /proc
		// entry, as glibc does; it names the file, not a path.
		err = unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), uint32(perm.Perm()), 0)
	}
	return pathErr("chmod", name, err)
}

func (l *linkFree) Chtimes(name string, atime, mtime time.Time) error {
	fd, err := l.target("chtimes", name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ts := []unix.Timespec{timespec(atime), timespec(mtime)}
	return pathErr("chtimes", name, unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH))
}

// timespec converts t, the zero time leaving the timestamp as it is.
func timespec(t time.Time) unix.Timespec {
	if t.IsZero() {
		return unix.Timespec{Nsec: unix.UTIME_OMIT}
	}
	return unix.NsecToTimespec(t.UnixNano())
}

func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}
