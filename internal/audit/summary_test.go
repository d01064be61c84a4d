package audit

import (
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestCallSummaryBlamesTheRightParty: the text line of a call says who
// decided what: a gate refusal names the approver who said no, a call the
// person approved and a capability then refused says both, and an exit
// status appears only for a tool that ran.
func TestCallSummaryBlamesTheRightParty(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    invocationBody
		want []string
		not  []string
	}{
		{"approved, then a capability denied", invocationBody{Decision: "run_once", Approver: "web:by-hand", Status: StatusDenied, Reason: "capability: network denied"},
			[]string{"approved by web:by-hand (run_once), then denied", "capability: network denied"}, []string{"denied by web:by-hand", "exit"}},
		{"the person said no", invocationBody{Decision: capability.Deny.String(), Approver: "terminal", Status: StatusDenied, Reason: "denied by terminal"},
			[]string{"denied by terminal at the gate"}, []string{"approved", "exit"}},
		{"nobody could approve", invocationBody{Decision: capability.Deny.String(), Status: StatusDenied},
			[]string{"refused before anyone approved it"}, []string{"approved by"}},
		{"the tool failed", invocationBody{Decision: "run_once", Approver: "cli --yes", Status: StatusToolError, ExitCode: 3},
			[]string{"approved by cli --yes (run_once), tool_error, the tool exited 3"}, nil},
		{"ok", invocationBody{Decision: "allow_chat", Approver: "terminal", Status: StatusOK, Remembered: true},
			[]string{"approved by terminal (allow_chat), allowed for this chat earlier, ok"}, []string{"exit"}},
	} {
		got := callSummary(tt.b)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q says %q", tt.name, got, n)
			}
		}
	}
}
