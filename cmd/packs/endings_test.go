package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/runtime"
)

// TestEndingsKeepTheCLIContract pins every row of the runtime's table of
// endings against packs run's exit statuses in DESIGN.md ("Fixed CLI
// contract"): 0 ok, 1 tool error, 3 denied by capability or policy, 4
// invalid input, 5 time or memory limit; anything else is a failure, 1.
func TestEndingsKeepTheCLIContract(t *testing.T) {
	contract := map[capability.Status]int{
		capability.StatusOK:           0,
		capability.StatusToolError:    1,
		capability.StatusDenied:       3,
		capability.StatusInvalidInput: 4,
		capability.StatusLimit:        5,
		capability.StatusError:        1,
	}
	// The rows the contract names in words, by the table's names.
	named := map[string]int{"ok": 0, "tool failed": 1, "denied": 3, "invalid input": 4, "timeout": 5, "memory limit": 5}
	seen := map[string]bool{}
	for _, e := range runtime.Endings() {
		want, ok := contract[e.Status]
		if !ok {
			t.Errorf("row %q: status %q is not one the contract knows", e.Name, e.Status)
			continue
		}
		if e.ExitCode != want {
			t.Errorf("row %q (status %s): exit %d, want %d", e.Name, e.Status, e.ExitCode, want)
		}
		if w, ok := named[e.Name]; ok {
			seen[e.Name] = true
			if e.ExitCode != w {
				t.Errorf("row %q: exit %d, the contract says %d", e.Name, e.ExitCode, w)
			}
		}
		// Each row is reached by its own errors, wrapped as the pipeline
		// wraps them: no earlier row shadows it.
		for _, s := range e.Sentinels() {
			if got := runtime.EndingOf(fmt.Errorf("run: x__t: %w", s)); got.Name != e.Name {
				t.Errorf("an error wrapping %v ends as %q, want %q", s, got.Name, e.Name)
			}
		}
	}
	for name := range named {
		if !seen[name] {
			t.Errorf("no row %q in the table", name)
		}
	}
	if got := runtime.EndingOf(nil).ExitCode; got != exitOK {
		t.Errorf("success: exit %d, want %d", got, exitOK)
	}
	if got := runtime.EndingOf(errors.New("disk on fire")).ExitCode; got != exitFailure {
		t.Errorf("an error no row names: exit %d, want %d", got, exitFailure)
	}
}
