package hostfns

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns/confine"
)

// minNativeData is the least memory (RLIMIT_DATA) a native command gets,
// whatever the pack's memory limit: the limit is sized for WebAssembly
// guests, and an interpreter (python3, node) needs more to start.
const minNativeData = 512 << 20

// sandbox is one native command's confinement: its private temporary
// directory (removed when the call ends), its proxy when it has network,
// and the Spec the supervisor enforces. With no confinement on this
// machine (allowed only by the policy's best-effort) spec is unused and
// the command runs as a plain child.
type sandbox struct {
	dir      string // the call's own directory: tmp inside, the proxy's socket beside
	tmp      string // TMPDIR, read-write for the command
	wd       string // the working directory: the workspace, or tmp without one
	proxy    *execProxy
	spec     confine.Spec
	mode     confine.Mode
	confined *confine.Cmd // the supervisor, once command made it
}

// Confinement is what a native command of grant g may touch beyond the
// system paths, in the words of an approval card ("runs confined: reads
// X; writes Y; network Z"), or what it runs without on this machine. The
// paths are those the sandbox gives; packRoot and workspace are the call's.
func Confinement(g capability.Grant, packRoot, workspace string) string {
	reads, writes := confinedPaths(g, packRoot, workspace)
	n := confine.NoNetwork
	if g.Has(capability.Network) {
		n = confine.ProxyOnly
	}
	line := confine.Describe(reads, writes, n)
	if sup := confine.Probe(); !sup.Full() {
		line += fmt.Sprintf(" (this machine gives only %q confinement: %s)", sup.Mode(), lacking(sup))
	}
	return line
}

// confinedPaths are the paths beyond the system ones that a command of g
// reads and writes: the pack root and the read mounts; the workspace, a
// private temporary directory and the write mounts.
func confinedPaths(g capability.Grant, packRoot, workspace string) (reads, writes []string) {
	if packRoot != "" {
		reads = append(reads, packRoot)
	}
	if workspace != "" {
		writes = append(writes, workspace)
	}
	r, w := mountPaths(g, func(m capability.Mount) []string { return []string{m.String()} })
	return append(reads, r...), append(append(writes, w...), "a private temporary directory")
}

// mountPaths splits the granted mounts of g into what a native command
// reads and what it writes; paths turns a mount into the paths it stands
// for (as written, for a card; as Landlock rules, for the sandbox). The
// card and the confinement both read the mounts here.
func mountPaths(g capability.Grant, paths func(capability.Mount) []string) (reads, writes []string) {
	for _, m := range g.Mounts() {
		if m.Writable {
			writes = append(writes, paths(m)...)
		} else {
			reads = append(reads, paths(m)...)
		}
	}
	return reads, writes
}

// lacking says what a machine of sup does not give.
func lacking(sup confine.Support) string {
	switch {
	case sup.OS != "linux":
		return "native confinement exists only on Linux so far"
	case sup.LandlockABI < 1:
		return "the kernel has no Landlock"
	case !sup.Seccomp:
		return "no seccomp filter for this kernel or architecture"
	case !sup.Namespaces:
		return "user namespaces are refused (" + sup.NamespacesError + "): network is denied by seccomp and Landlock instead, and leftover processes are killed by process group"
	}
	return ""
}

// privateBase is where a call's private directory is made: /dev/shm, a
// memory file system, where there is one, world-writable and sticky
// (making and removing a folder on a disk took over a millisecond of each
// call here), else the system's temporary folder. Either way the folder is
// the call's alone (mode 0700, and only it is in the command's Landlock
// rules) and is removed when the call ends.
func privateBase() string {
	const shared = fs.ModeSticky | fs.ModePerm
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && fi.Mode()&shared == shared {
		return "/dev/shm"
	}
	return os.TempDir()
}

