package hostfns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/packs-run/packs/capability"
)

// Guest paths of the two default mounts.
const (
	GuestPack      = "/pack"      // the pack root, read-only
	GuestWorkspace = "/workspace" // the chat workspace, read-write, the working directory
)

// ErrMountCollision means a granted host path would sit exactly where the
// guest sees /pack or /workspace.
var ErrMountCollision = errors.New("hostfns: granted path collides with a default mount")

// FS builds the guest's filesystem. The guest sees only preopened
// directories: the pack root read-only at /pack, the workspace read-write at
// /workspace, and each granted mount (Grant.Mounts) at its own host path,
// read-only or read-write as granted; a granted file is reached through its
// parent directory, where only that file can be opened. Nothing else exists.
//
// Every mount is served through os.Root, so neither ".." nor a symbolic link
// (relative or absolute) can reach outside it. Every open and every change
// (mkdir, unlink, rename, chmod, ...) is decided and recorded, allowed or
// denied, with the host path as resource; a metadata read (stat, readlink) is
// recorded only when denied. In a glob mount (and the mount of a granted
// file), where the grant covers some names of a directory and not others, a
// write does not pass a symbolic link at all: no element of the name, the
// last one included, may be a link (linkFree), so the file created,
// truncated, written, renamed or removed is the one the glob matched. A read
// there may follow a link inside the mount, and the file actually opened
// must match the glob as well as the name asked for.
//
// Everything else the guest names lands in a last mount at "/" that opens
// nothing: it decides each attempt with Grant.Path, records it and answers
// EACCES, so an attempt on /etc/passwd is audited, not just absent. The
// workspace is the first preopen, which Go guests take as their working
// directory when PWD is unset.
//
// The FS reads c at each exercise, so c must stay the Call of the invocation
// the instance serves. A granted mount whose directory does not exist is left
// out (the guest sees ENOENT).
func FS(c *Call) (wazero.FSConfig, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	mounts, err := mountsFor(c)
	if err != nil {
		return nil, err
	}
	cfg := wazero.NewFSConfig()
	for _, m := range mounts {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(m, m.guest)
	}
	return cfg, nil
}

type mountKind int

const (
	mountPack mountKind = iota
	mountWorkspace
	mountGranted
	mountOutside // the guest's "/": everything no other mount covers
)

// mount is one preopened directory. It implements experimentalsys.FS.
type mount struct {
	experimentalsys.UnimplementedFS
	call  *Call
	kind  mountKind
	host  string // absolute host directory, the os.Root
	guest string // where the guest sees it
	glob  bool   // a granted mount with a glob: re-check the real path
}

func mountsFor(c *Call) ([]*mount, error) {
	var out []*mount
	for _, d := range []struct {
		kind        mountKind
		host, guest string
	}{{mountWorkspace, c.Workspace, GuestWorkspace}, {mountPack, c.PackRoot, GuestPack}} {
		if !filepath.IsAbs(d.host) {
			return nil, fmt.Errorf("hostfns: %s must be an absolute host directory, got %q", d.guest, d.host)
		}
		if fi, err := os.Stat(d.host); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("hostfns: %s: host directory %s is missing or not a directory", d.guest, d.host)
		}
		out = append(out, &mount{call: c, kind: d.kind, host: filepath.Clean(d.host), guest: d.guest})
	}
	for _, gm := range c.Grant.Mounts() {
		dir := filepath.Clean(gm.HostPath)
		fi, err := os.Stat(dir)
		if err != nil {
			c.logger().Debug("granted path is missing; not mounted", "path", dir)
			continue
		}
		if !fi.IsDir() {
			// A granted file: mount its directory; Grant.Path lets only the file through.
			dir = filepath.Dir(dir)
		}
		if dir == GuestPack || dir == GuestWorkspace {
			return nil, fmt.Errorf("%w: %s: grant a different directory or use %s", ErrMountCollision, dir, dir)
		}
		i := slices.IndexFunc(out, func(m *mount) bool { return m.kind == mountGranted && m.host == dir })
		if i < 0 {
			out = append(out, &mount{call: c, kind: mountGranted, host: dir, guest: dir})
			i = len(out) - 1
		}
		out[i].glob = out[i].glob || gm.Glob != "" || !fi.IsDir()
	}
	if !slices.ContainsFunc(out, func(m *mount) bool { return m.guest == "/" }) {
		out = append(out, &mount{call: c, kind: mountOutside, host: "/", guest: "/"})
	}
	return out, nil
}

