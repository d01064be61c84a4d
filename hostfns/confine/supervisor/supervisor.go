//go:build linux

// Package supervisor is the confined side of package confine: the code a
// confined command's supervisor runs, in the packs binary re-run
// (/proc/self/exe) with a Wire in its environment. Its init recognises that
// run and never returns from it.
//
// It imports the standard library's lowest layers alone (syscall, os,
// os/signal, runtime), so the Go runtime initialises it among the first
// packages of any binary: everything a program's other packages do at
// init would otherwise come first, and be paid at every native command.
// The parent (package confine) builds the Wire, the seccomp program
// included, and reads the status pipe.
package supervisor

import (
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Env marks a supervisor run: its value is Probe or Serve. Its name starts
// with PACKS_, which no grant ever makes visible to a pack, and the
// supervisor gives the command Wire.Env alone.
const Env = "PACKS_CONFINE"

// Probe is Env's value for a probe run: bring the namespace's loopback up,
// and exit 0.
const Probe = "probe"

// Serve is Env's value for a supervisor that reads its Wire (Encode) from
// WireFD, whenever it comes: a supervisor may be started ahead of its call,
// its namespaces made and its runtime up, and wait there.
const Serve = "serve"

// StatusFD is the supervisor's end of the status pipe: it writes Ready
// once it waits for its call, then Failed and why the confinement failed,
// or Started once the command runs confined, then Exited and the
// command's status once the command and every process it left are gone.
const StatusFD = 3

// WireFD is where the supervisor reads its Wire; at end of file without
// one (its parent gone, or never needing it) it exits.
const WireFD = 4

// The bytes that open each message on the status pipe.
const (
	// Ready: the supervisor runs and waits for its Wire.
	Ready = 'R'
	// Failed, then why, to the end of the pipe: the confinement could not
	// be built; the command did not start.
	Failed = 'F'
	// Started: the command runs confined.
	Started = 'S'
	// Exited, then the command's status in decimal (its exit status, or
	// 128+n when signal n killed it) and a newline: the command
	// is gone and, in namespaces of its own, every process it left was
	// killed and reaped, and the supervisor let go of the command's
	// standard streams. Only the supervisor's own exit (and, in
	// namespaces, the namespaces' teardown) remains: the parent need not
	// wait for it.
	Exited = 'X'
)

// SetupExit is the supervisor's exit status when it could not confine.
const SetupExit = 125

// Filter is one classic BPF instruction of the seccomp program.
type Filter struct {
	Code   uint16
	Jt, Jf uint8
	K      uint32
}

// Rule allows Access (Landlock rights) beneath Path.
type Rule struct {
	Path   string
	Access uint64
}

// Wire is everything the supervisor needs, decided by the parent.
type Wire struct {
	Path string
	Args []string
	Env  []string
	Dir  string

	Namespaced bool   // in its own user, network, PID and IPC namespaces
	HandledFS  uint64 // Landlock filesystem rights denied unless a rule allows
	HandledNet uint64 // Landlock TCP rights denied unless a port rule allows
	Scoped     uint64 // Landlock scopes (signals, abstract sockets)
	Rules      []Rule
	NetPorts   []uint64 // TCP ports the command may connect to (HandledNet)

	// ProxySocket: the host proxy's Unix socket, reached through a port the
	// supervisor opens on the namespace's loopback. ProxyPort: the proxy's
	// host port (no namespaces). Either sets the proxy variables.
	ProxySocket string
	ProxyPort   int

	MaxProcs, MaxData uint64
	Seccomp           []Filter
}

func init() {
	raw, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	// Everything from here runs on the main thread, which the command
	// inherits its confinement from: it must never run anything else.
	runtime.LockOSThread()
	// syscall.Exit, not os.Exit: nothing of this process is left to flush,
	// and in a binary built with -race os.Exit first sleeps a second for
	// the race detector's reports (GORACE atexit_sleep_ms).
	syscall.Exit(run(raw))
}

func run(mode string) int {
	if mode == Probe {
		if err := loopbackUp(); err != nil {
			os.Stderr.WriteString("packs-confine: " + err.Error() + "\n")
			return SetupExit
		}
		return 0
	}
	syscall.CloseOnExec(StatusFD)
	syscall.CloseOnExec(WireFD)
	// In namespaces of its own, the loopback is brought up before the call
	// comes: a supervisor started ahead has done it by then. Then it says
	// it is ready (Ready on the status pipe), and waits for its call.
	lo := loopbackUp()
	// Signals the parent sends the supervisor (SIGTERM at the time limit)
	// go on to the command; as the namespace's init, the supervisor would
	// otherwise ignore them. Their handler and the goroutine that forwards
	// them start before the call comes (their threads would otherwise
	// start beside the command, and slow its start on a busy machine);
	// what comes before the command runs waits for it.
	started := make(chan int, 1)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		pid := <-started
		for s := range sigs {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	// What no call changes is done before the call comes, too: the init
	// of a PID namespace of its own (a namespaced supervisor) empties its
	// capability bounding set, and any sets no_new_privs. restrict makes
	// sure of both again, for what is left.
	if syscall.Getpid() == 1 {
		_ = dropBounding()
	}
	_ = prctl(prSetNoNewPrivs, 1, 0)
	syscall.Write(StatusFD, []byte{Ready})
	raw, err := readAll(WireFD)
	syscall.Close(WireFD)
	if err != nil || len(raw) == 0 {
		return SetupExit // no call came: nothing to say, nobody to say it to
	}
	fail := func(what string, err error) int {
		msg := string(rune(Failed)) + what
		if err != nil {
			msg += ": " + err.Error()
		}
		syscall.Write(StatusFD, []byte(msg))
		syscall.Close(StatusFD)
		return SetupExit
	}
	w, err := Decode(string(raw))
	if err != nil {
		return fail("spec", err)
	}
	env := w.Env
	if w.Namespaced && lo != nil {
		return fail("loopback", lo)
	}
	port := w.ProxyPort
	if w.ProxySocket != "" {
		if port, err = forward(w.ProxySocket); err != nil {
			return fail("proxy port", err)
		}
	}
	if port != 0 {
		u := "http://127.0.0.1:" + strconv.Itoa(port)
		env = append(env, "HTTP_PROXY="+u, "HTTPS_PROXY="+u, "ALL_PROXY="+u,
			"http_proxy="+u, "https_proxy="+u, "all_proxy="+u, "NO_PROXY=", "no_proxy=")
	}
	for _, l := range []struct {
		res int
		max uint64
	}{{rlimitNproc, w.MaxProcs}, {syscall.RLIMIT_DATA, w.MaxData}, {syscall.RLIMIT_CORE, 0}} {
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return fail("rlimit "+strconv.Itoa(l.res), err)
		}
	}
	if what, err := restrict(w, port); err != nil {
		return fail(what, err)
	}
	pid, err := syscall.ForkExec(w.Path, w.Args, &syscall.ProcAttr{Dir: w.Dir, Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		return fail("start "+w.Path, err)
	}
	started <- pid
	syscall.Write(StatusFD, []byte{Started})
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	status := ws.ExitStatus()
	if ws.Signaled() {
		status = 128 + int(ws.Signal())
	}
	if w.Namespaced {
		killAll()
	}
	// The command's streams reach their end for the parent once nothing
	// of the command holds them (without namespaces, the parent kills the
	// process group on Exited).
	for fd := range 3 {
		syscall.Close(fd)
	}
	syscall.Write(StatusFD, []byte(string(rune(Exited))+strconv.Itoa(status)+"\n"))
	return status
}

// killAll kills every other process of the supervisor's PID namespace
// (what the command left running) and reaps them all: once it returns,
// none runs, none can write a file, none holds a descriptor. As the
// namespace's init, the supervisor inherits every orphan; kill(-1) is
// atomic against fork (a process forking meanwhile fails its fork), so
// when wait4 reports no child left, the namespace has no process but the
// supervisor.
func killAll() {
	syscall.Kill(-1, syscall.SIGKILL)
	for {
		_, err := syscall.Wait4(-1, nil, syscall.WALL, nil)
		if err != nil && err != syscall.EINTR {
			return // ECHILD: none left
		}
	}
}

// readAll reads fd to its end.
func readAll(fd int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// Kernel numbers the syscall package does not name.
const (
	rlimitNproc            = 6
	prSetNoNewPrivs        = 38
	prCapbsetRead          = 23
	prCapbsetDrop          = 24
	prCapAmbient           = 47
	prCapAmbientClearAll   = 4
	prSetSeccomp           = 22
	seccompModeFilter      = 2
	sysLandlockCreate      = 444
	sysLandlockAddRule     = 445
	sysLandlockRestrict    = 446
	landlockRulePathBelow  = 1
	landlockRuleNetPort    = 2
	capLastCap             = 63                                 // drop up to here; unknown ones answer EINVAL
	landlockFileRights     = 1<<0 | 1<<1 | 1<<2 | 1<<14 | 1<<15 // execute, write, read, truncate, ioctl_dev
	landlockRulesetAttrLen = 24
	oPath                  = 0x200000 // O_PATH, the same on amd64 and arm64
)

func prctl(op, a, b uintptr) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, op, a, b, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// restrict confines the calling thread, for good: no new privileges, no
// capabilities across exec, the Landlock domain, then the seccomp filter.
func restrict(w Wire, port int) (string, error) {
	if err := prctl(prSetNoNewPrivs, 1, 0); err != nil {
		return "no_new_privs", err
	}
	if w.Namespaced {
		// Root of its own user namespace: keep no capability across exec.
		if err := dropBounding(); err != nil {
			return "capability bounding set", err
		}
		if err := prctl(prCapAmbient, prCapAmbientClearAll, 0); err != nil {
			return "ambient capabilities", err
		}
	}
	if what, err := landlock(w, port); err != nil {
		return what, err
	}
	if len(w.Seccomp) == 0 {
		return "seccomp", syscall.EINVAL
	}
	prog := struct {
		len    uint16
		filter *Filter
	}{uint16(len(w.Seccomp)), &w.Seccomp[0]}
	if err := prctl(prSetSeccomp, seccompModeFilter, uintptr(unsafe.Pointer(&prog))); err != nil {
		return "seccomp", err
	}
	return "", nil
}

// dropBounding empties the capability bounding set of the calling thread:
// no capability survives an exec. A capability already dropped is
// skipped (each drop commits new credentials: 40 of them cost about
// 0.1 ms); one the kernel does not know answers EINVAL and is none.
func dropBounding() error {
	for c := uintptr(0); c <= capLastCap; c++ {
		held, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetRead, c, 0, 0, 0, 0)
		if e == syscall.EINVAL || (e == 0 && held == 0) {
			continue
		}
		if err := prctl(prCapbsetDrop, c, 0); err != nil && err != syscall.EINVAL {
			return err
		}
	}
	return nil
}

// landlock builds the ruleset of w and enforces it on this thread.
func landlock(w Wire, port int) (string, error) {
	attr := [3]uint64{w.HandledFS, w.HandledNet, w.Scoped}
	fd, _, e := syscall.RawSyscall(sysLandlockCreate, uintptr(unsafe.Pointer(&attr)), landlockRulesetAttrLen, 0)
	if e != 0 {
		return "landlock ruleset", e
	}
	defer syscall.Close(int(fd))
	for _, r := range w.Rules {
		pfd, err := syscall.Open(r.Path, oPath|syscall.O_CLOEXEC, 0)
		if err == syscall.ENOENT {
			continue // what does not exist cannot be reached either
		}
		if err != nil {
			return "landlock rule " + r.Path, err
		}
		access := r.Access & w.HandledFS
		var st syscall.Stat_t
		if err := syscall.Fstat(pfd, &st); err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			access &= landlockFileRights
		}
		// struct landlock_path_beneath_attr is packed: 8 + 4 bytes.
		var rule [12]byte
		*(*uint64)(unsafe.Pointer(&rule[0])) = access
		*(*int32)(unsafe.Pointer(&rule[8])) = int32(pfd)
		_, _, e := syscall.RawSyscall6(sysLandlockAddRule, fd, landlockRulePathBelow, uintptr(unsafe.Pointer(&rule[0])), 0, 0, 0)
		syscall.Close(pfd)
		if e != 0 {
			return "landlock rule " + r.Path, e
		}
	}
	ports := w.NetPorts
	if w.HandledNet != 0 && port != 0 {
		ports = append(ports, uint64(port))
	}
	for _, p := range ports {
		rule := [2]uint64{2 /* connect tcp */, p}
		if _, _, e := syscall.RawSyscall6(sysLandlockAddRule, fd, landlockRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return "landlock port rule", e
		}
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrict, fd, 0, 0); e != 0 {
		return "landlock restrict", e
	}
	return "", nil
}

// loopbackUp brings the namespace's lo up, so the proxy port can listen.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	ifr.flags |= syscall.IFF_UP
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	return nil
}

