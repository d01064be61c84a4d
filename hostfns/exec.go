package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	extism "github.com/extism/go-sdk"
)

// SafePath is the only PATH a native command is looked up in, and the PATH
// it runs with.
const SafePath = "/usr/bin:/bin"

// DefaultGrace is how long a timed-out command's process group has between
// SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// ExecOptions tune one Exec. Zero fields take the grant's limits.
type ExecOptions struct {
	Stdin     []byte
	Timeout   time.Duration // wall clock; 0: Grant.Limits().Timeout
	Grace     time.Duration // SIGTERM to SIGKILL; 0: DefaultGrace
	MaxOutput int64         // bytes kept per stream; 0: Grant.Limits().OutputBytes
	// Dir is the working directory: the Call's Workspace (the default) or
	// its PackRoot, read-only; nothing else.
	Dir string
	// Environ is the host environment ("K=V") the granted variables come
	// from, through Environ (which records them). nil passes what Environ
	// already exposed for this call, if anything.
	Environ []string
}

// ExecResult is what a native command did.
type ExecResult struct {
	ExitCode  int // the exit status, or 128+n when killed by signal n
	Stdout    []byte
	Stderr    []byte
	Truncated bool // a stream passed MaxOutput: it was cut and ends in a marker
	// Capped: the command was stopped because a stream passed MaxOutput
	// (ExitCode is then its death by SIGKILL); not an error.
	Capped   bool
	Duration time.Duration
}

// Status is the command's status as a call's outcome: 0 when it exited 0
// or was stopped at its output cap (the kept output is the answer), else
// its exit status.
func (r ExecResult) Status() int {
	if r.Capped {
		return 0
	}
	return r.ExitCode
}