// clean turns a path from wazero (relative to the mount, maybe with a
// trailing slash) into an os.Root name. wazero has already refused ".." and
// absolute names; ok is false if one gets here anyway.
func clean(p string) (name string, dirOnly bool, ok bool) {
	dirOnly = strings.HasSuffix(p, "/")
	p = path.Clean(strings.TrimPrefix(p, "/"))
	if p == "" || p == "/" {
		p = "."
	}
	return p, dirOnly, fs.ValidPath(p)
}

// resolve cleans p and decides it. A name that leaves the mount is refused
// and recorded as an escape; every name under mountOutside is refused (and
// recorded) as the grant decides. A non-zero errno is the caller's answer.
func (m *mount) resolve(p string, write bool) (name, host string, dirOnly bool, v verdict, errno experimentalsys.Errno) {
	name, dirOnly, ok := clean(p)
	host = m.hostPath(name)
	if !ok {
		return "", host, false, verdict{}, m.refuse(m.escape(filepath.Join(m.host, filepath.FromSlash(p)), write))
	}
	v = m.decide(host, write)
	if !v.allowed || m.kind == mountOutside {
		return "", host, false, v, m.refuse(v)
	}
	return name, host, dirOnly, v, 0
}

func (m *mount) hostPath(name string) string { return filepath.Join(m.host, filepath.FromSlash(name)) }

// verdict is the outcome of one filesystem decision, ready to record.
type verdict struct {
	allowed bool
	ex      capability.Exercise
	errno   experimentalsys.Errno // returned to the guest when denied
}

// decide judges access to host path h. The default mounts are the
// runtime's: the pack root is readable and never writable, the workspace is
// both. A granted mount defers to Grant.Path.
func (m *mount) decide(h string, write bool) verdict {
	c := m.call
	n := capability.FilesystemRead
	if write {
		n = capability.FilesystemWrite
	}
	if !c.approved() {
		return verdict{ex: unapproved(c.exercise(n, h, false, "")), errno: experimentalsys.EACCES}
	}
	switch m.kind {
	case mountPack:
		if write {
			return verdict{ex: c.exercise(n, h, false, "the pack root is mounted read-only"), errno: experimentalsys.EROFS}
		}
		return verdict{allowed: true, ex: c.exercise(n, h, true, "inside the pack root")}
	case mountWorkspace:
		return verdict{allowed: true, ex: c.exercise(n, h, true, "inside the workspace")}
	case mountOutside:
		// Nothing is served here. A path a grant covers lands here only when
		// its mount is missing on the host: ENOENT, like the host would say.
		d := c.Grant.Path(h, write)
		v := verdict{ex: d.Record(c.Pack, c.Tool, c.Invocation), errno: experimentalsys.EACCES}
		if d.Allowed() {
			v.errno = experimentalsys.ENOENT
		}
		return v
	}
	d := c.Grant.Path(h, write)
	v := verdict{allowed: d.Allowed(), ex: d.Record(c.Pack, c.Tool, c.Invocation), errno: experimentalsys.EACCES}
	if !v.allowed && write && c.Grant.Path(h, false).Allowed() {
		v.errno = experimentalsys.EROFS
	}
	return v
}

// escape is the verdict for a name that leaves its mount.
func (m *mount) escape(h string, write bool) verdict {
	n := capability.FilesystemRead
	if write {
		n = capability.FilesystemWrite
	}
	return verdict{ex: m.call.exercise(n, h, false, "the path escapes its mount through '..' or a symbolic link"), errno: experimentalsys.EPERM}
}

