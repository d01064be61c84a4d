package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// TestEndingOf checks the table against what the audit log's status, the
// chat's kind and packs run's exit status were before one table owned them
// (StatusOf, the chat's errorKind and packs run's exitCodeOf each had a
// switch), including errors that wrap two rows' sentinels, where the rows'
// order decides.
func TestEndingOf(t *testing.T) {
	w := func(errs ...error) error {
		format := "x"
		args := make([]any, len(errs))
		for i, e := range errs {
			format += ": %w"
			args[i] = e
		}
		return fmt.Errorf(format, args...)
	}
	tests := []struct {
		name   string
		err    error
		status capability.Status
		kind   string
		exit   int
	}{
		{"ok", nil, capability.StatusOK, "", 0},
		{"denied", w(capability.ErrDenied), capability.StatusDenied, KindDenied, 3},
		{"not approved", w(ErrNotApproved), capability.StatusDenied, KindDenied, 3},
		{"modified pack", w(packs.ErrModified), capability.StatusDenied, KindDenied, 3},
		{"invalid input", w(packs.ErrInvalidInput), capability.StatusInvalidInput, KindArguments, 4},
		{"input too large", w(ErrInputLimit), capability.StatusInvalidInput, KindLimit, 4},
		{"timeout", w(ErrTimeout), capability.StatusLimit, KindTimeout, 5},
		{"memory", w(ErrMemoryLimit), capability.StatusLimit, KindLimit, 5},
		{"output", w(ErrOutputLimit), capability.StatusLimit, KindLimit, 5},
		{"tool failed", &ToolError{Pack: "p", Tool: "t", ExitCode: 2}, capability.StatusToolError, KindToolFailed, 1},
		{"trap", w(ErrTrap), capability.StatusToolError, KindToolFailed, 1},
		{"path escape", w(packs.ErrPathEscape), capability.StatusError, KindPath, 1},
		{"invalid pack", w(packs.ErrInvalidPack), capability.StatusError, KindToolsJSON, 1},
		{"deadline", w(context.DeadlineExceeded), capability.StatusError, KindTimeout, 1},
		{"cancelled", w(context.Canceled), capability.StatusError, KindStopped, 1},
		{"timeout by deadline", w(ErrTimeout, context.DeadlineExceeded), capability.StatusLimit, KindTimeout, 5},
		{"internal", errors.New("disk full"), capability.StatusError, KindInternal, 1},
		// Two sentinels: the audit status and exit status keep what
		// StatusOf said, the contract's rows first.
		{"denied and invalid", w(capability.ErrDenied, packs.ErrInvalidInput), capability.StatusDenied, KindDenied, 3},
		{"cancelled tool", w(context.Canceled, ErrToolFailed), capability.StatusToolError, KindToolFailed, 1},
		{"path escape denied", w(packs.ErrPathEscape, capability.ErrDenied), capability.StatusDenied, KindDenied, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EndingOf(tt.err)
			if got.Status != tt.status || got.Kind != tt.kind || got.ExitCode != tt.exit {
				t.Errorf("EndingOf(%v) = %s/%q/%d, want %s/%q/%d", tt.err, got.Status, got.Kind, got.ExitCode, tt.status, tt.kind, tt.exit)
			}
			if st := StatusOf(tt.err); st != tt.status {
				t.Errorf("StatusOf(%v) = %s, want %s", tt.err, st, tt.status)
			}
		})
	}
}