// sandbox prepares the confinement of program (argv[0], found at prog)
// for this call, working in wd (the workspace when ""): decides, when the machine cannot confine fully, whether
// the command may run anyway (recorded), makes the private directory and
// starts the proxy.
func (c *Call) sandbox(ctx context.Context, program, prog, wd string) (*sandbox, error) {
	sup := confine.Probe()
	sb := &sandbox{mode: sup.Mode()}
	if !sup.Full() {
		if err := c.decide(c.Grant.Unconfined(program, lacking(sup))); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(privateBase(), "packs-exec-")
	if err != nil {
		return nil, fmt.Errorf("hostfns: exec: %w", err)
	}
	sb.dir, sb.tmp, sb.wd = dir, filepath.Join(dir, "tmp"), c.Workspace
	if wd != "" {
		sb.wd = wd
	}
	if sb.wd == "" {
		sb.wd = sb.tmp
	}
	if err := os.Mkdir(sb.tmp, 0o700); err != nil {
		sb.close()
		return nil, fmt.Errorf("hostfns: exec: %w", err)
	}
	if sb.mode == confine.ModeNone {
		return sb, nil
	}
	lim := c.Grant.Limits()
	s := confine.Spec{
		Exec:    []string{c.PackRoot, prog},
		Write:   []string{c.Workspace, sb.tmp},
		MaxData: max(uint64(lim.MemoryPages)*64<<10, minNativeData),
		Weaker:  true, // Unconfined allowed it, or the machine confines fully
	}
	reads, writes := mountPaths(c.Grant, func(m capability.Mount) []string {
		if m.Glob == "" {
			return []string{m.HostPath}
		}
		// Landlock knows hierarchies, not patterns: what matches now.
		matches, _ := filepath.Glob(m.String())
		return matches
	})
	s.Read, s.Write = reads, append(s.Write, writes...)
	// A test harness's stand-ins for commands (Fakes.ExecPath, packs
	// test's stubs) replace the system's: they and what they read beside
	// them are run and read as /usr/bin is.
	if fake := fakesFrom(ctx).ExecPath; fake != "" {
		s.Exec = append(s.Exec, filepath.SplitList(fake)...)
	}
	s.Exec = slices.DeleteFunc(s.Exec, func(p string) bool { return p == "" })
	s.Write = slices.DeleteFunc(s.Write, func(p string) bool { return p == "" })
	if c.Grant.Has(capability.Network) {
		s.Network = confine.ProxyOnly
		var ln net.Listener
		if sb.mode == confine.ModeFull {
			s.ProxySocket = filepath.Join(dir, "proxy.sock")
			ln, err = net.Listen("unix", s.ProxySocket)
		} else {
			ln, err = net.Listen("tcp", "127.0.0.1:0")
			if err == nil {
				s.ProxyPort = ln.Addr().(*net.TCPAddr).Port
			}
		}
		if err != nil {
			sb.close()
			return nil, fmt.Errorf("hostfns: exec: proxy: %w", err)
		}
		sb.proxy = startProxy(ctx, c, ln)
	}
	sb.spec = s
	return sb, nil
}

// command is the command to start: the confinement's supervisor, or (no
// confinement here, best-effort) the program itself in its own process
// group.
func (sb *sandbox) command(prog string, argv, env []string) (*exec.Cmd, error) {
	if sb.mode == confine.ModeNone {
		return &exec.Cmd{Path: prog, Args: slices.Clone(argv), Env: env, Dir: sb.wd, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}, nil
	}
	sb.spec.Path, sb.spec.Args, sb.spec.Env, sb.spec.Dir = prog, slices.Clone(argv), env, sb.wd
	cc, err := confine.Command(sb.spec)
	if err != nil {
		return nil, fmt.Errorf("hostfns: exec: %w", err)
	}
	sb.confined = cc
	return cc.Cmd, nil
}

// start starts cmd with its streams and, when it is the supervisor, waits
// until the command runs confined (a confinement that could not be built
// fails here). The supervisor may have been started ahead: its streams
// are bound to this call now.
func (sb *sandbox) start(cmd *exec.Cmd, stdin io.Reader, stdout, stderr io.Writer) error {
	if sb.confined == nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		return cmd.Start()
	}
	sb.confined.Stdin, sb.confined.Stdout, sb.confined.Stderr = stdin, stdout, stderr
	return sb.confined.Start()
}

// watch is how Exec learns that cmd is over: exited is closed when it
// is, and reap then waits for its output (delay at most past its end)
// and returns its exit status (128+n for a death by signal n; -1 when
// unknown). A confined command is over when its supervisor reports it,
// every process of the call gone: its supervisor's exit is reaped in the
// background.
func (sb *sandbox) watch(cmd *exec.Cmd, delay time.Duration) (exited <-chan struct{}, reap func() (int, error)) {
	if sb.confined != nil {
		return sb.confined.Exited(), func() (int, error) {
			code, err := sb.confined.Finish(delay)
			if code < 0 {
				code = exitCode(cmd)
			}
			return code, err
		}
	}
	cmd.WaitDelay = delay
	exited, wait := watch(cmd)
	return exited, func() (int, error) {
		err := wait()
		return exitCode(cmd), err
	}
}

// release says the command is reaped: the next supervisor may start.
func (sb *sandbox) release() {
	if sb.confined != nil {
		sb.confined.Release()
	}
}

// close stops the proxy and removes the private directory.
func (sb *sandbox) close() {
	if sb.proxy != nil {
		sb.proxy.close()
	}
	_ = os.RemoveAll(sb.dir)
}