// viaLink is the verdict for a write in a glob mount whose name passes a
// symbolic link.
func (m *mount) viaLink(h string) verdict {
	return verdict{ex: m.call.exercise(capability.FilesystemWrite, h, false, "a write in a glob mount does not follow a symbolic link"), errno: experimentalsys.ELOOP}
}

// refusal is the verdict for err from tree.check or a late failure of the
// same kind: a link in a glob mount's write, or else an escape.
func (m *mount) refusal(err error, h string, write bool) verdict {
	if write && m.glob && errors.Is(err, syscall.ELOOP) {
		return m.viaLink(h)
	}
	return m.escape(h, write)
}

// refuse records v and returns its errno (EIO when recording fails).
func (m *mount) refuse(v verdict) experimentalsys.Errno {
	if m.call.record(v.ex) != nil {
		return experimentalsys.EIO
	}
	return v.errno
}

// isEscape reports whether err is os.Root refusing a name that leaves the
// root. os.Root reports every other failure as a *PathError around a
// syscall.Errno.
func isEscape(err error) bool {
	var errno syscall.Errno
	return err != nil && !errors.As(err, &errno)
}

// escapes probes name without side effects: whether resolving it (following
// the final symbolic link when followFinal) leaves the root.
func escapes(root *os.Root, name string, followFinal bool) bool {
	var err error
	if followFinal {
		_, err = root.Stat(name)
	} else {
		_, err = root.Lstat(name)
	}
	return isEscape(err)
}

func (m *mount) open() (*os.Root, experimentalsys.Errno) {
	r, err := os.OpenRoot(m.host)
	if err != nil {
		return nil, experimentalsys.UnwrapOSError(err)
	}
	return r, 0
}

// tree is the directory a mount works in: an os.Root (rootTree), or for a
// glob mount's writes a linkFree. check probes name without side effects,
// following its last element when followFinal: an error if the operation
// must not happen (it would leave the mount, or pass a link).
type tree interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Lstat(name string) (fs.FileInfo, error)
	Mkdir(name string, perm fs.FileMode) error
	Chmod(name string, perm fs.FileMode) error
	Chtimes(name string, atime, mtime time.Time) error
	Remove(name string) error
	Rename(from, to string) error
	Close() error
	check(name string, followFinal bool) error
}

// errEscape is rootTree.check's answer for a name that leaves the mount.
var errEscape = errors.New("hostfns: the name leaves its mount")

type rootTree struct{ *os.Root }

func (r rootTree) check(name string, followFinal bool) error {
	if escapes(r.Root, name, followFinal) {
		return errEscape
	}
	return nil
}

// check refuses a link in any element of name (the last one only when
// followFinal: a change to a link itself, such as unlinking it, does not
// pass through it).
func (l *linkFree) check(name string, followFinal bool) error {
	if !followFinal {
		name = path.Dir(name)
	}
	return l.Probe(name)
}

// tree opens the directory for an operation: writes in a glob mount pass
// no symbolic link, everything else is confined by os.Root.
func (m *mount) tree(write bool) (tree, experimentalsys.Errno) {
	if write && m.glob {
		l, err := openLinkFree(m.host)
		if err != nil {
			return nil, experimentalsys.UnwrapOSError(err)
		}
		return l, 0
	}
	r, errno := m.open()
	if errno != 0 {
		return nil, errno
	}
	return rootTree{r}, 0
}

func isWrite(flag experimentalsys.Oflag) bool {
	return flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0
}

func osFlag(flag experimentalsys.Oflag) int {
	var f int
	switch {
	case flag&experimentalsys.O_RDWR != 0:
		f = os.O_RDWR
	case flag&experimentalsys.O_WRONLY != 0:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	for _, p := range []struct {
		w experimentalsys.Oflag
		o int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND}, {experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL}, {experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_SYNC, os.O_SYNC}, {experimentalsys.O_DSYNC, syscall.O_DSYNC},
		{experimentalsys.O_NOFOLLOW, syscall.O_NOFOLLOW}, {experimentalsys.O_DIRECTORY, syscall.O_DIRECTORY},
	} {
		if flag&p.w != 0 {
			f |= p.o
		}
	}
	return f
}

