package capability

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// PackRef names a pack and the digest of its installed content.
type PackRef struct {
	Name   string
	Digest string // "sha256:..." from the lock entry; empty for an uninstalled folder
	// Signer is the SSH public key ("TYPE BASE64") whose signature over the
	// pack's archive was checked at install; empty for an unsigned pack.
	Signer string
	// InPlace is the folder of a pack used in place: discovered in one of
	// the folders people keep skills in, not installed. Its Digest is the
	// folder's content when it was attached, and its grants are the ones
	// the person made for that folder at that content (never those of an
	// installed pack of the same name). Empty for an installed pack.
	InPlace string
}

// UserGrant is what a person said yes to for one capability of one pack.
// Resources narrows the grant to a subset of what was requested; nil means
// everything the pack asked for under that capability. A resource may be
// narrower than what the pack asked ("api.example.com" out of
// "*.example.com"); it never widens the request.
type UserGrant struct {
	Capability Name
	Resources  []string
	Scope      Scope
	Revoked    bool // the person withdrew this grant; a denial says so
}

// Env is what expanding a grant's paths needs from the host.
type Env struct {
	Home      string
	Getenv    func(string) string
	Workspace string
}

// Resolve builds the effective grant for one call: the pack's request, cut
// down by the enterprise policy (which always wins) and by what the person
// granted. A capability absent from any layer is simply not held, and the
// grant remembers which layer said no so a denial can explain itself. A pack
// the policy blocks gets an error wrapping ErrDenied and ErrBlocked.
func Resolve(ref PackRef, req Request, user []UserGrant, pol *Policy, env Env) (Grant, error) {
	if err := pol.Blocked(ref); err != nil {
		return Grant{}, err
	}
	r, err := resolve(ref, req, user, pol, env)
	if err != nil {
		return Grant{}, err
	}
	g := &grant{pack: ref.Name, limits: r.limits, scope: ScopePersistent}
	if pol != nil {
		g.confine = pol.confinement
	}
	g.c.blocked = r.blocked
	for i := range r.caps {
		cr := &r.caps[i]
		idx := nameIndex(cr.name)
		g.caps[idx] = cr
		if cr.deniedBy != "" {
			continue
		}
		g.held[idx] = true
		if g.scope.wider(cr.scope) {
			g.scope = cr.scope
		}
		for _, it := range cr.effective {
			switch cr.name {
			case FilesystemRead, FilesystemWrite:
				m := *it.mount
				m.Writable = cr.name == FilesystemWrite
				g.mounts = append(g.mounts, m)
			case Network:
				g.c.hosts = append(g.c.hosts, *it.host)
			case EnvRead:
				g.c.env = append(g.c.env, *it.env)
			case TerminalExec:
				g.c.commands = append(g.c.commands, it.raw)
			case SecretsAccess:
				g.c.secrets = append(g.c.secrets, it.raw)
			}
		}
	}
	g.inject = r.inject
	g.seal()
	return Grant{g: g}, nil
}

// item is one resource, parsed once for the capability it belongs to: a
// host pattern, a variable pattern, a mount (filesystem rules are expanded
// before they become items), or a command or secret name (raw).
type item struct {
	raw   string
	host  *HostPattern
	env   *EnvPattern
	mount *Mount
}

// parseItem parses s as a resource of n, in decision space (a filesystem
// resource is an already expanded mount path).
func parseItem(n Name, s string) (item, bool) {
	it := item{raw: s}
	var err error
	switch n {
	case Network:
		var h HostPattern
		h, err = ParseHostPattern(s)
		it.host = &h
	case EnvRead:
		var e EnvPattern
		e, err = ParseEnvPattern(s)
		it.env = &e
	case TerminalExec:
		err = checkCommand(s)
	case SecretsAccess:
		err = checkSecretResource(s)
	case FilesystemRead, FilesystemWrite:
		m := splitMount(s, false)
		it.mount = &m
	}
	return it, err == nil
}

func raws(items []item) []string {
	if items == nil {
		return nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.raw
	}
	return out
}

// resolution is the layered answer for one pack, before it is sealed into a
// Grant or shown by Explain.
type resolution struct {
	caps    []capResolution // one per requested capability, in the order of All
	blocked []string        // the pack's own blocked commands
	inject  []SecretInjection
	limits  Limits
}

