package capability

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strconv"
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
	cause      error
}

func allow(n Name, resource, reason string) Decision {
	return Decision{allowed: true, capability: n, resource: resource, reason: reason}
}

func deny(n Name, resource string, layer Layer, cause error, reason string) Decision {
	return Decision{capability: n, resource: resource, layer: layer, cause: cause, reason: reason}
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

// Err returns nil for an allow and a *DeniedError (wrapping ErrDenied and the
// finer cause) for a deny.
func (d Decision) Err() error {
	if d.allowed {
		return nil
	}
	layer, cause := d.layer, d.cause
	if layer == "" {
		layer, cause = LayerUser, ErrNotGranted
	}
	return &DeniedError{Capability: d.capability, Resource: d.resource, Layer: layer, Reason: d.Reason(), Cause: cause}
}

// Grant is the effective set of powers one pack holds for one call: its
// request, cut down by what the person granted and by the enterprise policy.
// Only this package builds one (see Resolve); the zero Grant grants nothing.
type Grant struct {
	g *grant
}

type grant struct {
	pack    string
	held    [numNames]bool           // by nameIndex
	caps    [numNames]*capResolution // every requested capability, held or not
	c       compiled                 // the effective non-filesystem resources
	mounts  []Mount                  // the effective filesystem resources
	limits  Limits
	scope   Scope
	inject  []SecretInjection // the request's secret bindings, held or not
	confine Confinement       // the policy's [exec] confinement
	digest  string            // see Digest; set once, when the grant is built
}

// Confinement says whether a native command may run with less than the
// full operating-system confinement (docs/abi.md §5). The enterprise policy
// sets it ([exec] confinement); the person cannot loosen it.
type Confinement string

const (
	// ConfinementRequired: a native command runs only fully confined; where
	// the machine cannot, it is refused. The default.
	ConfinementRequired Confinement = "required"
	// ConfinementBestEffort: a native command runs with what confinement
	// the machine gives, the approval card and the audit row saying which.
	ConfinementBestEffort Confinement = "best-effort"
)

// Unconfined decides whether program may run with less than the full
// confinement on this machine; lacking says what the machine does not
// give. Only the policy's best-effort allows it, and the allowing decision
// (recorded) says what the command runs without.
func (g Grant) Unconfined(program, lacking string) Decision {
	if g.Confinement() == ConfinementBestEffort {
		return allow(TerminalExec, program, "runs without full confinement (policy [exec] confinement = \"best-effort\"): "+lacking)
	}
	return deny(TerminalExec, program, LayerPolicy, ErrUnconfined,
		"native commands run only confined, and this machine cannot: "+lacking+"; `packs doctor` says what it gives (an enterprise policy may allow [exec] confinement = \"best-effort\")")
}

// Confinement is how native commands of this grant must be confined.
func (g Grant) Confinement() Confinement {
	if g.g == nil || g.g.confine == "" {
		return ConfinementRequired
	}
	return g.g.confine
}

// Mount is one granted host directory and an optional glob inside it.
type Mount struct {
	HostPath string
	Glob     string
	Writable bool
}

// String is the mount as one path, glob included.
func (m Mount) String() string {
	if m.Glob == "" {
		return m.HostPath
	}
	return filepath.Join(m.HostPath, m.Glob)
}

// Scope says how long a person's grant lasts.
type Scope string

const (
	ScopeOnce       Scope = "once"       // the next call of the pack, then gone
	ScopeChat       Scope = "chat"       // every call in one chat
	ScopePersistent Scope = "persistent" // until revoked
)

// ParseScope returns the Scope for s, or an error naming the valid choices.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeOnce, ScopeChat, ScopePersistent:
		return sc, nil
	}
	return "", &SpecError{Spec: s, Reason: "unknown scope (want once, chat or persistent)"}
}

// wider reports whether s outlives o.
func (s Scope) wider(o Scope) bool { return scopeRank(s) > scopeRank(o) }

func scopeRank(s Scope) int {
	switch s {
	case ScopeOnce:
		return 1
	case ScopeChat:
		return 2
	case ScopePersistent:
		return 3
	}
	return 0
}

