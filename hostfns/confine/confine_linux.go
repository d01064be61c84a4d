package confine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

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

// Cmd is a confined command: its supervisor, started ahead or not yet.
// Set Stdin, Stdout and Stderr here, Start it here, then wait for
// Exited and Finish (the fast way, hostfns.Exec's) or Wait.
type Cmd struct {
	*exec.Cmd
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	sup    *super
	wire   string
	copied sync.WaitGroup // the copies of stdout and stderr
	exited chan struct{}  // closed once the status pipe ended: report (or not) in
	status int            // what the supervisor reported (-1: none)
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
	s, err := warm.take(mode == ModeFull)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	return &Cmd{Cmd: s.cmd, sup: s, wire: supervisor.Encode(wire)}, nil
}

// Start hands the command to its supervisor (starting the supervisor
// first when none was ready) and waits until the command runs inside its
// confinement. A confinement that could not be built is ErrSetup (the
// command never ran, and its supervisor is reaped in the background).
func (c *Cmd) Start() error {
	s := c.sup
	if !s.started {
		if err := s.start(); err != nil {
			s.close()
			return err
		}
	}
	c.bind()
	_, werr := io.WriteString(s.wire, c.wire)
	s.wire.Close()
	var b [1]byte
	_, rerr := io.ReadFull(s.status, b[:])
	if rerr == nil && b[0] == supervisor.Started {
		c.exited, c.status = make(chan struct{}), -1
		go c.readStatus()
		return nil
	}
	msg, _ := io.ReadAll(io.LimitReader(s.status, 4096))
	s.status.Close()
	go c.Wait()
	switch {
	case rerr == nil && b[0] == supervisor.Failed:
		return fmt.Errorf("%w: %s", ErrSetup, msg)
	case werr != nil:
		return fmt.Errorf("%w: handing the command to its supervisor: %v", ErrSetup, werr)
	}
	return fmt.Errorf("%w: the supervisor ended before the command started (%v)", ErrSetup, rerr)
}

// bind connects the supervisor's standard streams to the call's.
func (c *Cmd) bind() {
	s := c.sup
	stdout, stderr := c.Stdout, c.Stderr
	if stdout != nil && stdout == stderr {
		// One writer for both: os/exec would give it one pipe; the
		// supervisor's streams are two, so their copies take turns.
		stdout = &lockedWriter{w: stdout}
		stderr = stdout
	}
	go func() {
		if c.Stdin != nil {
			_, _ = io.Copy(s.stdin, c.Stdin)
		}
		s.stdin.Close()
	}()
	for _, p := range []struct {
		w io.Writer
		r *os.File
	}{{stdout, s.stdout}, {stderr, s.stderr}} {
		if p.w == nil {
			p.w = io.Discard
		}
		c.copied.Add(1)
		go func() {
			defer c.copied.Done()
			_, _ = io.Copy(p.w, p.r)
		}()
	}
}

// readStatus reads the rest of the status pipe: the supervisor's report
// of the command's end, or nothing when the supervisor was killed.
func (c *Cmd) readStatus() {
	defer close(c.exited)
	defer c.sup.status.Close()
	var msg []byte
	buf := make([]byte, 32)
	for len(msg) < 64 && !bytes.HasSuffix(msg, []byte{'\n'}) {
		n, err := c.sup.status.Read(buf)
		msg = append(msg, buf[:n]...)
		if err != nil {
			break
		}
	}
	report, ok := bytes.CutSuffix(msg, []byte{'\n'})
	if ok && len(report) > 1 && report[0] == supervisor.Exited {
		if n, err := strconv.Atoi(string(report[1:])); err == nil {
			c.status = n
		}
	}
}

// Exited is closed once the command is over: its supervisor reported its
// status (in namespaces, every process of the command killed and reaped
// first) or is gone itself.
func (c *Cmd) Exited() <-chan struct{} { return c.exited }

// Finish waits for Exited and for the command's output, delay at most
// past Exited (a process that left the process group, without
// namespaces, may hold the streams open). It returns the command's status
// as its supervisor reported it (its exit status, or 128+n when signal n
// killed it), and reaps the supervisor in the background: its exit, and
// the teardown of its namespaces, are no part of the call. When the
// supervisor reported nothing (it was killed), Finish reaps it and
// returns -1; c.ProcessState then says how it ended.
func (c *Cmd) Finish(delay time.Duration) (int, error) {
	<-c.exited
	c.drain(delay)
	if c.status < 0 {
		return -1, c.Cmd.Wait()
	}
	go c.Cmd.Wait()
	return c.status, nil
}

// Wait waits for the supervisor to exit and for the command's output to
// be copied. Its status is the command's.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	c.drain(0)
	return err
}

// drain waits for the output's copies, then closes the parent's ends of
// the command's streams (a copy of standard input still blocked on a
// process that holds it and does not read ends there); delay > 0 bounds
// the wait, after which what was not copied is lost.
func (c *Cmd) drain(delay time.Duration) {
	done := make(chan struct{})
	go func() {
		c.copied.Wait()
		close(done)
	}()
	if delay > 0 {
		select {
		case <-done:
		case <-time.After(delay):
		}
	} else {
		<-done
	}
	c.sup.stdin.Close()
	c.sup.stdout.Close()
	c.sup.stderr.Close()
	<-done
}

// Release says the call is over (its command reaped): the next call's
// supervisor starts now, after, so that starting it never competes with
// this call for the CPU.
func (c *Cmd) Release() { warm.refill(c.sup.namespaced) }