// forward listens on the namespace's loopback and carries each connection
// to the host proxy's Unix socket, which decides it. It runs on threads
// other than the confined one, for the supervisor's lifetime.
func forward(socket string) (int, error) {
	ln, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	if err := syscall.Bind(ln, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, err
	}
	if err := syscall.Listen(ln, 64); err != nil {
		return 0, err
	}
	sa, err := syscall.Getsockname(ln)
	if err != nil {
		return 0, err
	}
	go func() {
		for {
			in, _, err := syscall.Accept4(ln, syscall.SOCK_CLOEXEC)
			if err == syscall.EINTR || err == syscall.ECONNABORTED {
				continue
			}
			if err != nil {
				return
			}
			go splice(in, socket)
		}
	}()
	return sa.(*syscall.SockaddrInet4).Port, nil
}

func splice(in int, socket string) {
	defer syscall.Close(in)
	out, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer syscall.Close(out)
	if err := syscall.Connect(out, &syscall.SockaddrUnix{Name: socket}); err != nil {
		return
	}
	done := make(chan struct{}, 1)
	go func() { pump(out, in); done <- struct{}{} }()
	pump(in, out)
	<-done
}

// pump copies from src to dst until src ends, then ends dst's writing.
func pump(dst, src int) {
	buf := make([]byte, 32<<10)
	for {
		n, err := syscall.Read(src, buf)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			m, err := syscall.Write(dst, b)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				syscall.Shutdown(dst, syscall.SHUT_WR)
				return
			}
			b = b[m:]
		}
	}
	syscall.Shutdown(dst, syscall.SHUT_WR)
}

