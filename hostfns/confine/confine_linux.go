package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/packs-run/packs/hostfns/confine/supervisor"
)

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
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{exe}, Env: []string{supervisor.Env + "=" + supervisor.Probe}}
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
	wire, err := toWire(spec, mode == ModeFull, sup.LandlockABI)
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
		Env:        []string{supervisor.Env + "=" + supervisor.Encode(wire)},
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

// toWire turns spec into what the supervisor enforces: the system paths
// and spec's as Landlock rules, the rights the kernel's ABI knows as
// handled, the seccomp program, the limits.
func toWire(spec Spec, namespaced bool, abi int) (supervisor.Wire, error) {
	if abi < 1 {
		return supervisor.Wire{}, errors.New("landlock: not supported by this kernel")
	}
	w := supervisor.Wire{
		Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir,
		Namespaced: namespaced, HandledFS: handledFS(abi),
		ProxySocket: spec.ProxySocket, ProxyPort: spec.ProxyPort,
		MaxProcs: uint64(spec.MaxProcs), MaxData: spec.MaxData,
	}
	if namespaced {
		w.ProxyPort = 0
	} else {
		w.ProxySocket = ""
	}
	if spec.Network != ProxyOnly {
		w.ProxySocket, w.ProxyPort = "", 0
	}
	if w.MaxProcs == 0 {
		w.MaxProcs = DefaultMaxProcs
	}
	if w.MaxData == 0 {
		w.MaxData = DefaultMaxData
	}
	if abi >= 6 {
		w.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	if !namespaced {
		if spec.Network == ProxyOnly && abi < 4 {
			return supervisor.Wire{}, errors.New("landlock: this kernel (ABI < 4) cannot limit TCP to the proxy's port without namespaces")
		}
		if abi >= 4 {
			w.HandledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	read := uint64(fsReadFile | fsReadDir)
	write := read | fsWriteFile | fsRemoveDir | fsRemoveFile | fsMakeDir | fsMakeReg | fsMakeSym |
		fsMakeSock | fsMakeFifo | fsRefer | fsTruncate
	for _, r := range []struct {
		paths  []string
		access uint64
	}{
		{systemExec, read | fsExecute},
		{systemRead, read},
		{systemDevices, fsReadFile | fsWriteFile | fsTruncate | fsIoctlDev},
		{spec.Exec, read | fsExecute},
		{spec.Read, read},
		{spec.Write, write},
	} {
		for _, p := range r.paths {
			w.Rules = append(w.Rules, supervisor.Rule{Path: p, Access: r.access})
		}
	}
	prog, err := filter(!namespaced, spec.Network == ProxyOnly)
	if err != nil {
		return supervisor.Wire{}, err
	}
	for _, f := range prog {
		w.Seccomp = append(w.Seccomp, supervisor.Filter{Code: f.Op, Jt: f.Jt, Jf: f.Jf, K: f.K})
	}
	return w, nil
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
