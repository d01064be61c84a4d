package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// specEnv carries the Spec (JSON) to the supervisor. Its name starts with
// PACKS_, which no grant ever makes visible to a pack, and the supervisor
// gives the command Spec.Env alone.
const specEnv = "PACKS_CONFINE_SPEC"

// statusFD is the supervisor's end of the status pipe: it writes why the
// confinement failed, or closes it once the command has started.
const statusFD = 3

// setupExit is the supervisor's exit status when it could not confine;
// the parent reads the reason from the status pipe.
const setupExit = 125

func init() {
	raw, ok := os.LookupEnv(specEnv)
	if !ok {
		return
	}
	// Everything from here runs on the main thread, which the command will
	// inherit its confinement from: it must never run anything else.
	runtime.LockOSThread()
	os.Exit(supervise(raw))
}

var (
	probeOnce sync.Once
	probed    Support
)

// Probe reports what this machine gives, trying each part once per
// process (a user namespace is made for real, by a short supervisor run).
func Probe() Support {
	probeOnce.Do(func() { probed = probe() })
	return probed
}

func probe() Support {
	s := Support{OS: runtime.GOOS}
	if v, err := landlockABI(); err == nil {
		s.LandlockABI = v
	}
	s.Seccomp = seccompSupported()
	if err := probeNamespaces(); err != nil {
		s.NamespacesError = err.Error()
	} else {
		s.Namespaces = true
	}
	return s
}

// probeNamespaces starts the supervisor in fresh namespaces with nothing
// to run: it answers on the status pipe once it brought its loopback up.
func probeNamespaces() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{exe}, Env: []string{specEnv + "=probe"}}
	cmd.SysProcAttr = namespaced()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// namespaced is the clone of a supervisor in namespaces of its own: a user
// namespace where it is root (mapped to the caller's own ids, nothing
// else), with a network, PID and IPC namespace beside it.
func namespaced() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setpgid:    true,
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC,
		UidMappings: []syscall.SysProcIDMap{
			{ContainerID: 0, HostID: os.Getuid(), Size: 1},
		},
		GidMappings: []syscall.SysProcIDMap{
			{ContainerID: 0, HostID: os.Getgid(), Size: 1},
		},
		GidMappingsEnableSetgroups: false,
	}
}

// Cmd is a confined command not started yet. Set Stdin, Stdout, Stderr and
// WaitDelay on its exec.Cmd; Start it here, Wait on the exec.Cmd.
type Cmd struct {
	*exec.Cmd
	Mode   Mode
	status *os.File
	writer *os.File
}

// Command prepares spec to run confined. It refuses with ErrUnavailable
// when the machine gives less than full confinement and spec is not
// Weaker, or when it gives none at all.
func Command(spec Spec) (*Cmd, error) {
	sup := Probe()
	mode := sup.Mode()
	switch {
	case mode == ModeNone:
		return nil, fmt.Errorf("%w: this kernel has no Landlock (ABI %d) or no seccomp: native commands cannot be confined here", ErrUnavailable, sup.LandlockABI)
	case mode != ModeFull && !spec.Weaker:
		return nil, fmt.Errorf("%w: user namespaces are refused here (%s); the policy's [exec] confinement = \"best-effort\" runs commands under Landlock and seccomp alone", ErrUnavailable, sup.NamespacesError)
	}
	if mode == ModeFull && spec.Network == ProxyOnly && spec.ProxySocket == "" {
		return nil, fmt.Errorf("%w: network through the proxy needs its socket", ErrSetup)
	}
	if mode != ModeFull && spec.Network == ProxyOnly && spec.ProxyPort == 0 {
		return nil, fmt.Errorf("%w: network through the proxy needs its port", ErrSetup)
	}
	raw, err := json.Marshal(wireSpec{Spec: spec, Namespaced: mode == ModeFull, ABI: sup.LandlockABI})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"packs-confine"},
		Env:        []string{specEnv + "=" + string(raw)},
		Dir:        "/",
		ExtraFiles: []*os.File{w},
	}
	if mode == ModeFull {
		cmd.SysProcAttr = namespaced()
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return &Cmd{Cmd: cmd, Mode: mode, status: r, writer: w}, nil
}

