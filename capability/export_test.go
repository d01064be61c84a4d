package capability

// Test hooks: reach unexported parts of the package from its external tests.

// FindPolicyIn is FindPolicy with the system path given.
var FindPolicyIn = findPolicy

// Ceiling returns the policy's ceiling list for n, if it sets one.
func Ceiling(p *Policy, n Name) ([]string, bool) {
	if p == nil {
		return nil, false
	}
	l, ok := p.ceilings[n]
	return l, ok
}
