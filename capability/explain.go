package capability

import (
	"slices"
	"strings"
)

// Report explains what one pack gets and why, capability by capability: the
// view behind `packs capabilities` and `packs policy check`. It is built by
// the same code as Resolve, so what it shows is what a call gets.
type Report struct {
	Pack         PackRef
	Blocked      error // non-nil (wrapping ErrBlocked) when the policy blocks the pack
	Mandated     bool  // the policy attaches the pack to every chat
	Capabilities []CapabilityReport
	Limits       Limits // effective limits, defaults filled in
}

// CapabilityReport is one requested capability across the layers.
type CapabilityReport struct {
	Capability Name
	Requested  []string     // as the pack wrote them
	Policy     LayerVerdict // what the enterprise policy allows of the request
	User       LayerVerdict // what the person (or a pre-approval) granted
	Effective  []string     // what a call holds; filesystem paths expanded
	Scope      Scope        // how long the person's grant lasts, when held
	Err        error        // nil when held, else a *DeniedError
}

// LayerVerdict is one layer's answer about one capability.
type LayerVerdict struct {
	Allowed   bool
	Resources []string // what the layer allows of the request
	Reason    string
}

// Held reports whether a call holds the capability.
func (c CapabilityReport) Held() bool { return c.Err == nil }

// Holds says what a call holds of the capability, for every message that
// says what was granted (packs grant, packs add, packs capabilities): its
// effective resources ("docs.rs, crates.io", "*"), "everything requested"
// for a held capability without resources, or "nothing".
func (c CapabilityReport) Holds() string {
	switch {
	case !c.Held():
		return "nothing"
	case len(c.Effective) == 0:
		return "everything requested"
	}
	return strings.Join(c.Effective, ", ")
}

// Of returns the report of capability n; ok is false when the pack does not
// ask for it.
func (r Report) Of(n Name) (c CapabilityReport, ok bool) {
	i := slices.IndexFunc(r.Capabilities, func(c CapabilityReport) bool { return c.Capability == n })
	if i < 0 {
		return CapabilityReport{}, false
	}
	return r.Capabilities[i], true
}

// Explain resolves ref the way Resolve does and reports every layer's answer.
// It fails only when req itself is malformed.
func Explain(ref PackRef, req Request, user []UserGrant, pol *Policy, env Env) (Report, error) {
	rep := Report{Pack: ref, Blocked: pol.Blocked(ref), Mandated: slices.Contains(pol.Mandated(), ref.Name)}
	r, err := resolve(ref, req, user, pol, env)
	if err != nil {
		return Report{}, err
	}
	rep.Limits = r.limits.withDefaults()
	for i := range r.caps {
		cr := &r.caps[i]
		c := CapabilityReport{
			Capability: cr.name,
			Requested:  slices.Clone(cr.requested),
			Policy:     LayerVerdict{Allowed: cr.policy.allowed, Resources: raws(cr.policy.resources), Reason: cr.policy.text(cr.name)},
			User:       LayerVerdict{Allowed: cr.user.allowed, Resources: raws(cr.user.resources), Reason: cr.user.text(cr.name)},
			Effective:  raws(cr.effective),
			Scope:      cr.scope,
		}
		switch {
		case rep.Blocked != nil:
			c.Effective, c.Scope = nil, ""
			c.Err = rep.Blocked
		case cr.deniedBy == LayerRequest:
			c.Policy.Reason, c.User.Reason = cr.denial.text(cr.name), ""
			c.Err = cr.denied("").Err()
		case cr.deniedBy != "":
			c.Scope = ""
			c.Err = cr.denied("").Err()
		}
		rep.Capabilities = append(rep.Capabilities, c)
	}
	return rep, nil
}
