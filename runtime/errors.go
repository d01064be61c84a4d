package runtime

import (
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
)

// Errors from Invoke and Precompile. Check them with errors.Is; a refused
// call also matches capability.ErrDenied, and invalid input matches
// packs.ErrInvalidInput.
var (
	// ErrNotApproved: the invocation carries no Approval from the gate that
	// covers its ID. Nothing ran. It wraps capability.ErrDenied.
	ErrNotApproved = fmt.Errorf("runtime: call not approved by the gate: %w", capability.ErrDenied)
	// ErrTimeout: the call ran past Limits.Timeout and the guest (or the
	// native command's process group) was stopped.
	// It is hostfns.ErrTimeout (one sentinel per meaning), named here too
	// because it is the runtime's answer for guests as well.
	ErrTimeout = hostfns.ErrTimeout
	// ErrMemoryLimit: the guest asked for more linear memory than
	// Limits.MemoryPages, or its module declares more than that up front.
	ErrMemoryLimit = errors.New("runtime: memory limit exceeded")
	// ErrOutputLimit: the guest wrote more than Limits.OutputBytes of result;
	// a WASI guest is stopped the moment it does.
	ErrOutputLimit = errors.New("runtime: output limit exceeded")
	// ErrInputLimit: the arguments are larger than Limits.InputBytes.
	ErrInputLimit = errors.New("runtime: input limit exceeded")
	// ErrTrap: the guest trapped (unreachable, out-of-bounds access, a host
	// function that failed hard, ...). The instance was discarded.
	ErrTrap = errors.New("runtime: guest trapped")
	// ErrToolFailed: the tool ran and reported failure: an Extism plugin set
	// an error or returned non-zero, a WASI command or a native command exited
	// with a non-zero status. *ToolError carries the details.
	ErrToolFailed = errors.New("runtime: tool failed")
	// ErrModule: a tool's wasm module cannot be read, is not valid WebAssembly,
	// or lacks the export its tools.json entry names.
	ErrModule = errors.New("runtime: bad module")
	// ErrClosed: the Runtime was closed.
	ErrClosed = errors.New("runtime: closed")
)

// ToolError is a tool's own failure (ErrToolFailed): what it said, its exit
// status and the tail of its stderr.
type ToolError struct {
	Pack, Tool string
	ExitCode   int    // the guest's or command's exit status; 1 for an Extism error without one
	Message    string // the plugin's error, or the last line of stderr
	Stderr     []byte
}

func (e *ToolError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("runtime: tool %s__%s failed (exit status %d): %s", e.Pack, e.Tool, e.ExitCode, msg)
}

func (e *ToolError) Unwrap() error { return ErrToolFailed }
