// Package capability holds what a pack asks for (Request), what it may exercise
// (Grant), the verdicts on each exercise (Decision), the approval of a call
// (Approval) and the audit record types. Grants, decisions and approvals are
// sealed: their fields are unexported and their zero values allow nothing, so
// no other package can forge a permission.
package capability

import (
	"errors"
	"fmt"
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
)

// All lists every capability in a stable order.
var All = []Name{TerminalExec, FilesystemRead, FilesystemWrite, Network, EnvRead, SecretsAccess}

// ParseName returns the Name for s, or an error naming the valid choices.
func ParseName(s string) (Name, error) {
	for _, n := range All {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("capability: unknown capability %q (want one of terminal_exec, filesystem_read, filesystem_write, network, env_read, secrets_access)", s)
}

// ErrDenied is the sentinel every denial wraps. Check it with errors.Is.
var ErrDenied = errors.New("capability: denied")

// Layer says which layer of the deny-dominant stack produced a decision.
type Layer string

const (
	LayerPolicy  Layer = "policy"  // the enterprise policy file
	LayerUser    Layer = "user"    // the person's grants
	LayerRequest Layer = "request" // the pack never asked for it
	LayerGate    Layer = "gate"    // the approver of one call
)

// DeniedError is the typed form of a denial. It wraps ErrDenied.
type DeniedError struct {
	Capability Name
	Resource   string
	Layer      Layer
	Reason     string
}

func (e *DeniedError) Error() string {
	if e.Resource == "" {
		return fmt.Sprintf("capability: %s denied by %s: %s", e.Capability, e.Layer, e.Reason)
	}
	return fmt.Sprintf("capability: %s %q denied by %s: %s", e.Capability, e.Resource, e.Layer, e.Reason)
}

func (e *DeniedError) Unwrap() error { return ErrDenied }

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

// min returns the tighter of two limits, field by field (zero = default).
func (l Limits) min(o Limits) Limits {
	l, o = l.withDefaults(), o.withDefaults()
	if o.MemoryPages < l.MemoryPages {
		l.MemoryPages = o.MemoryPages
	}
	if o.Timeout < l.Timeout {
		l.Timeout = o.Timeout
	}
	if o.InputBytes < l.InputBytes {
		l.InputBytes = o.InputBytes
	}
	if o.OutputBytes < l.OutputBytes {
		l.OutputBytes = o.OutputBytes
	}
	return l
}