// capResolution is the answer for one capability. Item lists are in the
// "space" decisions are made in: patterns, commands and secret names as
// written, filesystem rules expanded to absolute mounts.
type capResolution struct {
	name      Name
	requested []string // as the pack wrote them; shared with the Request, never modified
	space     []item   // requested, in decision space
	policy    layerVerdict
	user      layerVerdict
	effective []item
	scope     Scope
	deniedBy  Layer        // "" when the capability is held
	denial    layerVerdict // the verdict that denied it
}

// denied returns the capability-level denial, with resource filled in.
func (cr *capResolution) denied(resource string) Decision {
	return deny(cr.name, resource, cr.deniedBy, cr.denial.cause, cr.denial.text(cr.name))
}

// why is the kind of a layer's answer; its text is written only when a
// denial or a report needs it, so resolving stays cheap.
type why int

const (
	whyNoPolicy     why = iota // no policy at all
	whyNoCeiling               // the policy sets no ceiling for the capability
	whyNever                   // the policy never grants it
	whyBeyond                  // nothing requested is within the ceiling
	whyWithin                  // everything requested is within the ceiling
	whyCut                     // part of the request is cut to the ceiling
	whyRevoked                 // the person revoked it
	whyNotGranted              // the person never granted it
	whyGrantedAll              // the person granted everything requested
	whyGrantedSome             // the person granted part of the request
	whyGrantedNone             // the person's grant covers nothing requested
	whyUserBeyond              // what the person granted lies beyond the ceiling
	whyUnexpandable            // no requested path can be expanded here
)

// layerVerdict is what one layer allows of a capability's request.
type layerVerdict struct {
	allowed   bool
	ceiling   []item   // nil: the layer does not narrow
	resources []item   // what it allows of the request
	dropped   []string // what it cut
	why       why
	cause     error
}

func (v layerVerdict) text(n Name) string {
	switch v.why {
	case whyNoPolicy:
		return "no policy"
	case whyNoCeiling:
		return "no ceiling"
	case whyNever:
		return "the policy never grants " + string(n)
	case whyBeyond:
		return string(n) + " never beyond " + describeList(raws(v.ceiling)) + " by policy"
	case whyWithin:
		return "within the ceiling " + describeList(raws(v.ceiling))
	case whyCut:
		if len(v.dropped) == 0 {
			return "narrowed to the ceiling " + describeList(raws(v.ceiling))
		}
		return "cut to the ceiling " + describeList(raws(v.ceiling)) + "; dropped " + strings.Join(v.dropped, ", ")
	case whyRevoked:
		return "the person revoked " + string(n)
	case whyNotGranted:
		return "the person has not granted " + string(n)
	case whyGrantedAll:
		return "granted"
	case whyGrantedSome:
		return "granted " + strings.Join(raws(v.resources), ", ")
	case whyGrantedNone:
		return "the person granted none of the requested " + string(n) + " resources"
	case whyUserBeyond:
		return "what the person granted of " + string(n) + " lies beyond the policy's ceiling"
	case whyUnexpandable:
		return "none of the requested " + string(n) + " paths can be expanded here: " + strings.Join(v.dropped, ", ")
	}
	return ""
}