// OpenFile implements experimentalsys.FS.
func (m *mount) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	write := isWrite(flag)
	if name, _, ok := clean(p); ok && name == "." && !write {
		return m.openMountPoint()
	}
	name, h, dirOnly, v, errno := m.resolve(p, write)
	if errno != 0 {
		return nil, errno
	}
	if write && (dirOnly || flag&experimentalsys.O_DIRECTORY != 0) {
		return nil, experimentalsys.EISDIR
	}
	t, errno := m.tree(write)
	if errno != 0 {
		return nil, errno
	}
	defer t.Close()
	if write {
		// A write is recorded before it can change anything; probe for an
		// escape (or a link) first so a refused write leaves one (denied)
		// record.
		if err := t.check(name, m.glob || flag&experimentalsys.O_NOFOLLOW == 0); err != nil {
			return nil, m.refuse(m.refusal(err, h, write))
		}
		if m.call.record(v.ex) != nil {
			return nil, experimentalsys.EIO
		}
	}
	f, err := t.OpenFile(name, osFlag(flag), perm)
	if isEscape(err) || write && m.glob && errors.Is(err, syscall.ELOOP) {
		return nil, m.refuse(m.refusal(err, h, write))
	}
	if f != nil && m.glob {
		if d := m.call.Grant.Path(realPath(f, h), write); !d.Allowed() {
			f.Close()
			return nil, m.refuse(verdict{ex: d.Record(m.call.Pack, m.call.Tool, m.call.Invocation), errno: experimentalsys.EACCES})
		}
	}
	if !write && m.call.record(v.ex) != nil {
		if f != nil {
			f.Close()
		}
		return nil, experimentalsys.EIO
	}
	if err != nil {
		return nil, experimentalsys.UnwrapOSError(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, experimentalsys.UnwrapOSError(err)
	}
	if dirOnly && !fi.IsDir() {
		f.Close()
		return nil, experimentalsys.ENOTDIR
	}
	return &file{m: m, name: name, f: f, flag: flag, dir: fi.IsDir()}, 0
}

// openMountPoint opens the mount's own directory for reading. wazero does
// this for every preopen when the guest starts (fd_prestat_get), and the
// guest cannot start if it fails, so it is structural: not decided, not
// recorded. What the guest opens inside is. The mount at "/" is an empty
// directory.
func (m *mount) openMountPoint() (experimentalsys.File, experimentalsys.Errno) {
	if m.kind == mountOutside {
		return &emptyDir{}, 0
	}
	root, errno := m.open()
	if errno != 0 {
		return nil, errno
	}
	defer root.Close()
	f, err := root.Open(".")
	if err != nil {
		return nil, osErr(err)
	}
	return &file{m: m, name: ".", f: f, dir: true}, 0
}

// stat serves Stat and Lstat: a metadata read, recorded only when denied.
func (m *mount) stat(p string, follow bool) (sys.Stat_t, experimentalsys.Errno) {
	name, h, _, _, errno := m.resolve(p, false)
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	root, errno := m.open()
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	defer root.Close()
	var fi fs.FileInfo
	var err error
	if follow {
		fi, err = root.Stat(name)
	} else {
		fi, err = root.Lstat(name)
	}
	if isEscape(err) {
		return sys.Stat_t{}, m.refuse(m.escape(h, false))
	}
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements experimentalsys.FS.
func (m *mount) Stat(p string) (sys.Stat_t, experimentalsys.Errno) { return m.stat(p, true) }

// Lstat implements experimentalsys.FS.
func (m *mount) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) { return m.stat(p, false) }

// Readlink implements experimentalsys.FS.
func (m *mount) Readlink(p string) (string, experimentalsys.Errno) {
	name, h, _, _, errno := m.resolve(p, false)
	if errno != 0 {
		return "", errno
	}
	root, errno := m.open()
	if errno != 0 {
		return "", errno
	}
	defer root.Close()
	s, err := root.Readlink(name)
	if isEscape(err) {
		return "", m.refuse(m.escape(h, false))
	}
	return filepath.ToSlash(s), experimentalsys.UnwrapOSError(err)
}

