package capability

import (
	"fmt"
	"slices"
)

// PackRef names a pack and the digest of its installed content.
type PackRef struct {
	Name   string
	Digest string // "sha256:..." from the lock entry; empty for an uninstalled folder
}

// UserGrant is what a person said yes to for one capability of one pack.
// Resources narrows the grant to a subset of what was requested; nil means
// everything the pack asked for under that capability.
type UserGrant struct {
	Capability Name
	Resources  []string
	Scope      Scope
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
// grant remembers which layer said no so a denial can explain itself.
func Resolve(ref PackRef, req Request, user []UserGrant, pol *Policy, env Env) (Grant, error) {
	req, denied, err := pol.Cap(ref, req)
	if err != nil {
		return Grant{}, err
	}
	g := &grant{pack: ref.Name, names: map[Name]bool{}, denied: denied, scope: ScopePersistent, limits: req.Limits}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	narrowed := Request{Limits: req.Limits}
	for _, n := range req.Names() {
		if _, ok := denied[n]; ok {
			continue
		}
		ug, ok := findUserGrant(user, n, pol.PreApproved(ref, n))
		if !ok {
			g.denied[n] = deny(n, "", LayerUser, "the person has not granted "+string(n))
			continue
		}
		res := req.Resources(n)
		if ug.Resources != nil {
			res = slices.DeleteFunc(res, func(r string) bool { return !slices.Contains(ug.Resources, r) })
		}
		if len(res) == 0 {
			g.denied[n] = deny(n, "", LayerUser, "the person granted none of the requested "+string(n)+" resources")
			continue
		}
		setResources(&narrowed, n, res)
		g.names[n] = true
		if ug.Scope == ScopeOnce || ug.Scope == ScopeChat && g.scope == ScopePersistent {
			g.scope = ug.Scope
		}
	}
	narrowed.TerminalExec.Blocked = req.TerminalExec.Blocked
	c, err := narrowed.compile()
	if err != nil {
		return Grant{}, err
	}
	g.c = c
	for _, pr := range c.read {
		root, glob, err := pr.Expand(env.Getenv, env.Home, env.Workspace)
		if err != nil {
			return Grant{}, fmt.Errorf("capability: filesystem_read %s: %w", pr, err)
		}
		g.expanded.read = append(g.expanded.read, Mount{HostPath: root, Glob: glob})
	}
	for _, pr := range c.write {
		root, glob, err := pr.Expand(env.Getenv, env.Home, env.Workspace)
		if err != nil {
			return Grant{}, fmt.Errorf("capability: filesystem_write %s: %w", pr, err)
		}
		g.expanded.write = append(g.expanded.write, Mount{HostPath: root, Glob: glob, Writable: true})
	}
	return Grant{g: g}, nil
}

func findUserGrant(user []UserGrant, n Name, preApproved bool) (UserGrant, bool) {
	for _, u := range user {
		if u.Capability == n {
			return u, true
		}
	}
	if preApproved {
		return UserGrant{Capability: n, Scope: ScopePersistent}, true
	}
	return UserGrant{}, false
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
	}
}