func resolve(ref PackRef, req Request, user []UserGrant, pol *Policy, env Env) (*resolution, error) {
	var c compiled
	if req.c != nil {
		c = *req.c
	} else {
		var err error
		if c, err = req.compile(); err != nil {
			return nil, err
		}
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	names := req.Names()
	r := &resolution{limits: req.Limits, blocked: c.blocked, inject: c.inject, caps: make([]capResolution, 0, len(names))}
	if pol != nil {
		r.limits = req.Limits.capTo(pol.limits)
	}
	pre := pol.preApproved(ref)
	for _, n := range names {
		r.caps = append(r.caps, capResolution{name: n, requested: req.resources(n)})
		cr := &r.caps[len(r.caps)-1]
		var dropped []string
		cr.space, dropped = toSpace(n, &c, env)
		if len(cr.space) == 0 {
			cr.deniedBy, cr.denial = LayerRequest, layerVerdict{why: whyUnexpandable, dropped: dropped}
			continue
		}
		cr.policy = pol.layer(n, cr.space, env)
		cr.user, cr.scope = userLayer(n, cr.space, user, pre, env)
		switch {
		case !cr.policy.allowed:
			cr.deniedBy, cr.denial = LayerPolicy, cr.policy
		case !cr.user.allowed:
			cr.deniedBy, cr.denial = LayerUser, cr.user
		default:
			eff := cr.space
			if cr.user.ceiling != nil {
				eff, _ = narrow(n, eff, cr.user.ceiling)
			}
			if cr.policy.ceiling != nil {
				eff, _ = narrow(n, eff, cr.policy.ceiling)
			}
			if len(eff) == 0 {
				cr.deniedBy, cr.denial = LayerPolicy, layerVerdict{why: whyUserBeyond, cause: ErrPolicyCeiling}
				continue
			}
			cr.effective = eff
		}
	}
	return r, nil
}

// toSpace turns the compiled request for n into items: filesystem rules
// expand to absolute mounts, the rest are used as written. A rule that
// cannot be expanded here (no home, unset variable) is dropped.
func toSpace(n Name, c *compiled, env Env) (space []item, dropped []string) {
	switch n {
	case Network:
		space = make([]item, len(c.hosts))
		for i := range c.hosts {
			space[i] = item{raw: c.hosts[i].raw, host: &c.hosts[i]}
		}
	case EnvRead:
		space = make([]item, len(c.env))
		for i := range c.env {
			space[i] = item{raw: c.env[i].raw, env: &c.env[i]}
		}
	case TerminalExec:
		space = make([]item, len(c.commands))
		for i, s := range c.commands {
			space[i] = item{raw: s}
		}
	case SecretsAccess:
		space = make([]item, len(c.secrets))
		for i, s := range c.secrets {
			space[i] = item{raw: s}
		}
	case AskPerson:
		if c.ask {
			space = []item{{raw: AskResource}}
		}
	case FilesystemRead, FilesystemWrite:
		rules := c.read
		if n == FilesystemWrite {
			rules = c.write
		}
		space = make([]item, 0, len(rules))
		for _, pr := range rules {
			it, ok := expandItem(pr, env)
			if !ok {
				dropped = append(dropped, pr.raw)
				continue
			}
			space = appendItem(space, it)
		}
	}
	return space, dropped
}

// expandItem expands one path rule to a mount item.
func expandItem(pr PathRule, env Env) (item, bool) {
	root, glob, err := pr.Expand(env.Getenv, env.Home, env.Workspace)
	if err != nil {
		return item{}, false
	}
	m := &Mount{HostPath: root, Glob: glob}
	return item{raw: m.String(), mount: m}, true
}

// userLayer merges the person's grants for n with the policy's pre-approved
// ones. A revoked grant with no live grant beside it denies n, even when the
// policy pre-approves it: a person may always hold less than the policy allows.
func userLayer(n Name, space []item, user, pre []UserGrant, env Env) (layerVerdict, Scope) {
	live, revoked := false, false
	for i := range user {
		if user[i].Capability == n {
			revoked = revoked || user[i].Revoked
			live = live || !user[i].Revoked
		}
	}
	if !live && revoked {
		return layerVerdict{why: whyRevoked, cause: ErrRevoked}, ""
	}
	var scope Scope
	var ceiling []item
	all, found := false, false
	for _, list := range [2][]UserGrant{user, pre} {
		for i := range list {
			u := &list[i]
			if u.Capability != n || u.Revoked {
				continue
			}
			found = true
			if scope == "" || u.Scope.wider(scope) {
				scope = u.Scope
			}
			if u.Resources == nil {
				all = true
				continue
			}
			for _, s := range u.Resources {
				if it, ok := userItem(n, s, env); ok {
					ceiling = appendItem(ceiling, it)
				}
			}
		}
	}
	switch {
	case !found:
		return layerVerdict{why: whyNotGranted, cause: ErrNotGranted}, ""
	case scope == "":
		scope = ScopePersistent
	}
	if all && n == SecretsAccess {
		// A bare grant never reveals: it covers reveal:NAME as NAME, to
		// inject; a reveal is granted only by naming it.
		all = false
		for _, it := range space {
			name, _ := secretName(it.raw)
			ceiling = appendItem(ceiling, item{raw: name})
		}
	}
	if all {
		return layerVerdict{allowed: true, resources: space, why: whyGrantedAll}, scope
	}
	if ceiling == nil {
		ceiling = []item{}
	}
	kept, _ := narrow(n, space, ceiling)
	if len(kept) == 0 {
		return layerVerdict{ceiling: ceiling, why: whyGrantedNone, cause: ErrNotGranted}, scope
	}
	return layerVerdict{allowed: true, ceiling: ceiling, resources: kept, why: whyGrantedSome}, scope
}

// userItem parses one resource a person granted; filesystem rules are
// expanded like the request's.
func userItem(n Name, s string, env Env) (item, bool) {
	if n != FilesystemRead && n != FilesystemWrite {
		return parseItem(n, s)
	}
	pr, err := ParsePathRule(s)
	if err != nil {
		return item{}, false
	}
	return expandItem(pr, env)
}

// narrow returns the part of res that lies inside ceiling: a resource inside
// some ceiling entry is kept as it is; a resource wider than some ceiling
// entries is replaced by them (their intersection); the rest is dropped.
// Patterns that merely overlap are dropped: when in doubt, deny.
func narrow(n Name, res, ceiling []item) (kept []item, dropped []string) {
	if allWithin(n, res, ceiling) {
		return res, nil
	}
	kept = make([]item, 0, len(res))
	for _, r := range res {
		if slices.ContainsFunc(ceiling, func(c item) bool { return within(n, r, c) }) {
			kept = appendItem(kept, r)
			continue
		}
		replaced := false
		for _, c := range ceiling {
			if within(n, c, r) {
				kept = appendItem(kept, c)
				replaced = true
			}
		}
		if !replaced {
			dropped = append(dropped, r.raw)
		}
	}
	return kept, dropped
}

// allWithin reports whether every resource of res lies inside ceiling, the
// common case that needs no new list.
func allWithin(n Name, res, ceiling []item) bool {
	for _, r := range res {
		if !slices.ContainsFunc(ceiling, func(c item) bool { return within(n, r, c) }) {
			return false
		}
	}
	return true
}

// within reports whether every use resource r of capability n allows is also
// allowed by c.
func within(n Name, r, c item) bool {
	switch n {
	case Network:
		return r.host.Within(*c.host)
	case EnvRead:
		return r.env.Within(*c.env)
	case TerminalExec:
		// A bare ceiling "git" covers "/usr/bin/git"; an absolute one covers
		// only itself.
		return r.raw == c.raw || !filepath.IsAbs(c.raw) && filepath.Base(r.raw) == c.raw
	case AskPerson:
		return r.raw == c.raw
	case SecretsAccess:
		// A reveal grant covers injecting the same secret.
		return r.raw == c.raw || c.raw == RevealPrefix+r.raw
	case FilesystemRead, FilesystemWrite:
		if c.mount.Glob != "" {
			return *r.mount == *c.mount
		}
		_, ok := inside(c.mount.HostPath, r.mount.HostPath)
		return ok
	}
	return false
}

func appendItem(list []item, it item) []item {
	for _, x := range list {
		if x.raw == it.raw {
			return list
		}
	}
	return append(list, it)
}

// checkResource explains why s is not a well-formed resource of n, or
// returns nil.
func checkResource(n Name, s string) error {
	var r Request
	setResources(&r, n, []string{s})
	var pe *PatternError
	if err := r.Validate(); errors.As(err, &pe) {
		return errors.New(pe.Reason)
	}
	return nil
}

// splitMount splits an absolute, cleaned path at its first glob element.
func splitMount(s string, writable bool) Mount {
	if !strings.ContainsAny(s, "*?[") {
		return Mount{HostPath: s, Writable: writable}
	}
	els := strings.Split(s, string(filepath.Separator))
	for i, el := range els {
		if strings.ContainsAny(el, "*?[") {
			return Mount{HostPath: string(filepath.Separator) + filepath.Join(els[:i]...), Glob: filepath.Join(els[i:]...), Writable: writable}
		}
	}
	return Mount{HostPath: s, Writable: writable}
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func setResources(r *Request, n Name, res []string) {
	switch n {
	case TerminalExec:
		r.TerminalExec.Commands = res
	case FilesystemRead:
		r.FilesystemRead = res
	case FilesystemWrite:
		r.FilesystemWrite = res
	case Network:
		r.Network = res
	case EnvRead:
		r.EnvRead = res
	case SecretsAccess:
		r.SecretsAccess = res
	case AskPerson:
		r.AskPerson = len(res) > 0
	}
}