// Digest identifies what the grant allows: the pack, each held capability
// with its effective resources, the mounts, the limits and the scope. Two
// grants with the same digest decide every exercise alike. An approval binds
// the digest of the grant its call runs with. The zero Grant's is "".
func (g Grant) Digest() string {
	if g.g == nil {
		return ""
	}
	return g.g.digest
}

// seal computes the digest of a finished grant; nothing changes it after.
func (g *grant) seal() {
	h := sha256.New()
	field := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		h.Write([]byte{'\n'})
	}
	field("pack", g.pack, string(g.scope))
	if g.confine != "" {
		field("confine", string(g.confine))
	}
	for i, n := range all {
		if g.held[i] && g.caps[i] != nil {
			field(append([]string{"cap", string(n)}, raws(g.caps[i].effective)...)...)
		}
	}
	for _, in := range g.inject {
		field("inject", in.Name, in.Host, in.Header, in.Query, in.Value)
	}
	for _, m := range g.mounts {
		field("mount", m.HostPath, m.Glob, strconv.FormatBool(m.Writable))
	}
	l := g.limits.withDefaults()
	field("limits", strconv.FormatUint(uint64(l.MemoryPages), 10), l.Timeout.String(),
		strconv.FormatInt(l.InputBytes, 10), strconv.FormatInt(l.OutputBytes, 10))
	g.digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Pack returns the name of the pack the grant belongs to.
func (g Grant) Pack() string {
	if g.g == nil {
		return ""
	}
	return g.g.pack
}

// Has reports whether capability n is granted at all.
func (g Grant) Has(n Name) bool {
	i := nameIndex(n)
	return g.g != nil && i >= 0 && g.g.held[i]
}