// Encode writes w as the supervisor reads it: each field its length, a
// colon and its bytes; lists prefixed by their length. (encoding/json
// would initialise late.)
func Encode(w Wire) string {
	var b strings.Builder
	str := func(s string) { b.WriteString(strconv.Itoa(len(s))); b.WriteByte(':'); b.WriteString(s) }
	num := func(n uint64) { str(strconv.FormatUint(n, 10)) }
	list := func(l []string) {
		num(uint64(len(l)))
		for _, s := range l {
			str(s)
		}
	}
	flag := uint64(0)
	if w.Namespaced {
		flag = 1
	}
	str(w.Path)
	list(w.Args)
	list(w.Env)
	str(w.Dir)
	num(flag)
	num(w.HandledFS)
	num(w.HandledNet)
	num(w.Scoped)
	num(uint64(len(w.Rules)))
	for _, r := range w.Rules {
		str(r.Path)
		num(r.Access)
	}
	num(uint64(len(w.NetPorts)))
	for _, p := range w.NetPorts {
		num(p)
	}
	str(w.ProxySocket)
	num(uint64(w.ProxyPort))
	num(w.MaxProcs)
	num(w.MaxData)
	num(uint64(len(w.Seccomp)))
	for _, f := range w.Seccomp {
		num(uint64(f.Code))
		num(uint64(f.Jt))
		num(uint64(f.Jf))
		num(uint64(f.K))
	}
	return b.String()
}