// Start starts the supervisor and waits until the command runs inside its
// confinement. A confinement that could not be built is ErrSetup (the
// command never ran); the caller still Waits.
func (c *Cmd) Start() error {
	err := c.Cmd.Start()
	c.writer.Close()
	defer c.status.Close()
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(io.LimitReader(c.status, 4096))
	if len(msg) > 0 {
		return fmt.Errorf("%w: %s", ErrSetup, msg)
	}
	return nil
}

// wireSpec is what the supervisor is handed.
type wireSpec struct {
	Spec
	Namespaced bool
	ABI        int
}

// supervise is the supervisor: it confines its (locked) thread, starts the
// command from it, and returns the exit status to leave with.
func supervise(raw string) int {
	if raw == "probe" {
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, "packs-confine:", err)
			return setupExit
		}
		return 0
	}
	status := os.NewFile(statusFD, "status")
	unix.CloseOnExec(statusFD)
	fail := func(err error) int {
		fmt.Fprint(status, err)
		status.Close()
		return setupExit
	}
	var w wireSpec
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return fail(err)
	}
	env := w.Env
	if w.Namespaced {
		if err := loopbackUp(); err != nil {
			return fail(err)
		}
	}
	proxyPort := w.ProxyPort
	if w.Network == ProxyOnly && w.Namespaced {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail(fmt.Errorf("proxy port: %w", err))
		}
		proxyPort = ln.Addr().(*net.TCPAddr).Port
		go forward(ln, w.ProxySocket)
	}
	if w.Network == ProxyOnly {
		env = append(env, proxyEnv(proxyPort)...)
	}
	if err := limit(w.Spec); err != nil {
		return fail(err)
	}
	if err := restrict(w, proxyPort); err != nil {
		return fail(err)
	}
	cmd := &exec.Cmd{
		Path: w.Path, Args: w.Args, Env: env, Dir: w.Dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	status.Close()
	// Signals the parent sends the supervisor (SIGTERM at the time limit)
	// go on to the command; as the namespace's init, the supervisor would
	// otherwise ignore them.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// proxyEnv points the usual variables at the proxy; NO_PROXY is cleared so
// nothing bypasses it (a bypass would only fail: no other route exists).
func proxyEnv(port int) []string {
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u,
		"http_proxy=" + u, "https_proxy=" + u, "all_proxy=" + u,
		"NO_PROXY=", "no_proxy=",
	}
}

// forward carries each connection to the namespace's proxy port to the
// host proxy's Unix socket, which decides it. It runs on threads other
// than the confined one, for the supervisor's lifetime.
func forward(ln net.Listener, socket string) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer in.Close()
			out, err := net.Dial("unix", socket)
			if err != nil {
				return
			}
			defer out.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(out, in); out.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
			go func() { _, _ = io.Copy(in, out); in.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

// loopbackUp brings the namespace's lo up, so the proxy port can listen.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// limit sets the resource limits the command inherits.
func limit(s Spec) error {
	procs, data := uint64(s.MaxProcs), s.MaxData
	if procs == 0 {
		procs = DefaultMaxProcs
	}
	if data == 0 {
		data = DefaultMaxData
	}
	for _, l := range []struct {
		res int
		max uint64
	}{{unix.RLIMIT_NPROC, procs}, {unix.RLIMIT_DATA, data}, {unix.RLIMIT_CORE, 0}} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return fmt.Errorf("rlimit %d: %w", l.res, err)
		}
	}
	return nil
}

