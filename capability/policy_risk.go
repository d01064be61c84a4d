package capability

import (
	"slices"
	"strings"
)

// RiskLevel is how much a call can break, as a recipe step declares it
// (spec 001's risk_level): shown to the approver, and read by the policy's
// [approval] never_auto_approve_risk. The empty RiskLevel is a call that
// declares none.
type RiskLevel string

// The risk levels, lowest first.
const (
	RiskLow      RiskLevel = "low"
	RiskModerate RiskLevel = "moderate"
	RiskHigh     RiskLevel = "high"
	RiskCritical RiskLevel = "critical"
)

// RiskLevels lists the risk levels, lowest first.
func RiskLevels() []RiskLevel { return []RiskLevel{RiskLow, RiskModerate, RiskHigh, RiskCritical} }

// Valid reports whether r is one of RiskLevels.
func (r RiskLevel) Valid() bool { return slices.Contains(RiskLevels(), r) }

// rank orders the levels; 0 for none (or an unknown level, which the
// parsers refuse before a call is made).
func (r RiskLevel) rank() int { return slices.Index(RiskLevels(), r) + 1 }

func riskList() string {
	var s []string
	for _, r := range RiskLevels() {
		s = append(s, string(r))
	}
	return strings.Join(s, ", ")
}

// parseRisk reads [approval] never_auto_approve_risk.
func (p *Policy) parseRisk(s string, fail failFunc) error {
	if s == "" {
		return nil
	}
	r := RiskLevel(s)
	if !r.Valid() {
		return fail("approval.never_auto_approve_risk", "never_auto_approve_risk = %q is not a risk level: write one of %s (that level and every level above it then always asks a person)", s, riskList())
	}
	p.personRisk = r
	return nil
}

// PersonRequired reports whether the policy wants a person to decide every
// call at risk r: r is at or above [approval] never_auto_approve_risk.
// Such a call is not run by auto_approve, by an "allow for this chat" or
// by a yes given to a whole recipe run; never_approve still refuses it.
func (p *Policy) PersonRequired(r RiskLevel) bool {
	return p != nil && p.personRisk != "" && r.rank() >= p.personRisk.rank()
}