// change decides, probes and records one mutation of name, then runs op on
// the mount's tree. followFinal says whether op follows a final symbolic
// link.
func (m *mount) change(p string, followFinal bool, op func(t tree, name string) experimentalsys.Errno) experimentalsys.Errno {
	name, h, _, v, errno := m.resolve(p, true)
	if errno != 0 {
		return errno
	}
	if name == "." {
		return experimentalsys.EPERM // the mount point itself stays
	}
	t, errno := m.tree(true)
	if errno != 0 {
		return errno
	}
	defer t.Close()
	if err := t.check(name, followFinal); err != nil {
		return m.refuse(m.refusal(err, h, true))
	}
	if m.call.record(v.ex) != nil {
		return experimentalsys.EIO
	}
	return op(t, name)
}

// osErr maps an os.Root error to an Errno, counting a late escape (a race
// with the probe) as EPERM.
func osErr(err error) experimentalsys.Errno {
	if isEscape(err) {
		return experimentalsys.EPERM
	}
	return experimentalsys.UnwrapOSError(err)
}

// Mkdir implements experimentalsys.FS.
func (m *mount) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	return m.change(p, false, func(r tree, name string) experimentalsys.Errno {
		return osErr(r.Mkdir(name, perm))
	})
}

// Chmod implements experimentalsys.FS.
func (m *mount) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return m.change(p, true, func(r tree, name string) experimentalsys.Errno {
		return osErr(r.Chmod(name, perm))
	})
}

// Rmdir implements experimentalsys.FS.
func (m *mount) Rmdir(p string) experimentalsys.Errno {
	return m.change(p, false, func(r tree, name string) experimentalsys.Errno {
		fi, err := r.Lstat(name)
		if err != nil {
			return osErr(err)
		}
		if !fi.IsDir() {
			return experimentalsys.ENOTDIR
		}
		return osErr(r.Remove(name))
	})
}

// Unlink implements experimentalsys.FS.
func (m *mount) Unlink(p string) experimentalsys.Errno {
	return m.change(p, false, func(r tree, name string) experimentalsys.Errno {
		fi, err := r.Lstat(name)
		if err != nil {
			return osErr(err)
		}
		if fi.IsDir() {
			return experimentalsys.EISDIR
		}
		return osErr(r.Remove(name))
	})
}

// Rename implements experimentalsys.FS. Both names are decided and recorded.
func (m *mount) Rename(from, to string) experimentalsys.Errno {
	toName, h, _, v, errno := m.resolve(to, true)
	if errno != 0 {
		return errno
	}
	if toName == "." {
		return experimentalsys.EPERM
	}
	return m.change(from, false, func(r tree, name string) experimentalsys.Errno {
		if err := r.check(toName, false); err != nil {
			return m.refuse(m.refusal(err, h, true))
		}
		if m.call.record(v.ex) != nil {
			return experimentalsys.EIO
		}
		return osErr(r.Rename(name, toName))
	})
}

// Utimens implements experimentalsys.FS.
func (m *mount) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	return m.change(p, true, func(r tree, name string) experimentalsys.Errno {
		return osErr(r.Chtimes(name, utime(atim), utime(mtim)))
	})
}

// utime converts a WASI timestamp; the zero time.Time leaves it unchanged.
func utime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Link implements experimentalsys.FS. Guests cannot create links: a link
// made inside a writable mount could point a later native command anywhere.
func (m *mount) Link(_, newPath string) experimentalsys.Errno { return m.noLinks(newPath) }

// Symlink implements experimentalsys.FS; see Link.
func (m *mount) Symlink(_, linkName string) experimentalsys.Errno { return m.noLinks(linkName) }

func (m *mount) noLinks(p string) experimentalsys.Errno {
	h := filepath.Join(m.host, filepath.FromSlash(strings.TrimPrefix(p, "/")))
	return m.refuse(verdict{ex: m.call.exercise(capability.FilesystemWrite, h, false, "guests cannot create links"), errno: experimentalsys.EPERM})
}

// String names the mount in wazero's debug output.
func (m *mount) String() string { return m.guest + " -> " + m.host }
