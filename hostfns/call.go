// Package hostfns is the only door between a pack's WebAssembly guest and the
// host. It holds one group of host functions per capability and the guest's
// view of the filesystem and environment; every door checks the call's
// capability.Grant and records each exercise, allowed or denied, through the
// call's capability.Recorder.
//
// The groups, and what wires them in:
//
//	filesystem_read/_write  FS: preopens /pack (read-only), /workspace (read-write,
//	                        also the working directory) and each granted mount
//	env_read                Environ (WASI environment and Extism config) and the
//	                        config_get host function
//	network                 http_request, http_status_code, http_headers
//	                        (NetworkNamespace, Extism's signatures), and
//	                        http_truncated
//	terminal_exec           Exec and the exec host function (ExecNamespace)
//	secrets_access          injection into http_request (WithSecrets), and
//	                        secret_get for a reveal grant (SecretsNamespace)
//	(always)                log_* and get_log_level (LogNamespace), config_get
//	                        (ConfigNamespace), progress (ProgressNamespace)
//	ask_person              ask (AskNamespace): always linked, it checks the
//	                        grant at each question and answers "denied"
//	(no capability)         the Extism kernel's functions (KernelNamespace),
//	                        forwarded to the instance's own kernel
//
// A guest whose grant lacks a group does not get a function that refuses: it
// gets no function at all, and Require turns the missing import into a denial
// before anything is instantiated. docs/abi.md is the versioned contract.
package hostfns

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/packs-run/packs/capability"
)

// Errors a host function or helper returns. Denials wrap capability.ErrDenied
// instead (check with errors.Is).
var (
	// ErrNoCall means a host function ran with no Call in its context: the
	// runtime did not use WithCall. It traps the guest.
	ErrNoCall = errors.New("hostfns: no call in context")
	// ErrNoRecorder means a Call has a nil Recorder. Exercises could not be
	// audited, so nothing runs.
	ErrNoRecorder = errors.New("hostfns: call has no recorder")
	// ErrInvalidRequest means the guest sent something malformed: bad JSON, a
	// URL that does not parse, a scheme other than http or https, an empty argv.
	ErrInvalidRequest = errors.New("hostfns: invalid request")
	// ErrResponseTooLarge means an HTTP response body passed MaxResponseBytes.
	ErrResponseTooLarge = errors.New("hostfns: http response too large")
	// ErrFirstByteTimeout means a server sent no response headers within
	// the request's first_byte_timeout_ms.
	ErrFirstByteTimeout = errors.New("hostfns: server did not respond in time")
	// ErrCommandNotFound means a granted command is not an executable file on
	// the fixed exec PATH (or at its absolute path).
	ErrCommandNotFound = errors.New("hostfns: command not found")
	// ErrTimeout means a call ran past its time limit: a native command (its
	// whole process group was killed) or a guest (it was stopped). It is the
	// one sentinel for that meaning; runtime.ErrTimeout is the same value.
	ErrTimeout = errors.New("hostfns: time limit exceeded")
	// ErrBadModule means a wasm binary could not be parsed.
	ErrBadModule = errors.New("hostfns: malformed wasm module")
	// ErrRecord means the Recorder failed; the exercise did not happen.
	ErrRecord = errors.New("hostfns: recording the exercise failed")
)

// Call is everything a host function needs to know about the invocation it
// serves. The runtime puts it in the context of every guest call
// (WithCall) and host functions read it back (CallFrom). One Call serves one
// invocation; it must not be copied after first use.
//
// Recorder must not be nil: every exercise is recorded before its result
// reaches the guest (a change, before it is made), and a call that cannot be
// audited does not run. FS, Environ, Exec and Require refuse a nil Recorder
// (ErrNoRecorder; Environ exposes nothing) and host functions trap with it;
// the runtime never builds such a Call. A nil Logger discards guest logs.
type Call struct {
	Pack, Tool, Invocation string
	Grant                  capability.Grant
	// Approval is the gate's yes to this invocation of this tool under
	// Grant. Until it holds (capability.Approval.Holds), every exercise is
	// denied and recorded: an instance built ahead of its call, whose
	// initializer runs guest code, holds no capability at all. Exec refuses
	// to start a command without it.
	Approval            capability.Approval
	Recorder            capability.Recorder
	PackRoot, Workspace string // absolute host paths
	Logger              *slog.Logger

	mu      sync.Mutex
	env     map[string]string // what Environ exposed, served by config_get
	status  int32             // last HTTP status code
	headers map[string]string // last HTTP response headers
	cut     bool              // the last HTTP body was cut by its body timeout
	logged  int               // bytes of guest log and progress messages written so far
	// the guest's progress reports so far, and the last one's value
	progressed   int
	lastProgress float64
	asked        int // questions put to the person so far (ask.go)

	// the functions of the instance's Extism kernel looked up so far
	// (kernel.go)
	kernel    api.Module
	kernelFns []api.Function
}

type callKey struct{}

// WithCall returns a context that carries c for the host functions.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the Call that WithCall put in ctx.
func CallFrom(ctx context.Context) (*Call, bool) {
	c, ok := ctx.Value(callKey{}).(*Call)
	return c, ok && c != nil
}

// check reports whether c can serve a host function at all.
func (c *Call) check() error {
	if c == nil {
		return ErrNoCall
	}
	if c.Recorder == nil {
		return ErrNoRecorder
	}
	return nil
}

// approved reports whether the gate's approval holds for this call.
func (c *Call) approved() bool {
	return c.Approval.Holds(c.Invocation, c.Pack, c.Tool, c.Grant)
}

// reasonUnapproved explains an exercise refused because its call was not
// approved (yet).
const reasonUnapproved = "the call is not approved: code that runs before approval (a module's initializer) holds no capability"

// unapproved turns e into the denial of an exercise tried before approval.
func unapproved(e capability.Exercise) capability.Exercise {
	e.Allowed, e.Layer, e.Reason = false, capability.LayerGate, reasonUnapproved
	return e
}

// record stores one exercise. A failure to record is returned wrapped in
// ErrRecord and the caller must not go on with the exercise. An exercise
// that would be allowed is recorded as a denial, and refused, while the
// call is not approved: this is the one place every exercise passes.
func (c *Call) record(e capability.Exercise) error {
	var denied error
	if e.Allowed && !c.approved() {
		e = unapproved(e)
		denied = &capability.DeniedError{Capability: e.Capability, Resource: e.Resource, Layer: capability.LayerGate, Cause: capability.ErrUnapproved, Reason: reasonUnapproved}
	}
	if err := c.Recorder.RecordExercise(e); err != nil {
		return errors.Join(ErrRecord, err)
	}
	return denied
}

// decide records d and returns nil when it allows, d.Err() when it denies,
// or the recording error.
func (c *Call) decide(d capability.Decision) error {
	if err := c.record(d.Record(c.Pack, c.Tool, c.Invocation)); err != nil {
		return err
	}
	return d.Err()
}

// exercise builds the record of an exercise that no Grant method decides:
// the runtime's default mounts (pack root read-only, workspace read-write)
// and a refusal that only narrows an allow (a path escaping its mount).
func (c *Call) exercise(n capability.Name, resource string, allowed bool, reason string) capability.Exercise {
	return capability.Exercise{
		Pack: c.Pack, Tool: c.Tool, Invocation: c.Invocation,
		Capability: n, Resource: resource, Allowed: allowed, Reason: reason, Time: time.Now().UTC(),
	}
}

// logger returns the call's logger or one that discards.
func (c *Call) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}