// Decode reads what Encode wrote.
func Decode(s string) (Wire, error) {
	bad := false
	str := func() string {
		n, rest, ok := strings.Cut(s, ":")
		l, err := strconv.Atoi(n)
		if !ok || err != nil || l < 0 || l > len(rest) {
			bad, s = true, ""
			return ""
		}
		s = rest[l:]
		return rest[:l]
	}
	num := func() uint64 {
		n, err := strconv.ParseUint(str(), 10, 64)
		if err != nil {
			bad = true
		}
		return n
	}
	list := func() []string {
		n := num()
		if bad || n > uint64(len(s)) {
			bad = true
			return nil
		}
		l := make([]string, n)
		for j := range l {
			l[j] = str()
		}
		return l
	}
	var w Wire
	w.Path = str()
	w.Args = list()
	w.Env = list()
	w.Dir = str()
	w.Namespaced = num() == 1
	w.HandledFS, w.HandledNet, w.Scoped = num(), num(), num()
	if n := num(); !bad && n <= uint64(len(s)) {
		for range n {
			w.Rules = append(w.Rules, Rule{Path: str(), Access: num()})
		}
	}
	if n := num(); !bad && n <= uint64(len(s)) {
		for range n {
			w.NetPorts = append(w.NetPorts, num())
		}
	}
	w.ProxySocket = str()
	w.ProxyPort = int(num())
	w.MaxProcs, w.MaxData = num(), num()
	if n := num(); !bad && n <= uint64(len(s)) {
		for range n {
			w.Seccomp = append(w.Seccomp, Filter{Code: uint16(num()), Jt: uint8(num()), Jf: uint8(num()), K: uint32(num())})
		}
	}
	if bad {
		return Wire{}, syscall.EINVAL
	}
	return w, nil
}
