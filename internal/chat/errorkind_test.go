package chat

import (
	"fmt"
	"testing"

	"github.com/packs-run/packs/runtime"
)

// TestErrorKindReadsTheEndings: the model gets the kind the runtime's table
// names for each ending of the pipeline (the chat's own refusals shadow
// none of them), and a hint for every kind but an internal error.
func TestErrorKindReadsTheEndings(t *testing.T) {
	for _, e := range runtime.Endings() {
		if e.Kind == "" { // ok: no error to report
			continue
		}
		if _, ok := hints[e.Kind]; !ok && e.Kind != ErrKindInternal {
			t.Errorf("row %q: kind %q has no hint for the model", e.Name, e.Kind)
		}
		for _, s := range e.Sentinels() {
			if got := errorKind(fmt.Errorf("call: %w", s)); got != e.Kind {
				t.Errorf("an error wrapping %v: kind %q, want %q", s, got, e.Kind)
			}
		}
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{ErrUnknownTool, ErrKindUnknownTool},
		{ErrBadArguments, ErrKindArguments},
		{ErrToolBudget, ErrKindBudget},
		{ErrNotFound, ErrKindNotFound},
		{ErrNotAFile, ErrKindNotFound},
	} {
		if got := errorKind(fmt.Errorf("call: %w", tt.err)); got != tt.want {
			t.Errorf("errorKind(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
