package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// runWasm runs a WASI command or an Extism plugin export in a fresh
// instance. content, when set, is what the pack's files held when they were
// checked against packs.lock: the module compiled must be the one it names.
func (r *Runtime) runWasm(ctx context.Context, inv Invocation, content *packs.Content, input []byte, lim capability.Limits, log *slog.Logger) (Result, error) {
	m, err := r.module(ctx, inv.Pack, inv.Tool, content)
	if err != nil {
		return Result{}, err
	}
	// A module that imports host functions its grant lacks is refused (and
	// the refusal recorded) before anything is instantiated.
	req := &hostfns.Call{
		Pack: inv.Pack.Name, Tool: inv.Tool.Name, Invocation: inv.ID, Grant: inv.Grant, Approval: inv.Approval, Recorder: inv.Recorder,
		PackRoot: inv.Pack.Dir, Workspace: inv.Workspace, Logger: log,
	}
	if err := hostfns.Require(req, m.groups); err != nil {
		return Result{}, err
	}
	environ := grantedEnviron(inv.Grant, os.Environ)
	s := &spec{
		mod: m, pack: inv.Pack.Name, packRoot: inv.Pack.Dir, workspace: inv.Workspace,
		grant: inv.Grant, environ: environ, pages: lim.MemoryPages, log: r.log.With("pack", inv.Pack.Name),
	}
	key := poolKey{
		module: m.key, pages: lim.MemoryPages, packRoot: inv.Pack.Dir, workspace: inv.Workspace,
		mounts: mountKey(inv.Grant.Mounts()), env: envKey(inv.Grant, environ),
	}
	// The environment is fixed when an instance is built, and one built
	// ahead of its call is shown no variable: a grant that makes any
	// visible is served on the spot.
	s.poolable = key.env == [32]byte{}
	if inv.Tool.Run.ABI == packs.ABIWASI {
		s.rt, s.tool, key.tool = r.wasi, inv.Tool.Name, inv.Tool.Name
	} else if s.plugin, err = r.plugin(ctx, m); err != nil {
		return Result{}, fmt.Errorf("%w: %s: %s: %w", ErrModule, inv.Pack.Name, inv.Tool.Run.Wasm, err)
	}
	begin := time.Now()
	in, pl, err := r.take(ctx, key, s, inv, log)
	if pl != nil {
		defer pl.refill()
	}
	if err != nil {
		return Result{}, err
	}
	defer r.retire(ctx, in)
	var res Result
	if in.plugin != nil {
		res, err = in.callPlugin(ctx, inv, input, lim)
	} else {
		res, err = in.callWASI(ctx, inv, input, lim)
	}
	res.Duration = time.Since(begin)
	return res, err
}

// grantedEnviron returns the variables of the process environment (from
// environ) that g may make visible: nil without an env_read grant, so that a
// call that can see no variable neither builds nor sorts the environment.
// hostfns.Environ decides and records each variable returned.
func grantedEnviron(g capability.Grant, environ func() []string) []string {
	if !g.Has(capability.EnvRead) {
		return nil
	}
	var out []string
	for _, kv := range environ() {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" && g.Env(k).Allowed() {
			out = append(out, kv)
		}
	}
	return out
}

// retire closes a used instance in the background, after its call has
// returned: unmapping a memory the guest has touched costs about 100 µs
// (for a Go guest), which the caller need not wait for. Nothing of the
// instance is used once its call has returned (the result and the logs are
// copies), and Close waits for every retirement (r.wg).
func (r *Runtime) retire(ctx context.Context, in *instance) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		in.close(ctx)
	}()
}

// callWASI runs a WASI command's _start with input on stdin.
func (in *instance) callWASI(ctx context.Context, inv Invocation, input []byte, lim capability.Limits) (Result, error) {
	in.stdin.Reset(input)
	callCtx, stop, cancel := callContext(ctx, lim, in.call)
	defer cancel()
	defer stop(nil)
	in.stdout.limit = lim.OutputBytes
	in.stdout.stop = func() { stop(ErrOutputLimit) }

	_, err := in.mod.ExportedFunction("_start").Call(callCtx)
	res := Result{Stderr: bytes.Clone(in.stderr.buf.Bytes()), Truncated: in.stderr.over}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		res.ExitCode = int(exit.ExitCode())
		if res.ExitCode == 0 {
			err = nil
		}
	}
	if stackLimitHit(err) {
		return res, fmt.Errorf("%w: the guest's calls nested too deep and it was stopped", ErrStackLimit)
	}
	if lerr := in.limitError(ctx, callCtx, err != nil, lim); lerr != nil {
		return res, lerr
	}
	switch {
	case err == nil:
		res.Output = jsonResult(in.stdout.buf.Bytes())
		return res, nil
	case exit != nil:
		return res, &ToolError{Pack: inv.Pack.Name, Tool: inv.Tool.Name, ExitCode: res.ExitCode, Message: lastLine(res.Stderr), Stderr: res.Stderr}
	}
	return res, guestError(inv, err)
}