// super is one supervisor process: started with its namespaces, waiting
// for its Wire on a pipe. Its standard streams are pipes of its own,
// bound to a call's readers and writers only when the call takes it
// (late).
type super struct {
	cmd                 *exec.Cmd
	namespaced, started bool
	status, wire        *os.File // the parent's ends: read the status, write the Wire
	stdin               *os.File // the parent's ends of the standard streams
	stdout, stderr      *os.File
	child               []*os.File // the supervisor's ends, closed here once it runs
}

func newSuper(inNamespaces bool) (*super, error) {
	s := &super{namespaced: inNamespaces}
	var ends [5][2]*os.File // read, write: status, wire, stdin, stdout, stderr
	for i := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			for _, e := range ends[:i] {
				e[0].Close()
				e[1].Close()
			}
			return nil, err
		}
		ends[i] = [2]*os.File{r, w}
	}
	s.status, s.wire, s.stdin, s.stdout, s.stderr = ends[0][0], ends[1][1], ends[2][1], ends[3][0], ends[4][0]
	s.child = []*os.File{ends[0][1], ends[1][0], ends[2][0], ends[3][1], ends[4][1]}
	s.cmd = &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"packs-confine"},
		Env:        []string{supervisor.Env + "=" + supervisor.Serve},
		Dir:        "/",
		ExtraFiles: s.child[:2], // supervisor.StatusFD, supervisor.WireFD
		Stdin:      s.child[2], Stdout: s.child[3], Stderr: s.child[4],
	}
	if inNamespaces {
		s.cmd.SysProcAttr = namespaced()
	} else {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return s, nil
}

// start starts the supervisor and waits until it is ready: its runtime up,
// its namespaces made, reading its Wire.
func (s *super) start() error {
	err := s.cmd.Start()
	for _, f := range s.child {
		f.Close()
	}
	if err != nil {
		return err
	}
	s.started = true
	var b [1]byte
	if _, err := io.ReadFull(s.status, b[:]); err != nil || b[0] != supervisor.Ready {
		msg, _ := io.ReadAll(io.LimitReader(s.status, 4096))
		return fmt.Errorf("the supervisor did not start (%v): %s", err, msg)
	}
	return nil
}

// close gives up on s: its supervisor reads the end of its Wire and exits.
func (s *super) close() {
	for _, f := range []*os.File{s.wire, s.status, s.stdin, s.stdout, s.stderr} {
		f.Close()
	}
	if s.started {
		go s.cmd.Wait()
	} else {
		for _, f := range s.child {
			f.Close()
		}
	}
}

// warm keeps one supervisor of each kind started ahead, so a call pays
// neither the program's start nor the namespaces' making: Command takes
// it, and Start starts the next one in the background. A supervisor left
// waiting costs one idle process; it exits when packs does (the end of its
// Wire pipe).
var warm = &pool{ready: map[bool]*super{}, filling: map[bool]chan struct{}{}}

type pool struct {
	mu      sync.Mutex
	ready   map[bool]*super        // by namespaced
	filling map[bool]chan struct{} // closed when the refill under way is done
}

// Prepare starts a supervisor ahead for the next native command, when
// this machine can confine, and waits until it is ready: a front end that
// will run commands calls it at start, so that even its first pays
// neither the supervisor's start nor the namespaces' making.
func Prepare() {
	sup := Probe()
	if sup.Mode() == ModeNone {
		return
	}
	warm.refill(sup.Full())
	warm.mu.Lock()
	done := warm.filling[sup.Full()]
	warm.mu.Unlock()
	if done != nil {
		<-done
	}
}

// take returns the ready supervisor of that kind, the one on its way when
// one is (it started earlier than a new one would), or a new one not
// started.
func (p *pool) take(namespaced bool) (*super, error) {
	p.mu.Lock()
	if done := p.filling[namespaced]; done != nil {
		p.mu.Unlock()
		<-done
		p.mu.Lock()
	}
	s := p.ready[namespaced]
	delete(p.ready, namespaced)
	p.mu.Unlock()
	if s != nil {
		return s, nil
	}
	return newSuper(namespaced)
}

// refill starts a supervisor of that kind for the next call, unless one is
// ready or on its way.
func (p *pool) refill(namespaced bool) {
	p.mu.Lock()
	if p.ready[namespaced] != nil || p.filling[namespaced] != nil {
		p.mu.Unlock()
		return
	}
	done := make(chan struct{})
	p.filling[namespaced] = done
	p.mu.Unlock()
	go func() {
		s, err := newSuper(namespaced)
		if err == nil {
			if err = s.start(); err != nil {
				s.close()
			}
		}
		p.mu.Lock()
		delete(p.filling, namespaced)
		if err == nil {
			p.ready[namespaced] = s
		}
		p.mu.Unlock()
		close(done)
	}()
}

// lockedWriter serialises writes from two streams into one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
	prog, err := programs[[2]bool{!namespaced, spec.Network == ProxyOnly}]()
	if err != nil {
		return supervisor.Wire{}, err
	}
	w.Seccomp = prog
	return w, nil
}

// programs are filter's seccomp programs by its arguments (noIP,
// streamOnly), as the Wire carries them, each assembled once: 20 µs a call
// otherwise. Wires share the slices; nothing writes to them.
var programs = map[[2]bool]func() ([]supervisor.Filter, error){
	{false, false}: assemble(false, false), {false, true}: assemble(false, true),
	{true, false}: assemble(true, false), {true, true}: assemble(true, true),
}

func assemble(noIP, streamOnly bool) func() ([]supervisor.Filter, error) {
	return sync.OnceValues(func() ([]supervisor.Filter, error) {
		prog, err := filter(noIP, streamOnly)
		out := make([]supervisor.Filter, 0, len(prog))
		for _, f := range prog {
			out = append(out, supervisor.Filter{Code: f.Op, Jt: f.Jt, Jf: f.Jf, K: f.K})
		}
		return out, err
	})
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