// Names lists the granted capabilities in the order of All.
func (g Grant) Names() []Name {
	var out []Name
	for _, n := range all {
		if g.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Resources lists the effective resources held under n: host and variable
// patterns, commands, secret names, or expanded paths.
func (g Grant) Resources(n Name) []string {
	if !g.Has(n) {
		return nil
	}
	return raws(g.g.caps[nameIndex(n)].effective)
}

// Scope reports the scope of the narrowest user grant that built g: a grant
// holding a "once" capability must not be reused for a second call.
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
	if i := nameIndex(n); g.g != nil && i >= 0 && g.g.caps[i] != nil {
		return g.g.caps[i].denied(resource)
	}
	return deny(n, resource, LayerRequest, ErrNotRequested, "the pack did not ask for "+string(n))
}

// outside explains why resource, which matches none of the effective
// resources of n, is denied: the pack never asked for it, the policy cut it,
// or the person did not grant it. match reports whether one resource covers
// it.
func (g Grant) outside(n Name, resource string, match func(item) bool) Decision {
	cr := g.g.caps[nameIndex(n)]
	switch {
	case !slices.ContainsFunc(cr.space, match):
		return deny(n, resource, LayerRequest, ErrNotRequested, "the pack did not ask for this "+string(n)+" resource")
	case !slices.ContainsFunc(cr.policy.resources, match):
		return deny(n, resource, LayerPolicy, ErrPolicyCeiling, "beyond the policy's ceiling for "+string(n))
	}
	return deny(n, resource, LayerUser, ErrNotGranted, "the person did not grant this "+string(n)+" resource")
}

// Env decides whether the pack may read variable name.
func (g Grant) Env(name string) Decision {
	if strings.HasPrefix(name, ReservedEnvPrefix) {
		return deny(EnvRead, name, LayerPolicy, ErrReserved, "variables named "+ReservedEnvPrefix+"* are packs' own (its home, policy and server tokens) and never visible to a pack")
	}
	if !g.Has(EnvRead) {
		return g.missing(EnvRead, name)
	}
	for _, p := range g.g.c.env {
		if p.Match(name) {
			return allow(EnvRead, name, "matches "+p.String())
		}
	}
	return g.outside(EnvRead, name, func(it item) bool { return it.env.Match(name) })
}

// ReservedEnvPrefix starts the names of packs' own variables (PACKS_HOME,
// PACKS_POLICY, PACKS_TOKEN, ...). No grant, however wide, makes one
// visible to a pack: a token would let a tool reach packs' own API.
const ReservedEnvPrefix = "PACKS_"

// ReservedCommand is packs' own program: no grant lets a pack run it (packs
// approve, packs grant, ... would be a tool deciding about itself).
const ReservedCommand = "packs"

// Command decides whether the pack may run program (argv[0]).
func (g Grant) Command(program string) Decision {
	base := filepath.Base(program)
	if base == ReservedCommand {
		return deny(TerminalExec, program, LayerPolicy, ErrReserved, "packs itself is never run by a pack: it could approve its own calls or change its grants")
	}
	if !g.Has(TerminalExec) {
		return g.missing(TerminalExec, program)
	}
	for _, b := range g.g.c.blocked {
		if b == program || b == base {
			return deny(TerminalExec, program, LayerRequest, ErrNotRequested, "command is on the pack's blocked list")
		}
	}
	if slices.Contains(g.g.c.commands, program) {
		return allow(TerminalExec, program, "listed command")
	}
	return g.outside(TerminalExec, program, func(it item) bool { return it.raw == program })
}

// Mounts returns the granted host directories beyond the defaults (pack root
// read-only, workspace read-write), already expanded.
func (g Grant) Mounts() []Mount {
	if g.g == nil {
		return nil
	}
	return slices.Clone(g.g.mounts)
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
	if !filepath.IsAbs(hostPath) {
		return deny(n, hostPath, LayerRequest, ErrNotRequested, "not an absolute path")
	}
	hostPath = filepath.Clean(hostPath)
	for _, m := range g.g.mounts {
		if write && !m.Writable {
			continue
		}
		if inMount(m, hostPath) {
			return allow(n, hostPath, "inside "+m.String())
		}
	}
	return g.outside(n, hostPath, func(it item) bool { return inMount(*it.mount, hostPath) })
}

// inMount reports whether hostPath lies inside m and matches its glob.
func inMount(m Mount, hostPath string) bool {
	rel, ok := inside(m.HostPath, hostPath)
	if !ok {
		return false
	}
	if m.Glob == "" || rel == "." {
		return true
	}
	ok, _ = filepath.Match(m.Glob, rel)
	return ok
}

// inside reports whether path is root or below it, and the path relative
// to root. Both must be absolute and clean.
func inside(root, path string) (string, bool) {
	switch {
	case path == root:
		return ".", true
	case root == string(filepath.Separator):
		return path[1:], strings.HasPrefix(path, root)
	case strings.HasPrefix(path, root) && path[len(root)] == filepath.Separator:
		return path[len(root)+1:], true
	}
	return "", false
}

// Exercise is one use of a capability, as recorded in the audit log.
type Exercise struct {
	Pack       string
	Tool       string
	Invocation string
	Capability Name
	Resource   string
	Allowed    bool
	Layer      Layer // who said no, for a denial
	Reason     string
	Time       time.Time
	// Person, Issuer and Client say who made the call (CallRecord's);
	// the pipeline fills them in.
	Person, Issuer, Client string
}

// Record turns a decision into the exercise to record.
func (d Decision) Record(pack, tool, invocation string) Exercise {
	return Exercise{
		Pack: pack, Tool: tool, Invocation: invocation,
		Capability: d.capability, Resource: d.resource,
		Allowed: d.allowed, Layer: d.layer, Reason: d.Reason(), Time: time.Now().UTC(),
	}
}

// Recorder stores exercises. An implementation must be safe for concurrent
// use and durable before it returns nil.
type Recorder interface {
	RecordExercise(e Exercise) error
}

// Ask decides whether the pack may put a question to the person
// (ask_person). question is what the audit shows as the resource.
func (g Grant) Ask(question string) Decision {
	if !g.Has(AskPerson) {
		return g.missing(AskPerson, question)
	}
	return allow(AskPerson, question, "ask_person granted")
}
