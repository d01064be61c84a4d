package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/packs-run/packs/capability"
)

// Auditor is the audit log a Session writes to: one record per tool call,
// whatever its outcome, and every capability exercise on the way
// (capability.Recorder). Records must be durable before the methods return.
type Auditor interface {
	capability.Recorder
	RecordCall(ctx context.Context, c CallRecord) error
}

// CallRecord is one tool call as the audit log keeps it (spec 000 §9.4).
type CallRecord struct {
	Invocation string
	Chat       string
	Pack       string // "" for a base tool called with an unknown pack
	Tool       string // as the model named it: "read_file", "json-tools__query"
	// Arguments are the model's arguments as it sent them. The audit log
	// redacts secrets before it stores them.
	Arguments json.RawMessage
	// Approver and Verdict say who let the call run; both are empty for a
	// call that was refused before or at the gate.
	Approver   string
	Verdict    capability.Verdict
	Remembered bool // approved by the chat's "allow for this chat"
	// Refused says why the call did not run: the gate's denial, bad
	// arguments, an unknown tool. Empty when it ran.
	Refused   string
	Start     time.Time
	Duration  time.Duration
	ExitCode  int    // the tool's exit status; 0 for base tools that succeeded
	Error     string // the failure, when the call ran and failed
	Output    []byte // what the model was sent back
	Artifacts []Artifact
}
