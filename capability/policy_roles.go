package capability

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// rolesSection is [roles]: which people signed in with OIDC hold which role
// of packs serve (docs/identity.md). Each list holds values of the token's
// claim (claim, "roles" when absent), or "sub:SUBJECT" for one person.
type rolesSection struct {
	Claim   string   `toml:"claim,omitempty"`
	Admin   []string `toml:"admin,omitempty"`
	Member  []string `toml:"member,omitempty"`
	Auditor []string `toml:"auditor,omitempty"`
	Default string   `toml:"default,omitempty"` // the role of a signed-in person no list names; absent: none
}

// The roles a person can hold in packs serve.
const (
	RoleAdmin   = "admin"   // installs, grants, reads the policy, sees every chat
	RoleMember  = "member"  // their own chats, approves their own calls, runs tools by hand
	RoleAuditor = "auditor" // reads and exports the audit log, nothing else
)

// RoleNames are the roles, in the order they are listed.
var RoleNames = []string{RoleAdmin, RoleMember, RoleAuditor}

// RoleMap is [roles] parsed: plain data that internal/identity reads. The
// zero RoleMap (no [roles]) maps the claim "roles" and has no default.
type RoleMap struct {
	// Claim is the token claim whose values the lists name.
	Claim string
	// Lists maps each role to the claim values (or "sub:SUBJECT") that
	// confer it; a role without a list is conferred by the claim holding
	// the role's own name.
	Lists map[string][]string
	// Default is the role of a signed-in person no list names; empty: none,
	// and such a person is refused.
	Default string
}

func (p *Policy) parseRoles(r *rolesSection, fail failFunc) error {
	if r.Claim == "" && r.Admin == nil && r.Member == nil && r.Auditor == nil && r.Default == "" {
		return nil
	}
	m := RoleMap{Claim: r.Claim, Lists: map[string][]string{}}
	if m.Claim == "" {
		m.Claim = "roles"
	} else if strings.TrimSpace(m.Claim) != m.Claim || strings.ContainsAny(m.Claim, " \t") {
		return fail("roles.claim", "claim %q is not a claim name: write the token claim that holds the groups or roles, such as \"groups\"", r.Claim)
	}
	lists := map[string][]string{RoleAdmin: r.Admin, RoleMember: r.Member, RoleAuditor: r.Auditor}
	for _, role := range RoleNames {
		list := lists[role]
		for i, v := range list {
			if strings.TrimSpace(v) == "" || v == "sub:" {
				return fail(fmt.Sprintf("roles.%s[%d]", role, i), "an empty entry names nobody: write a value of the %q claim, or \"sub:SUBJECT\"", m.Claim)
			}
		}
		if list != nil {
			m.Lists[role] = slices.Clone(list)
		}
	}
	if r.Default != "" && !slices.Contains(RoleNames, r.Default) {
		return fail("roles.default", "role %q is not known: write one of %s, or remove default so that a person no list names is refused", r.Default, strings.Join(RoleNames, ", "))
	}
	m.Default = r.Default
	p.roles, p.rolesRaw = m, *r
	return nil
}

// Roles returns [roles]; a nil policy, or one without it, returns the
// zero mapping with Claim "roles".
func (p *Policy) Roles() RoleMap {
	if p == nil || p.roles.Claim == "" {
		return RoleMap{Claim: "roles", Lists: map[string][]string{}}
	}
	m := p.roles
	m.Lists = maps.Clone(m.Lists)
	for k, v := range m.Lists {
		m.Lists[k] = slices.Clone(v)
	}
	return m
}
