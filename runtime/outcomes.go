package runtime

import (
	"context"
	"errors"
	"slices"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// The error kinds the chat gives the model for a failed call (its
// tool-result "kind"), for the outcomes of the pipeline. The chat adds its
// own kinds for what it refuses before the pipeline (an unknown tool,
// arguments that do not decode, a pack not attached).
const (
	KindArguments  = "invalid_arguments"
	KindPath       = "path_denied"
	KindDenied     = "denied"
	KindTimeout    = "timeout"
	KindLimit      = "limit"
	KindToolFailed = "tool_failed"
	KindStopped    = "stopped"
	KindToolsJSON  = "invalid_tools_json"
	KindInternal   = "error"
)

// Exit statuses of packs run (DESIGN.md, "Fixed CLI contract"): 0 ok, 1 a
// tool error (or any other failure), 3 denied by capability or policy, 4
// invalid input, 5 a time or memory limit.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitDenied  = 3
	ExitInvalid = 4
	ExitLimit   = 5
)

// Ending is one way a call can end, and what each front end calls it: the
// audit log's status (StatusOf), the chat's error kind for the model, and
// the exit status of packs run. The table of them, endings, is the one
// place that maps a call's error to all three.
type Ending struct {
	Name     string // the row, in plain words
	Status   capability.Status
	Kind     string // "" for ok: the chat reports no error
	ExitCode int
	errs     []error // an error that wraps any of them ends this way
}

// endings is read in order: an error takes the first row one of whose
// sentinels it wraps, and one that wraps none is an internal error. The
// rows the CLI contract names come first, so no other sentinel an error
// also wraps can change its exit status.
var endings = []Ending{
	{Name: "ok", Status: capability.StatusOK, ExitCode: ExitOK},
	// A capability.DeniedError wraps ErrDenied with its cause (not granted,
	// revoked, blocked, beyond the policy's ceiling, rejected by the
	// approver, not approved): one row, whatever the cause.
	{Name: "denied", Status: capability.StatusDenied, Kind: KindDenied, ExitCode: ExitDenied, errs: []error{capability.ErrDenied}},
	{Name: "modified pack", Status: capability.StatusDenied, Kind: KindDenied, ExitCode: ExitDenied, errs: []error{packs.ErrModified}},
	{Name: "invalid input", Status: capability.StatusInvalidInput, Kind: KindArguments, ExitCode: ExitInvalid, errs: []error{packs.ErrInvalidInput}},
	{Name: "input too large", Status: capability.StatusInvalidInput, Kind: KindLimit, ExitCode: ExitInvalid, errs: []error{ErrInputLimit}},
	{Name: "timeout", Status: capability.StatusLimit, Kind: KindTimeout, ExitCode: ExitLimit, errs: []error{ErrTimeout}},
	{Name: "memory limit", Status: capability.StatusLimit, Kind: KindLimit, ExitCode: ExitLimit, errs: []error{ErrMemoryLimit}},
	{Name: "output limit", Status: capability.StatusLimit, Kind: KindLimit, ExitCode: ExitLimit, errs: []error{ErrOutputLimit}},
	{Name: "tool failed", Status: capability.StatusToolError, Kind: KindToolFailed, ExitCode: ExitFailure, errs: []error{ErrToolFailed}},
	{Name: "guest trapped", Status: capability.StatusToolError, Kind: KindToolFailed, ExitCode: ExitFailure, errs: []error{ErrTrap}},
	{Name: "path escape", Status: capability.StatusError, Kind: KindPath, ExitCode: ExitFailure, errs: []error{packs.ErrPathEscape}},
	{Name: "invalid pack", Status: capability.StatusError, Kind: KindToolsJSON, ExitCode: ExitFailure, errs: []error{packs.ErrInvalidPack}},
	{Name: "deadline", Status: capability.StatusError, Kind: KindTimeout, ExitCode: ExitFailure, errs: []error{context.DeadlineExceeded}},
	{Name: "stopped", Status: capability.StatusError, Kind: KindStopped, ExitCode: ExitFailure, errs: []error{context.Canceled}},
}

// internalEnding is how a call ends on an error no row names.
var internalEnding = Ending{Name: "internal error", Status: capability.StatusError, Kind: KindInternal, ExitCode: ExitFailure}

// EndingOf is how a call that ended with err (nil for success) is named,
// by every front end.
func EndingOf(err error) Ending {
	if err == nil {
		return endings[0]
	}
	for _, e := range endings[1:] {
		for _, s := range e.errs {
			if errors.Is(err, s) {
				return e
			}
		}
	}
	return internalEnding
}

// Endings lists the table's rows, in order, then the internal error's: for
// the tests that pin them against the CLI contract and the chat's kinds.
func Endings() []Ending {
	return append(slices.Clone(endings), internalEnding)
}

// Sentinels are the errors that end a call this way: one that wraps any of
// them (and none of an earlier row's) does. Ok and the internal error have
// none.
func (e Ending) Sentinels() []error { return slices.Clone(e.errs) }

// StatusOf is how a call that ended with err is named by the audit log:
// EndingOf(err).Status.
func StatusOf(err error) capability.Status { return EndingOf(err).Status }