// restrict confines the calling thread, for good: no new privileges, no
// capabilities across exec, the Landlock domain, then the seccomp filter.
func restrict(w wireSpec, proxyPort int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if w.Namespaced {
		// Root of its own user namespace: keep no capability across exec.
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("capability bounding set: %w", err)
			}
		}
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
			return fmt.Errorf("ambient capabilities: %w", err)
		}
	}
	if err := landlock(w, proxyPort); err != nil {
		return err
	}
	return installSeccomp(!w.Namespaced, w.Network == ProxyOnly)
}

// Landlock access rights, as the kernel defines them.
const (
	fsExecute    = unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsWriteFile  = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	fsReadFile   = unix.LANDLOCK_ACCESS_FS_READ_FILE
	fsReadDir    = unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsRemoveDir  = unix.LANDLOCK_ACCESS_FS_REMOVE_DIR
	fsRemoveFile = unix.LANDLOCK_ACCESS_FS_REMOVE_FILE
	fsMakeChar   = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR
	fsMakeDir    = unix.LANDLOCK_ACCESS_FS_MAKE_DIR
	fsMakeReg    = unix.LANDLOCK_ACCESS_FS_MAKE_REG
	fsMakeSock   = unix.LANDLOCK_ACCESS_FS_MAKE_SOCK
	fsMakeFifo   = unix.LANDLOCK_ACCESS_FS_MAKE_FIFO
	fsMakeBlock  = unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
	fsMakeSym    = unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsRefer      = unix.LANDLOCK_ACCESS_FS_REFER
	fsTruncate   = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsIoctlDev   = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// the rights that apply to a file (not a directory)
	fileRights = fsExecute | fsWriteFile | fsReadFile | fsTruncate | fsIoctlDev
)

// handledFS is every filesystem right the kernel of ABI v knows: each one
// is denied unless a rule allows it.
func handledFS(v int) uint64 {
	h := uint64(fsExecute | fsWriteFile | fsReadFile | fsReadDir | fsRemoveDir | fsRemoveFile |
		fsMakeChar | fsMakeDir | fsMakeReg | fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym)
	if v >= 2 {
		h |= fsRefer
	}
	if v >= 3 {
		h |= fsTruncate
	}
	if v >= 5 {
		h |= fsIoctlDev
	}
	return h
}

func landlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	return int(v), nil
}

// landlock builds the ruleset of w and enforces it on this thread.
func landlock(w wireSpec, proxyPort int) error {
	if w.ABI < 1 {
		return errors.New("landlock: not supported by this kernel")
	}
	handled := handledFS(w.ABI)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if w.ABI >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	netRules := !w.Namespaced && w.ABI >= 4
	if netRules {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("landlock ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	read := uint64(fsReadFile | fsReadDir)
	write := read | fsWriteFile | fsRemoveDir | fsRemoveFile | fsMakeDir | fsMakeReg | fsMakeSym |
		fsMakeSock | fsMakeFifo | fsRefer | fsTruncate
	rules := []struct {
		paths  []string
		access uint64
	}{
		{systemExec, read | fsExecute},
		{systemRead, read},
		{systemDevices, fsReadFile | fsWriteFile | fsTruncate | fsIoctlDev},
		{w.Exec, read | fsExecute},
		{w.Read, read},
		{w.Write, write},
	}
	for _, r := range rules {
		for _, p := range r.paths {
			if err := addPath(int(fd), p, r.access&handled); err != nil {
				return err
			}
		}
	}
	if netRules && w.Network == ProxyOnly {
		rule := struct {
			access uint64
			port   uint64
		}{unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, uint64(proxyPort)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, landlockRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return fmt.Errorf("landlock proxy port rule: %w", e)
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock restrict: %w", e)
	}
	return nil
}

// addPath allows access beneath path (or to the file path). A path that
// does not exist is skipped: it cannot be reached either.
func addPath(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock rule %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock rule %s: %w", path, e)
	}
	return nil
}

// landlockRuleNetPort is LANDLOCK_RULE_NET_PORT (ABI 4), which x/sys/unix
// does not name yet.
const landlockRuleNetPort = 2
