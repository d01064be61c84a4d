// Package confine starts a native command inside an operating-system
// confinement built from a pack's grant: on Linux, a Landlock domain over
// the filesystem (and, without namespaces, over TCP ports), fresh user,
// network, PID and IPC namespaces, a seccomp filter, no_new_privs and
// resource limits. hostfns.Exec is its one caller; the grant is turned into
// a Spec there.
//
// The command is started through a supervisor: this same program, run
// again (/proc/self/exe) with the Spec in its environment. The package's
// init recognises that run before anything else of the program starts,
// confines its main thread, starts the command from it (the command
// inherits the thread's confinement), forwards the proxy port when the
// call has network, waits, kills and reaps what the command left (in
// namespaces of its own), reports the command's status on its status pipe
// and exits with it; the call ends at the report. Any program
// that links this package can therefore confine; nothing else needs to be
// installed.
//
// docs/abi.md §5 is the contract: the paths each command sees and why.
package confine

import (
	"errors"
	"fmt"
	"strings"
)

// Errors Start returns.
var (
	// ErrUnavailable means this machine cannot give the confinement that
	// was required: no Landlock, no seccomp, or namespaces refused, or an
	// operating system other than Linux.
	ErrUnavailable = errors.New("confine: confinement unavailable")
	// ErrSetup means the supervisor could not build the confinement it was
	// asked for; the command did not start.
	ErrSetup = errors.New("confine: setting up the confinement failed")
)

// Network is what a confined command may reach.
type Network int

const (
	// NoNetwork: a network namespace of its own (no interface but a
	// loopback nobody listens on) or, without namespaces, no IP sockets.
	NoNetwork Network = iota
	// ProxyOnly: the only way out is the host's proxy, which decides each
	// connection on the grant; the command is told its address in
	// HTTP_PROXY and HTTPS_PROXY.
	ProxyOnly
)

// Spec is one confined command: what it runs and what it may touch. Paths
// are absolute and clean; a path that does not exist is skipped.
type Spec struct {
	Path string   // the program, absolute
	Args []string // argv, Args[0] included
	Env  []string // the whole environment ("K=V")
	Dir  string   // working directory

	// Beyond the system paths (systemExec, systemRead, systemDevices):
	// Exec are read-only hierarchies whose programs may also be run (the
	// pack root, a granted program outside the system paths); Read are
	// read-only hierarchies (granted filesystem_read); Write are read-write
	// ones (the workspace, the private temporary directory, granted
	// filesystem_write), never executable. A file path gives access to
	// that file only.
	Exec, Read, Write []string

	Network Network
	// ProxySocket is the host proxy's Unix socket (namespaced mode) and
	// ProxyPort its loopback TCP port (mode without namespaces); one of
	// them is set when Network is ProxyOnly.
	ProxySocket string
	ProxyPort   int

	MaxProcs int    // RLIMIT_NPROC; 0: DefaultMaxProcs
	MaxData  uint64 // RLIMIT_DATA bytes; 0: DefaultMaxData

	// Weaker runs with what the machine gives when it gives less than full
	// confinement (policy "best-effort"); otherwise Start refuses with
	// ErrUnavailable.
	Weaker bool
}

// The system paths every confined command sees, read-only (docs/abi.md §5
// says why each is there). Nothing else of the machine exists for it.
var (
	// systemExec: programs and their libraries (the loader, libc, the
	// interpreters' standard libraries under /usr/lib).
	systemExec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
	// systemRead: what the loader, TLS, time zones, user lookup and the
	// alternatives system read under /etc; nothing else of /etc (no
	// /etc/shadow, no host configuration).
	systemRead = []string{
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", // the loader
		"/etc/ssl", "/etc/ca-certificates", "/etc/pki", // certificate stores for TLS
		"/etc/localtime", "/etc/timezone", // local time
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", // getpwuid: git, python's expanduser
		"/etc/alternatives", // /usr/bin links through it (awk, editor, ...)
		"/etc/mime.types",   // mimetypes of python and others
		"/etc/gitconfig",    // git refuses to run when its system configuration exists but cannot be read
	}
	// systemDevices: the harmless devices, read and written.
	systemDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
)

// DefaultMaxProcs bounds the processes (threads included) a confined
// command may have at once.
const DefaultMaxProcs = 256

// DefaultMaxData bounds a confined process's data segment and private
// writable mappings (RLIMIT_DATA): reserved address space that is never
// written (Go's and the JVM's arenas) does not count.
const DefaultMaxData = 2 << 30

// Support is what this machine gives for confinement, probed once.
type Support struct {
	OS string `json:"os"`
	// LandlockABI is the kernel's Landlock ABI version, 0 when absent.
	LandlockABI int  `json:"landlock_abi"`
	Seccomp     bool `json:"seccomp"`
	// Namespaces: a process of this user can make user, network, PID and
	// IPC namespaces (a private network and a process tree killed whole).
	Namespaces bool `json:"namespaces"`
	// NamespacesError says why namespaces are refused, when they are.
	NamespacesError string `json:"namespaces_error,omitempty"`
}

// Mode names the confinement Support gives.
type Mode string

const (
	// ModeFull: Landlock (filesystem; signals and abstract sockets scoped
	// from ABI 6), seccomp, and namespaces (network denied by a private
	// namespace, every process of the call killed with it).
	ModeFull Mode = "full"
	// ModeNoNamespaces: Landlock and seccomp; network denied by seccomp (no
	// IP sockets) and Landlock TCP rules (ABI 4), processes bounded by the
	// process group. Unprivileged user namespaces are refused here
	// (Ubuntu's AppArmor default does this).
	ModeNoNamespaces Mode = "landlock+seccomp"
	// ModeNone: the kernel cannot confine (no Landlock or no seccomp), or
	// the operating system is not Linux.
	ModeNone Mode = "none"
)

// Mode is the confinement this machine gives.
func (s Support) Mode() Mode {
	switch {
	case s.LandlockABI < 1 || !s.Seccomp:
		return ModeNone
	case !s.Namespaces:
		return ModeNoNamespaces
	}
	return ModeFull
}

// Full reports whether the machine gives every part of the confinement.
func (s Support) Full() bool { return s.Mode() == ModeFull }

// Describe says in one line what a confined command may touch beyond the
// system paths, for an approval card: "runs confined: reads X; writes Y;
// network Z".
func Describe(reads, writes []string, n Network) string {
	list := func(p []string) string {
		if len(p) == 0 {
			return "nothing else"
		}
		return strings.Join(p, ", ")
	}
	net := "none"
	if n == ProxyOnly {
		net = "granted hosts only, through packs' proxy"
	}
	return fmt.Sprintf("runs confined: reads %s; writes %s; network %s", list(reads), list(writes), net)
}