// Exec runs a native command for an exec tool, the exec host function,
// the chat's exec_best_effort and a recipe step: it is the one door that
// starts a pack's native command. argv[0] must be granted (Grant.Command;
// the decision is recorded) and is looked up on SafePath only (or used as
// is when the grant names an absolute path); the found program's base name
// must be the granted one. It runs directly, never through a shell, so
// arguments reach it verbatim; with an environment of only PATH=SafePath,
// HOME=workspace, LANG=C.UTF-8, TMPDIR (private to the call) and the
// granted variables (the fixed ones win); in the workspace.
//
// It runs confined by the grant (sandbox.go, package confine): it sees the
// system's programs and libraries, the pack root and the granted
// filesystem_read mounts read-only, the workspace, its private temporary
// directory and the granted filesystem_write mounts read-write, nothing
// else; no network but, with a network grant, packs' proxy, which decides
// each connection as http_request's are decided. Where the machine cannot
// confine, Grant.Unconfined decides (the policy's [exec] confinement).
//
// When the command exits, anything it left is killed (its PID namespace,
// or its process group). On timeout (or when ctx ends) the whole group
// gets SIGTERM, then SIGKILL after the grace; the result is returned with
// an error wrapping ErrTimeout (or ctx's error). Each stream keeps
// MaxOutput bytes; when one passes it, the command is stopped at once and
// the result carries the kept bytes, a marker saying so, Truncated and
// Capped, and no error.
func Exec(ctx context.Context, c *Call, argv []string, opt ExecOptions) (ExecResult, error) {
	if err := c.check(); err != nil {
		return ExecResult{}, err
	}
	if len(argv) == 0 || argv[0] == "" {
		return ExecResult{}, fmt.Errorf("%w: exec needs a program in argv[0]", ErrInvalidRequest)
	}
	if err := c.decide(c.Grant.Command(argv[0])); err != nil {
		return ExecResult{}, err
	}
	prog, err := lookPath(argv[0], fakesFrom(ctx).ExecPath)
	if err != nil {
		return ExecResult{}, err
	}
	lim := c.Grant.Limits()
	if opt.Timeout <= 0 {
		opt.Timeout = lim.Timeout
	}
	if opt.Grace <= 0 {
		opt.Grace = DefaultGrace
	}
	if opt.MaxOutput <= 0 {
		opt.MaxOutput = lim.OutputBytes
	}
	if opt.Dir != "" && opt.Dir != c.Workspace && opt.Dir != c.PackRoot {
		return ExecResult{}, fmt.Errorf("%w: a command runs in the workspace or the pack root, not %s", ErrInvalidRequest, opt.Dir)
	}
	sb, err := c.sandbox(ctx, argv[0], prog, opt.Dir)
	if err != nil {
		return ExecResult{}, err
	}
	defer sb.close()
	cmd, err := sb.command(prog, argv, c.execEnv(opt.Environ, sb.tmp))
	if err != nil {
		return ExecResult{}, err
	}

	// A stream past its cap stops the command.
	capped, capStop := context.WithCancelCause(ctx)
	defer capStop(nil)
	full := func() { capStop(errOutputCapped) }
	stdout := &cappedBuffer{max: opt.MaxOutput, full: full}
	stderr := &cappedBuffer{max: opt.MaxOutput, full: full}
	start := time.Now()
	if err := sb.start(cmd, bytes.NewReader(opt.Stdin), stdout, stderr); err != nil {
		return ExecResult{}, fmt.Errorf("hostfns: exec %s: %w", argv[0], err)
	}
	// The time limit is the command's: it counts from when the command
	// runs, not from the making of its confinement.
	running, cancel := context.WithTimeout(capped, opt.Timeout)
	defer cancel()
	pgid := cmd.Process.Pid
	// A process that left the group may hold the pipes open: reap stops
	// waiting for it once the group is gone and the grace has passed.
	exited, reap := sb.watch(cmd, opt.Grace)
	var stopped error
	select {
	case <-exited:
	case <-running.Done():
		stopped = context.Cause(running)
		if errors.Is(stopped, errOutputCapped) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
			break
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(opt.Grace):
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	// The leader is not reaped yet (a zombie, or a supervisor that
	// reported): its pid still names the group, so this reaches only the
	// command's own leftovers.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	code, waitErr := reap()
	sb.release()
	res := ExecResult{
		Stdout:    stdout.bytes(),
		Stderr:    stderr.bytes(),
		Truncated: stdout.dropped > 0 || stderr.dropped > 0,
		Capped:    errors.Is(stopped, errOutputCapped),
		Duration:  time.Since(start),
		ExitCode:  code,
	}
	switch {
	case res.Capped:
		return res, nil
	case errors.Is(stopped, context.DeadlineExceeded):
		return res, fmt.Errorf("%w: %s after %s (process group killed)", ErrTimeout, argv[0], opt.Timeout)
	case stopped != nil:
		return res, fmt.Errorf("hostfns: exec %s: %w", argv[0], stopped)
	case res.ExitCode < 0:
		return res, fmt.Errorf("hostfns: exec %s: %w", argv[0], waitErr)
	}
	return res, nil
}

// errOutputCapped stops a command whose output reached its cap.
var errOutputCapped = errors.New("hostfns: output cap reached")

// exitCode is the command's exit status, 128+n for a death by signal n, or
// -1 when it is unknown.
func exitCode(cmd *exec.Cmd) int {
	ps := cmd.ProcessState
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// lookPath resolves a granted program name on SafePath only (or on the
// fake path of a test, Fakes.ExecPath, when it is set), through
// exec.LookPath's executable check.
func lookPath(name, fakePath string) (string, error) {
	path := SafePath
	if fakePath != "" {
		path = fakePath
	}
	var candidates []string
	switch {
	case filepath.IsAbs(name):
		candidates = []string{filepath.Clean(name)}
	case strings.ContainsRune(name, '/'):
		return "", fmt.Errorf("%w: %q: a command is a bare name or an absolute path", ErrCommandNotFound, name)
	default:
		for _, dir := range filepath.SplitList(path) {
			candidates = append(candidates, filepath.Join(dir, name))
		}
	}
	for _, p := range candidates {
		found, err := exec.LookPath(p)
		if err == nil && filepath.Base(found) == filepath.Base(name) {
			return found, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not an executable in %s; grant its absolute path instead", ErrCommandNotFound, name, path)
}

// execEnv is the scrubbed environment of a native command; tmp is its
// private temporary directory.
func (c *Call) execEnv(environ []string, tmp string) []string {
	var vars map[string]string
	if environ != nil {
		vars = Environ(c, environ)
	} else {
		c.mu.Lock()
		vars = maps.Clone(c.env)
		c.mu.Unlock()
	}
	fixed := map[string]string{"PATH": SafePath, "HOME": c.Workspace, "LANG": "C.UTF-8", "TMPDIR": tmp}
	env := []string{"PATH=" + SafePath, "HOME=" + c.Workspace, "LANG=C.UTF-8", "TMPDIR=" + tmp}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if _, ok := fixed[k]; !ok {
			env = append(env, k+"="+vars[k])
		}
	}
	return env
}

// cappedBuffer keeps the first max bytes written to it and counts the rest;
// full is called at the first byte dropped. os/exec gives each stream its
// own goroutine, so it needs no lock.
type cappedBuffer struct {
	max     int64
	buf     bytes.Buffer
	dropped int64
	full    func()
}

func (w *cappedBuffer) Write(p []byte) (int, error) {
	room := max(w.max-int64(w.buf.Len()), 0)
	take := min(room, int64(len(p)))
	w.buf.Write(p[:take])
	if take < int64(len(p)) && w.dropped == 0 && w.full != nil {
		w.full()
	}
	w.dropped += int64(len(p)) - take
	return len(p), nil
}

// bytes returns what was kept, ending in a marker when anything was dropped.
func (w *cappedBuffer) bytes() []byte {
	if w.dropped == 0 {
		return w.buf.Bytes()
	}
	return fmt.Appendf(w.buf.Bytes(), "\n[packs: output truncated: %d bytes dropped]\n", w.dropped)
}

// ExecRequest is the JSON a guest passes to the exec host function.
type ExecRequest struct {
	Argv  []string `json:"argv"`
	Stdin string   `json:"stdin,omitempty"`
}

// ExecResponse is the JSON the exec host function returns. Output that is
// not valid UTF-8 is carried with U+FFFD replacements.
type ExecResponse struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

// execHost is exec(request i64) -> i64: request is a memory block holding
// ExecRequest, the result a block holding ExecResponse. The command gets
// the call's limits and the variables Environ exposed. A denial, a missing
// command or a timeout traps the call.
func execHost(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	var req ExecRequest
	if err := json.Unmarshal(mustReadBytes(p, stack[0]), &req); err != nil {
		panic(fmt.Errorf("%w: exec: %v", ErrInvalidRequest, err))
	}
	res, err := Exec(ctx, c, req.Argv, ExecOptions{Stdin: []byte(req.Stdin)})
	if err != nil {
		panic(err)
	}
	b, err := json.Marshal(ExecResponse{ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr), Truncated: res.Truncated})
	if err != nil {
		panic(fmt.Errorf("hostfns: exec: %w", err))
	}
	stack[0] = mustWrite(p, b)
}
