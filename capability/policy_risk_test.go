package capability_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestPolicyRisk: never_auto_approve_risk keeps auto_approve from running a
// call at that risk or above (the policy defers it to a person), leaves the
// calls below it and those without a risk to auto_approve, and never
// weakens never_approve.
func TestPolicyRisk(t *testing.T) {
	const doc = "[approval]\nauto_approve = [\"git-flow__*\"]\nnever_approve = [\"danger__*\"]\nnever_auto_approve_risk = \"high\"\n"
	p := mustPolicy(t, doc)
	tests := []struct {
		class  string
		risk   capability.RiskLevel
		want   capability.Verdict
		defers bool
	}{
		{"git-flow__recipe_x", "", capability.RunOnce, false},
		{"git-flow__recipe_x", capability.RiskLow, capability.RunOnce, false},
		{"git-flow__recipe_x", capability.RiskModerate, capability.RunOnce, false},
		{"git-flow__recipe_x", capability.RiskHigh, capability.Deny, true},
		{"git-flow__recipe_x", capability.RiskCritical, capability.Deny, true},
		{"danger__recipe_x", capability.RiskLow, capability.Deny, false},
		{"danger__recipe_x", capability.RiskCritical, capability.Deny, false},
		{"other__tool", capability.RiskCritical, capability.Deny, true},
	}
	for _, tt := range tests {
		t.Run(tt.class+"/"+string(tt.risk), func(t *testing.T) {
			pack, tool, _ := strings.Cut(tt.class, "__")
			got, err := p.Approver().Approve(context.Background(), capability.Pending{Invocation: "inv_1", Pack: pack, Tool: tool, RiskLevel: tt.risk})
			if got != tt.want || errors.Is(err, capability.ErrDefer) != tt.defers {
				t.Errorf("got %v, %v; want %v, defer %v", got, err, tt.want, tt.defers)
			}
		})
	}
	for _, r := range []capability.RiskLevel{"", capability.RiskLow, capability.RiskModerate, capability.RiskHigh, capability.RiskCritical} {
		if got, want := p.PersonRequired(r), r == capability.RiskHigh || r == capability.RiskCritical; got != want {
			t.Errorf("PersonRequired(%q) = %v, want %v", r, got, want)
		}
	}
	var none *capability.Policy
	if none.PersonRequired(capability.RiskCritical) || mustPolicy(t, "[approval]\n").PersonRequired(capability.RiskCritical) {
		t.Error("a policy without never_auto_approve_risk requires a person")
	}
	out, err := p.Format()
	if err != nil || !strings.Contains(out, "never_auto_approve_risk = 'high'") {
		t.Errorf("Format() = %q, %v", out, err)
	}
	q, err := capability.ParsePolicy("again.toml", []byte(out))
	if err != nil || !q.PersonRequired(capability.RiskHigh) || q.PersonRequired(capability.RiskModerate) {
		t.Errorf("the formatted policy does not keep the key: %v", err)
	}
}

// TestPolicyRiskErrors: a bad never_auto_approve_risk is an error at its
// line that names the levels.
func TestPolicyRiskErrors(t *testing.T) {
	for _, doc := range []string{
		"[approval]\n\nnever_auto_approve_risk = \"severe\"\n",
		"[approval]\n\nnever_auto_approve_risk = \"HIGH\"\n",
		"[approval]\n\nnever_auto_approve_risk = 3\n",
	} {
		_, err := capability.ParsePolicy("policy.toml", []byte(doc))
		var pe *capability.PolicyError
		if !errors.As(err, &pe) || pe.Line != 3 {
			t.Errorf("%q: error %v, want a *PolicyError at line 3", doc, err)
			continue
		}
		if !strings.Contains(doc, "3\n") && !strings.Contains(err.Error(), "low, moderate, high, critical") {
			t.Errorf("%q: the error does not name the levels: %v", doc, err)
		}
	}
}
