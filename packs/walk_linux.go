package packs

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// walkEntries lists the entries of the pack folder dir (unsorted) by
// directory descriptor: each folder is opened relative to its parent and
// each entry stat'ed relative to its folder, so the kernel resolves one
// name per call instead of the whole path (a listing of 10,000 packs
// makes some 50,000 of these calls). It finds what filepath.WalkDir
// finds, with the stamps os.Lstat gives (TestWalkEntriesMatchWalkDir).
// handled is false when dir is not a plain folder (a symlink to one, say):
// walkDirEntries then decides.
func walkEntries(dir string) (entries []digestEntry, handled bool, err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, nil
	}
	err = walkAt(fd, dir, "", make([]byte, 8<<10), &entries)
	return entries, true, err
}

// readNames reads the names in the open folder fd, with buf for the
// kernel's records.
func readNames(fd int, buf []byte) ([]string, error) {
	var names []string
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// walkAt appends the entries of the open folder fd (dir on disk, rel in
// the pack) to out, and closes fd. buf is the caller's, for readNames.
func walkAt(fd int, dir, rel string, buf []byte, out *[]digestEntry) error {
	defer unix.Close(fd)
	names, err := readNames(fd, buf)
	if err != nil {
		return fmt.Errorf("packs: digest %s: %w", dir, &fs.PathError{Op: "readdirent", Path: dir, Err: err})
	}
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("packs: digest %s: lstat %s: %w", dir, name, err)
		}
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		s := stampOfStat(&st)
		if s.mode.IsDir() {
			p := filepath.Join(dir, name)
			sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("packs: digest %s: %w", dir, &fs.PathError{Op: "open", Path: p, Err: err})
			}
			if err := walkAt(sub, p, r, buf, out); err != nil {
				return err
			}
			continue
		}
		e := digestEntry{rel: r, size: s.size, stamp: s}
		switch mode := s.mode; {
		case mode.IsRegular() && mode&0o111 != 0:
			e.kind = 'x'
		case mode.IsRegular():
			e.kind = 'f'
		case mode&fs.ModeSymlink != 0:
			e.kind = 'l'
		default:
			return fmt.Errorf("%w: %s is a %s: a pack holds only files, folders and symlinks", ErrUnsupportedFile, filepath.Join(dir, name), FileKindName(mode))
		}
		*out = append(*out, e)
	}
	return nil
}

// stampOfStat is StampOf of the os.Lstat that found st: the same mode bits
// and times, built the way package os builds them.
func stampOfStat(st *unix.Stat_t) Stamp {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return Stamp{dev: st.Dev, ino: st.Ino, mode: mode, size: st.Size,
		mtime: time.Unix(st.Mtim.Unix()), ctime: time.Unix(st.Ctim.Unix()), full: true}
}