// callPlugin calls an Extism plugin's export with input.
func (in *instance) callPlugin(ctx context.Context, inv Invocation, input []byte, lim capability.Limits) (Result, error) {
	callCtx, stop, cancel := callContext(ctx, lim, in.call)
	defer cancel()
	defer stop(nil)

	rc, out, err := in.plugin.CallWithContext(callCtx, inv.Tool.Run.Function, input)
	res := Result{Stderr: bytes.Clone(in.stderr.buf.Bytes()), Truncated: in.stderr.over, ExitCode: int(rc)}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		res.ExitCode = int(exit.ExitCode())
	}
	if stackLimitHit(err) {
		return res, fmt.Errorf("%w: the guest's calls nested too deep and it was stopped", ErrStackLimit)
	}
	if lerr := in.limitError(ctx, callCtx, err != nil || rc != 0, lim); lerr != nil {
		return res, lerr
	}
	if int64(len(out)) > lim.OutputBytes {
		return res, fmt.Errorf("%w: the tool returned %d bytes, the limit is %d: ask for less, or raise [limits] output_bytes", ErrOutputLimit, len(out), lim.OutputBytes)
	}
	switch {
	case err == nil && rc == 0:
		res.Output = jsonResult(out)
		return res, nil
	case err == nil:
		return res, &ToolError{Pack: inv.Pack.Name, Tool: inv.Tool.Name, ExitCode: res.ExitCode, Message: fmt.Sprintf("%s returned %d; %s", inv.Tool.Run.Function, rc, lastLine(res.Stderr)), Stderr: res.Stderr}
	case exit != nil:
		return res, &ToolError{Pack: inv.Pack.Name, Tool: inv.Tool.Name, ExitCode: res.ExitCode, Message: lastLine(res.Stderr), Stderr: res.Stderr}
	}
	// go-sdk returns the plugin's own error (error_set) as errors.New of its
	// message; anything else stopped the guest.
	if msg := in.plugin.GetErrorWithContext(context.WithoutCancel(ctx)); msg != "" && msg == err.Error() {
		res.ExitCode = max(res.ExitCode, 1)
		return res, &ToolError{Pack: inv.Pack.Name, Tool: inv.Tool.Name, ExitCode: res.ExitCode, Message: msg, Stderr: res.Stderr}
	}
	return res, guestError(inv, err)
}

// limitError explains a failed call (failed is true) by the limit that
// stopped it, if one did: output, memory, time, or the caller's
// cancellation.
func (in *instance) limitError(parent, callCtx context.Context, failed bool, lim capability.Limits) error {
	cause := context.Cause(callCtx)
	switch {
	case errors.Is(cause, ErrOutputLimit) || in.stdout != nil && in.stdout.over:
		return fmt.Errorf("%w: the tool wrote more than %d bytes of result and was stopped: ask for less, or raise [limits] output_bytes", ErrOutputLimit, lim.OutputBytes)
	case !failed:
		return nil
	case in.budget.exceeded():
		return fmt.Errorf("%w: the guest asked for more than %d pages (%d MiB) of memory and was stopped: raise [limits] memory_mb", ErrMemoryLimit, lim.MemoryPages, lim.MemoryPages/16)
	case errors.Is(cause, ErrTimeout):
		return fmt.Errorf("%w: the guest ran past %s and was stopped: raise [limits] timeout", ErrTimeout, lim.Timeout)
	case parent.Err() != nil:
		return fmt.Errorf("runtime: call cancelled: %w", context.Cause(parent))
	}
	return nil
}

// guestError is an error that stopped the guest without a limit: a denial
// from a host function (it still matches capability.ErrDenied) or a trap
// (ErrTrap). Its message is one line; wazero's stack trace stays in the
// wrapped error.
func guestError(inv Invocation, err error) error {
	first, _, _ := strings.Cut(err.Error(), "\n")
	name := inv.Pack.Name + "__" + inv.Tool.Name
	if errors.Is(err, capability.ErrDenied) {
		return &stopError{msg: "runtime: tool " + name + " was stopped: " + first, errs: []error{err}}
	}
	return &stopError{msg: "runtime: guest trapped: tool " + name + ": " + first, errs: []error{ErrTrap, err}}
}

// stopError is a one-line error wrapping several.
type stopError struct {
	msg  string
	errs []error
}

func (e *stopError) Error() string   { return e.msg }
func (e *stopError) Unwrap() []error { return e.errs }

// lastLine returns the last non-empty line of b, for an error message.
func lastLine(b []byte) string {
	b = bytes.TrimRight(b, "\r\n\t ")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	const max = 512
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
