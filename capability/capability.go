// Package capability holds what a pack asks for (Request), what it may exercise
// (Grant), the verdicts on each exercise (Decision), the approval of a call
// (Approval) and the audit record types. Grants, decisions and approvals are
// sealed: their fields are unexported and their zero values allow nothing, so
// no other package can forge a permission.
package capability

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Name is one capability bucket from spec 001.
type Name string

const (
	TerminalExec    Name = "terminal_exec"
	FilesystemRead  Name = "filesystem_read"
	FilesystemWrite Name = "filesystem_write"
	Network         Name = "network"
	EnvRead         Name = "env_read"
	SecretsAccess   Name = "secrets_access"
	// AskPerson lets a guest ask the person a question during its call
	// (hostfns' ask host function); its one resource is AskResource.
	AskPerson Name = "ask_person"
)

// AskResource is the one resource of ask_person: the person behind the call.
const AskResource = "person"

// all lists every capability in a stable order.
var all = [...]Name{TerminalExec, FilesystemRead, FilesystemWrite, Network, EnvRead, SecretsAccess, AskPerson}

// All lists every capability in a stable order. It returns a new slice:
// nothing outside this package can change the list.
func All() []Name { return slices.Clone(all[:]) }

// numNames is len(all), for arrays indexed by nameIndex.
const numNames = 7

// nameIndex is n's position in All, or -1.
func nameIndex(n Name) int {
	for i, m := range all {
		if m == n {
			return i
		}
	}
	return -1
}

// ParseName returns the Name for s, or an error naming the valid choices.
func ParseName(s string) (Name, error) {
	for _, n := range all {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("capability: unknown capability %q (want one of terminal_exec, filesystem_read, filesystem_write, network, env_read, secrets_access, ask_person)", s)
}

// ErrDenied is the sentinel every denial wraps. Check it with errors.Is.
var ErrDenied = errors.New("capability: denied")

// Finer sentinels say why a call or a capability was denied. Every
// *DeniedError wraps ErrDenied and, when the layer knows it, one of these.
var (
	// ErrBlocked: the enterprise policy blocks the pack, by name or digest.
	ErrBlocked = errors.New("capability: pack blocked by policy")
	// ErrPolicyCeiling: the enterprise policy never grants this much.
	ErrPolicyCeiling = errors.New("capability: beyond the policy's ceiling")
	// ErrNotGranted: the person has not granted the capability or resource.
	ErrNotGranted = errors.New("capability: not granted")
	// ErrRevoked: the person granted the capability, then revoked it.
	ErrRevoked = errors.New("capability: grant revoked")
	// ErrNotRequested: the pack's skill.toml never asked for it.
	ErrNotRequested = errors.New("capability: not requested by the pack")
	// ErrRejected: an approver answered no to one call.
	ErrRejected = errors.New("capability: call rejected by the approver")
	// ErrApprovalMismatch: the call is not the one the approval was given
	// for (another invocation, pack, tool, arguments, grant or pack content),
	// or it has no approval at all.
	ErrApprovalMismatch = errors.New("capability: the approval does not cover this call")
	// ErrReserved: the resource is packs' own (a PACKS_* variable): no
	// grant reaches it.
	ErrReserved = errors.New("capability: reserved for packs itself")
	// ErrUnconfined: a native command would run with less than the full
	// operating-system confinement, and the policy requires it.
	ErrUnconfined = errors.New("capability: native command cannot be confined here")
	// ErrUnapproved: guest code tried to exercise a capability before its
	// call was approved (a pooled instance's initializer).
	ErrUnapproved = errors.New("capability: exercised before the call was approved")
)

// Layer says which layer of the deny-dominant stack produced a decision.
type Layer string

const (
	LayerPolicy  Layer = "policy"  // the enterprise policy file
	LayerUser    Layer = "user"    // the person's grants
	LayerRequest Layer = "request" // the pack never asked for it
	LayerGate    Layer = "gate"    // the approver of one call
)

// DeniedError is the typed form of a denial. It wraps ErrDenied and, when
// set, Cause (one of the finer sentinels above).
type DeniedError struct {
	Capability Name // empty for a whole call or a whole pack
	Resource   string
	Layer      Layer
	Reason     string
	Cause      error
	Approver   string // for a call denied by the gate: the approver who said no
}

func (e *DeniedError) Error() string {
	switch {
	case e.Capability == "" && e.Resource == "":
		return fmt.Sprintf("capability: denied by %s: %s", e.Layer, e.Reason)
	case e.Resource == "":
		return fmt.Sprintf("capability: %s denied by %s: %s", e.Capability, e.Layer, e.Reason)
	}
	return fmt.Sprintf("capability: %s %q denied by %s: %s", e.Capability, e.Resource, e.Layer, e.Reason)
}

// Unwrap returns ErrDenied and the finer cause, for errors.Is.
func (e *DeniedError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrDenied}
	}
	return []error{ErrDenied, e.Cause}
}

// Limits bound one call. Zero fields mean "use the default".
type Limits struct {
	MemoryPages uint32        // wasm pages of 64 KiB
	Timeout     time.Duration // wall clock, the guest is stopped when it passes
	InputBytes  int64
	OutputBytes int64
}

// DefaultLimits are conservative: 64 MiB of memory, 30 s, 1 MiB in, 1 MiB out.
func DefaultLimits() Limits {
	return Limits{MemoryPages: 1024, Timeout: 30 * time.Second, InputBytes: 1 << 20, OutputBytes: 1 << 20}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MemoryPages == 0 {
		l.MemoryPages = d.MemoryPages
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.InputBytes == 0 {
		l.InputBytes = d.InputBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = d.OutputBytes
	}
	return l
}

// capTo lowers each field of l to the matching field of ceiling. A zero
// field in ceiling sets no ceiling; a zero field in l is the default before
// it is compared.
func (l Limits) capTo(ceiling Limits) Limits {
	d := l.withDefaults()
	if ceiling.MemoryPages != 0 && d.MemoryPages > ceiling.MemoryPages {
		l.MemoryPages = ceiling.MemoryPages
	}
	if ceiling.Timeout != 0 && d.Timeout > ceiling.Timeout {
		l.Timeout = ceiling.Timeout
	}
	if ceiling.InputBytes != 0 && d.InputBytes > ceiling.InputBytes {
		l.InputBytes = ceiling.InputBytes
	}
	if ceiling.OutputBytes != 0 && d.OutputBytes > ceiling.OutputBytes {
		l.OutputBytes = ceiling.OutputBytes
	}
	return l
}
