package capability

import (
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Decision is Allow or Deny, with a reason. Only this package builds one; the
// zero Decision denies.
type Decision struct {
	allowed    bool
	capability Name
	resource   string
	layer      Layer
	reason     string
}

func allow(n Name, resource, reason string) Decision {
	return Decision{allowed: true, capability: n, resource: resource, reason: reason}
}

func deny(n Name, resource string, layer Layer, reason string) Decision {
	return Decision{capability: n, resource: resource, layer: layer, reason: reason}
}

func (d Decision) Allowed() bool    { return d.allowed }
func (d Decision) Capability() Name { return d.capability }
func (d Decision) Resource() string { return d.resource }
func (d Decision) Layer() Layer     { return d.layer }
func (d Decision) Reason() string {
	if !d.allowed && d.reason == "" {
		return "not granted"
	}
	return d.reason
}

// Err returns nil for an allow and a *DeniedError (wrapping ErrDenied) for a deny.
func (d Decision) Err() error {
	if d.allowed {
		return nil
	}
	layer := d.layer
	if layer == "" {
		layer = LayerUser
	}
	return &DeniedError{Capability: d.capability, Resource: d.resource, Layer: layer, Reason: d.Reason()}
}

// Grant is the effective set of powers one pack holds for one call: its
// request, cut down by what the person granted and by the enterprise policy.
// Only this package builds one (see Resolve); the zero Grant grants nothing.
type Grant struct {
	g *grant
}

type grant struct {
	pack     string
	names    map[Name]bool
	denied   map[Name]Decision // why a requested capability is absent
	c        compiled
	limits   Limits
	scope    Scope
	expanded expansion
}

// expansion holds the filesystem rules resolved to host directories.
type expansion struct {
	read, write []Mount
}

// Mount is one granted host directory and an optional glob inside it.
type Mount struct {
	HostPath string
	Glob     string
	Writable bool
}

// Scope says how long a person's grant lasts.
type Scope string

const (
	ScopeOnce       Scope = "once"
	ScopeChat       Scope = "chat"
	ScopePersistent Scope = "persistent"
)

// Pack returns the name of the pack the grant belongs to.
func (g Grant) Pack() string {
	if g.g == nil {
		return ""
	}
	return g.g.pack
}

// Has reports whether capability n is granted at all.
func (g Grant) Has(n Name) bool { return g.g != nil && g.g.names[n] }

// Names lists the granted capabilities in the order of All.
func (g Grant) Names() []Name {
	var out []Name
	for _, n := range All {
		if g.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Scope reports the scope of the narrowest user grant that built g.
func (g Grant) Scope() Scope {
	if g.g == nil {
		return ""
	}
	return g.g.scope
}

// Limits returns the call limits, defaults filled in.
func (g Grant) Limits() Limits {
	if g.g == nil {
		return DefaultLimits()
	}
	return g.g.limits.withDefaults()
}

// missing explains why n is not held.
func (g Grant) missing(n Name, resource string) Decision {
	if g.g != nil {
		if d, ok := g.g.denied[n]; ok {
			d.resource = resource
			return d
		}
	}
	return deny(n, resource, LayerRequest, "the pack did not ask for "+string(n))
}

// Host decides whether the pack may contact host (a name or IP literal).
func (g Grant) Host(host string) Decision {
	if !g.Has(Network) {
		return g.missing(Network, host)
	}
	for _, p := range g.g.c.hosts {
		if p.Match(host) {
			return allow(Network, host, "matches "+p.String())
		}
	}
	return deny(Network, host, LayerRequest, "host matches no granted pattern")
}

// Env decides whether the pack may read variable name.
func (g Grant) Env(name string) Decision {
	if !g.Has(EnvRead) {
		return g.missing(EnvRead, name)
	}
	for _, p := range g.g.c.env {
		if p.Match(name) {
			return allow(EnvRead, name, "matches "+p.String())
		}
	}
	return deny(EnvRead, name, LayerRequest, "variable matches no granted pattern")
}

// Command decides whether the pack may run program (argv[0]).
func (g Grant) Command(program string) Decision {
	if !g.Has(TerminalExec) {
		return g.missing(TerminalExec, program)
	}
	base := filepath.Base(program)
	for _, b := range g.g.c.blocked {
		if b == program || b == base {
			return deny(TerminalExec, program, LayerRequest, "command is on the pack's blocked list")
		}
	}
	if slices.Contains(g.g.c.commands, program) {
		return allow(TerminalExec, program, "listed command")
	}
	return deny(TerminalExec, program, LayerRequest, "command is not listed in the grant")
}

// Secret decides whether the pack may read the named secret.
func (g Grant) Secret(name string) Decision {
	if !g.Has(SecretsAccess) {
		return g.missing(SecretsAccess, name)
	}
	if slices.Contains(g.g.c.secrets, name) {
		return allow(SecretsAccess, name, "listed secret")
	}
	return deny(SecretsAccess, name, LayerRequest, "secret is not listed in the grant")
}

// Mounts returns the granted host directories beyond the defaults (pack root
// read-only, workspace read-write), already expanded.
func (g Grant) Mounts() []Mount {
	if g.g == nil {
		return nil
	}
	return append(slices.Clone(g.g.expanded.read), g.g.expanded.write...)
}

// Path decides whether hostPath (absolute, cleaned, symlinks resolved by the
// caller) may be opened, for writing when write is true. It covers only the
// granted mounts; the pack root and workspace are the runtime's defaults.
func (g Grant) Path(hostPath string, write bool) Decision {
	n := FilesystemRead
	if write {
		n = FilesystemWrite
	}
	if !g.Has(n) {
		return g.missing(n, hostPath)
	}
	for _, m := range g.Mounts() {
		if write && !m.Writable {
			continue
		}
		rel, err := filepath.Rel(m.HostPath, hostPath)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if m.Glob != "" {
			if ok, _ := filepath.Match(m.Glob, rel); !ok && rel != "." {
				continue
			}
		}
		return allow(n, hostPath, "inside "+m.HostPath)
	}
	return deny(n, hostPath, LayerRequest, "path is outside every granted path")
}

// Exercise is one use of a capability, as recorded in the audit log.
type Exercise struct {
	Pack       string
	Tool       string
	Invocation string
	Capability Name
	Resource   string
	Allowed    bool
	Reason     string
	Time       time.Time
}

// Record turns a decision into the exercise to record.
func (d Decision) Record(pack, tool, invocation string) Exercise {
	return Exercise{
		Pack: pack, Tool: tool, Invocation: invocation,
		Capability: d.capability, Resource: d.resource,
		Allowed: d.allowed, Reason: d.Reason(), Time: time.Now().UTC(),
	}
}

// Recorder stores exercises. An implementation must be safe for concurrent
// use and durable before it returns nil.
type Recorder interface {
	RecordExercise(e Exercise) error
}
