package capability

import "slices"

// LockCapability is how packs.lock records one capability of a pack, spec
// 001's `network = { granted = true, resources = [...] }`. Resources are the
// granted resources (spec 001's `commands = ["aws", "eksctl"]`, a subset of
// the request), empty when the capability is not granted.
type LockCapability struct {
	Granted   bool
	Resources []string
}

// ToLock turns a pack's stored grants into its lock capabilities: every
// requested capability appears, granted or not. Only live persistent grants
// are mirrored; chat and once grants do not outlive their chat or call. A
// grant of everything is written as the full requested list, so the lock
// says exactly what was allowed at install time.
func ToLock(req Request, grants []UserGrant) map[Name]LockCapability {
	out := map[Name]LockCapability{}
	for _, n := range req.Names() {
		lc := LockCapability{}
		for _, u := range grants {
			if u.Capability != n || u.Revoked || u.Scope != ScopePersistent {
				continue
			}
			lc.Granted = true
			res := u.Resources
			if res == nil {
				res = req.Resources(n)
			}
			for _, r := range res {
				lc.Resources = appendUnique(lc.Resources, r)
			}
		}
		out[n] = lc
	}
	return out
}

// FromLock turns lock capabilities back into persistent grants, in the order
// of All.
func FromLock(caps map[Name]LockCapability) []UserGrant {
	var out []UserGrant
	for _, n := range all {
		if lc, ok := caps[n]; ok && lc.Granted {
			out = append(out, UserGrant{Capability: n, Resources: slices.Clone(lc.Resources), Scope: ScopePersistent})
		}
	}
	return out
}
