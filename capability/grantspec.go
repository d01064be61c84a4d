package capability

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SpecError is a grant spec that does not parse, or that asks for more than
// the pack requested.
type SpecError struct {
	Spec   string
	Reason string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("capability: grant %q: %s", e.Spec, e.Reason)
}

// specReason is the reason of a *SpecError, without the package prefix.
func specReason(err error) string {
	var se *SpecError
	if errors.As(err, &se) {
		return fmt.Sprintf("grant %q: %s", se.Spec, se.Reason)
	}
	return err.Error()
}

// ErrBadSpec is wrapped by every *SpecError.
var ErrBadSpec = errors.New("capability: bad grant spec")

func (e *SpecError) Unwrap() error { return ErrBadSpec }

// ParseGrantSpec parses one grant as a person writes it on the command line
// or a policy writes it in [[preapprove]]:
//
//	network                          everything requested, with scope def
//	network=chat                     everything requested, for this chat only
//	network=api.example.com,*.x.org  only these resources (narrower than or
//	                                 equal to the request), with scope def
//
// A value that is exactly once, chat or persistent is a scope; anything else
// is a comma-separated resource list.
func ParseGrantSpec(s string, def Scope) (UserGrant, error) {
	name, value, hasValue := strings.Cut(s, "=")
	n, err := ParseName(strings.TrimSpace(name))
	if err != nil {
		return UserGrant{}, &SpecError{Spec: s, Reason: "unknown capability (want one of " + nameList() + ")"}
	}
	u := UserGrant{Capability: n, Scope: def}
	if !hasValue {
		return u, nil
	}
	value = strings.TrimSpace(value)
	if sc, err := ParseScope(value); err == nil {
		u.Scope = sc
		return u, nil
	}
	for _, r := range strings.Split(value, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			return UserGrant{}, &SpecError{Spec: s, Reason: "empty resource: write CAP=RES[,RES...]"}
		}
		if err := checkResource(n, r); err != nil {
			return UserGrant{}, &SpecError{Spec: s, Reason: fmt.Sprintf("%q is not a valid %s resource: %v", r, n, err)}
		}
		u.Resources = appendUnique(u.Resources, r)
	}
	return u, nil
}

// String writes the grant back in ParseGrantSpec's syntax, without scope.
func (u UserGrant) String() string {
	if u.Resources == nil {
		return string(u.Capability)
	}
	return string(u.Capability) + "=" + strings.Join(u.Resources, ",")
}

// ParseGrantList parses the --grant value of `packs add`: "all" (everything
// the pack asks for), "none", or a comma-separated list of grant specs, as in
// "network=api.example.com,docs.example.com,env_read". A piece that starts
// with a capability name begins a new spec; other pieces add resources to the
// spec before them. Each grant is checked against req.
func ParseGrantList(s string, req Request, scope Scope) ([]UserGrant, error) {
	switch strings.TrimSpace(s) {
	case "none", "":
		return []UserGrant{}, nil
	case "all":
		out := []UserGrant{}
		for _, n := range req.Names() {
			out = append(out, UserGrant{Capability: n, Scope: scope})
		}
		return out, nil
	}
	var specs []string
	for _, piece := range strings.Split(s, ",") {
		name, _, _ := strings.Cut(piece, "=")
		if _, err := ParseName(strings.TrimSpace(name)); err == nil || len(specs) == 0 {
			specs = append(specs, piece)
			continue
		}
		specs[len(specs)-1] += "," + piece
	}
	var out []UserGrant
	for _, spec := range specs {
		u, err := ParseGrantSpec(spec, scope)
		if err != nil {
			return nil, err
		}
		if err := CheckGrant(req, u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// CheckGrant reports a *SpecError when u asks for a capability req does not
// request, or for a resource wider than every requested one: a grant never
// widens a request. Filesystem rules must name a requested rule, or lie
// inside a requested directory.
func CheckGrant(req Request, u UserGrant) error {
	if !req.Has(u.Capability) {
		return &SpecError{Spec: u.String(), Reason: "the pack does not ask for " + string(u.Capability) + "; a grant cannot widen a request"}
	}
	requested := req.Resources(u.Capability)
	for _, r := range u.Resources {
		ok := slices.ContainsFunc(requested, func(q string) bool {
			if u.Capability == FilesystemRead || u.Capability == FilesystemWrite {
				return r == q || ruleInside(r, q)
			}
			ri, ok1 := parseItem(u.Capability, r)
			qi, ok2 := parseItem(u.Capability, q)
			return ok1 && ok2 && within(u.Capability, ri, qi)
		})
		if !ok {
			return &SpecError{Spec: u.String(), Reason: fmt.Sprintf("%q is not within what the pack asks for (%s)", r, strings.Join(requested, ", "))}
		}
	}
	return nil
}

// ruleInside reports whether path rule r names a place inside rule q, both
// written with the same prefix ("~/", "$VAR/", "./" or "/"), q without globs.
// Rules hold no "..", so a textual prefix is a real one.
func ruleInside(r, q string) bool {
	if strings.ContainsAny(q, "*?[") {
		return false
	}
	return strings.HasPrefix(r, strings.TrimSuffix(q, "/")+"/")
}

// ValidateGrant reports a *SpecError when u names no capability, has no
// valid scope, or lists a malformed resource. Stores call it before they
// write a grant.
func ValidateGrant(u UserGrant) error {
	if nameIndex(u.Capability) < 0 {
		return &SpecError{Spec: u.String(), Reason: "unknown capability (want one of " + nameList() + ")"}
	}
	if _, err := ParseScope(string(u.Scope)); err != nil {
		return &SpecError{Spec: u.String(), Reason: fmt.Sprintf("unknown scope %q (want once, chat or persistent)", u.Scope)}
	}
	for _, r := range u.Resources {
		if err := checkResource(u.Capability, r); err != nil {
			return &SpecError{Spec: u.String(), Reason: fmt.Sprintf("%q is not a valid %s resource: %v", r, u.Capability, err)}
		}
	}
	return nil
}
