package capability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/crypto/ssh"
)

// SystemPolicyPath is where an administrator puts the enterprise policy when
// neither --policy nor $PACKS_POLICY names one.
const SystemPolicyPath = "/etc/packs/policy.toml"

// ErrBadPolicy is wrapped by every error about a malformed policy file. A
// malformed policy stops the program: it is never silently ignored.
var ErrBadPolicy = errors.New("capability: bad policy")

// PolicyError is a malformed policy: which file, which line, what is wrong
// and what to do. Error() is one line.
type PolicyError struct {
	File string
	Line int // 0 when the problem has no line (unreadable file)
	Msg  string
}

func (e *PolicyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("capability: policy %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("capability: policy %s:%d: %s", e.File, e.Line, e.Msg)
}

func (e *PolicyError) Unwrap() error { return ErrBadPolicy }

// Policy is the enterprise policy. It layers over the person's grants and
// always wins: it can block packs, mandate packs, cap every capability,
// pre-approve grants and choose which calls run without asking a person. A
// nil *Policy is no policy: nothing is capped, blocked or pre-approved.
// A Policy is immutable once parsed and safe for concurrent use.
type Policy struct {
	source         string
	blocked        []string
	blockedDigests []string
	mandated       []string
	never          []Name
	ceilings       map[Name][]string   // as written; a present key is a ceiling, an empty list allows nothing
	ceilingItems   map[Name][]item     // the same, parsed (not filesystem rules)
	ceilingRules   map[Name][]PathRule // filesystem ceilings, parsed; expanded per call
	limits         Limits              // zero fields set no ceiling
	preapprove     []preapproval
	autoApprove    []string // call classes: "open_docs", "pack__tool", "pack__*"
	neverApprove   []string
	unlistedDeny   bool
	personRisk     RiskLevel    // [approval] never_auto_approve_risk; "" for none (policy_risk.go)
	trust          trustSection // keys normalized to "TYPE BASE64"
	confinement    Confinement  // [exec] confinement; "" is ConfinementRequired
	reviewAfter    time.Duration
	reviewLapse    bool
	reviewRaw      string       // [review] after as written
	discoverOff    discoverOff  // [discover]: the usual skill folders switched off
	roles          RoleMap      // [roles] parsed (policy_roles.go)
	rolesRaw       rolesSection // [roles] as written, for Format
}

type preapproval struct {
	pack, digest string
	signer       string // "TYPE BASE64": only packs signed by this key
	grants       []UserGrant
}

// policyFile is the TOML shape of a policy. Decoding is strict: a key that
// is not here is an error with its line.
type policyFile struct {
	Version    int              `toml:"version,omitempty"`
	Packs      packsSection     `toml:"packs,omitempty"`
	Ceilings   ceilingsSection  `toml:"ceilings,omitempty"`
	Preapprove []preapproveItem `toml:"preapprove,omitempty"`
	Approval   approvalSection  `toml:"approval,omitempty"`
	Trust      trustSection     `toml:"trust,omitempty"`
	Exec       execSection      `toml:"exec,omitempty"`
	Review     reviewSection    `toml:"review,omitempty"`
	Discover   discoverSection  `toml:"discover,omitempty"`
	Roles      rolesSection     `toml:"roles,omitempty"`
}

// execSection is [exec]: how native commands must be confined.
type execSection struct {
	Confinement string `toml:"confinement,omitempty"` // "required" (the default) or "best-effort"
}

// reviewSection is [review]: how old a person's grant may grow before it
// is due for review (spec 001: "users prompted to review capabilities
// periodically"), and whether an unreviewed grant lapses.
type reviewSection struct {
	After string `toml:"after,omitempty"` // "90d", or a Go duration ("720h")
	Lapse bool   `toml:"lapse,omitempty"` // a grant due for review no longer holds
}

// trustSection is [trust]: who may sign packs, whom to refuse, and which
// sources must be signed (see docs/distribution.md).
type trustSection struct {
	Signers          []string `toml:"signers,omitempty"`           // SSH public keys, as in authorized_keys
	BlockedSigners   []string `toml:"blocked_signers,omitempty"`   // the same; refused even when listed in signers
	RequireSignature []string `toml:"require_signature,omitempty"` // source kinds: local, git, https, or all
}

type packsSection struct {
	Blocked        []string `toml:"blocked,omitempty"`
	BlockedDigests []string `toml:"blocked_digests,omitempty"`
	Mandated       []string `toml:"mandated,omitempty"`
}

type ceilingsSection struct {
	Never           []string  `toml:"never,omitempty"`
	TerminalExec    *[]string `toml:"terminal_exec,omitempty"`
	FilesystemRead  *[]string `toml:"filesystem_read,omitempty"`
	FilesystemWrite *[]string `toml:"filesystem_write,omitempty"`
	Network         *[]string `toml:"network,omitempty"`
	EnvRead         *[]string `toml:"env_read,omitempty"`
	SecretsAccess   *[]string `toml:"secrets_access,omitempty"`
	AskPerson       *[]string `toml:"ask_person,omitempty"`
	MemoryMB        int64     `toml:"memory_mb,omitempty"`
	Timeout         string    `toml:"timeout,omitempty"`
	InputBytes      int64     `toml:"input_bytes,omitempty"`
	OutputBytes     int64     `toml:"output_bytes,omitempty"`
}

func (c *ceilingsSection) list(n Name) **[]string {
	switch n {
	case TerminalExec:
		return &c.TerminalExec
	case FilesystemRead:
		return &c.FilesystemRead
	case FilesystemWrite:
		return &c.FilesystemWrite
	case Network:
		return &c.Network
	case EnvRead:
		return &c.EnvRead
	case AskPerson:
		return &c.AskPerson
	}
	return &c.SecretsAccess
}

type preapproveItem struct {
	Pack   string   `toml:"pack,omitempty"`
	Digest string   `toml:"digest,omitempty"`
	Signer string   `toml:"signer,omitempty"` // an SSH public key: only packs it signed (any pack, when pack is absent)
	Grants []string `toml:"grants"`
}

type approvalSection struct {
	AutoApprove  []string `toml:"auto_approve,omitempty"`
	NeverApprove []string `toml:"never_approve,omitempty"`
	Unlisted     string   `toml:"unlisted,omitempty"`
	// NeverAutoApproveRisk: calls at this risk_level or above always ask
	// a person (policy_risk.go).
	NeverAutoApproveRisk string `toml:"never_auto_approve_risk,omitempty"`
}

var (
	packNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	digestRE   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	classRE    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// FindPolicy loads the enterprise policy named by flag, else by
// $PACKS_POLICY, else SystemPolicyPath when that file exists. It returns a
// nil *Policy when none is configured. A file named by flag or environment
// must exist.
func FindPolicy(flag string, getenv func(string) string) (*Policy, error) {
	return findPolicy(flag, getenv, SystemPolicyPath)
}

func findPolicy(flag string, getenv func(string) string, system string) (*Policy, error) {
	path := flag
	if path == "" && getenv != nil {
		path = getenv("PACKS_POLICY")
	}
	if path == "" {
		if _, err := os.Stat(system); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		path = system
	}
	return LoadPolicy(path)
}

// LoadPolicy reads and parses the policy file at path.
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &PolicyError{File: path, Msg: "cannot read it (" + pathErrReason(err) + "): fix the path given by --policy or PACKS_POLICY, or remove the setting"}
	}
	return ParsePolicy(path, data)
}

func pathErrReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ParsePolicy parses a policy document; file names it in errors.
func ParsePolicy(file string, data []byte) (*Policy, error) {
	var f policyFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, tomlError(file, err)
	}
	lines := keyLines(data)
	fail := func(key, format string, args ...any) error {
		return &PolicyError{File: file, Line: lines.find(key), Msg: fmt.Sprintf(format, args...)}
	}
	if f.Version != 0 && f.Version != 1 {
		return nil, fail("version", "version %d is not supported: this packs reads policy version 1", f.Version)
	}
	p := &Policy{source: file, ceilings: map[Name][]string{}, ceilingItems: map[Name][]item{}, ceilingRules: map[Name][]PathRule{}}
	for i, s := range f.Packs.Blocked {
		if !packNameRE.MatchString(s) {
			return nil, fail(fmt.Sprintf("packs.blocked[%d]", i), "%q is not a pack name (a-z, 0-9 and inner '-')", s)
		}
		p.blocked = appendUnique(p.blocked, s)
	}
	for i, s := range f.Packs.BlockedDigests {
		if !digestRE.MatchString(strings.ToLower(s)) {
			return nil, fail(fmt.Sprintf("packs.blocked_digests[%d]", i), "%q is not a digest: write sha256: and 64 hex digits, as in packs.lock", s)
		}
		p.blockedDigests = appendUnique(p.blockedDigests, strings.ToLower(s))
	}
	for i, s := range f.Packs.Mandated {
		key := fmt.Sprintf("packs.mandated[%d]", i)
		switch {
		case !packNameRE.MatchString(s):
			return nil, fail(key, "%q is not a pack name (a-z, 0-9 and inner '-')", s)
		case slices.Contains(p.blocked, s):
			return nil, fail(key, "pack %q is both blocked and mandated: remove it from one list", s)
		}
		p.mandated = appendUnique(p.mandated, s)
	}
	if err := p.parseCeilings(&f.Ceilings, fail); err != nil {
		return nil, err
	}
	switch c := Confinement(f.Exec.Confinement); c {
	case "", ConfinementRequired, ConfinementBestEffort:
		p.confinement = c
	default:
		return nil, fail("exec.confinement", "confinement %q is not known: write \"required\" (native commands run only confined) or \"best-effort\" (they run with what the machine gives, and say so)", f.Exec.Confinement)
	}
	for i, item := range f.Preapprove {
		pa, err := p.parsePreapproval(i, item, fail)
		if err != nil {
			return nil, err
		}
		p.preapprove = append(p.preapprove, pa)
	}
	if err := p.parseApproval(&f.Approval, fail); err != nil {
		return nil, err
	}
	if err := p.parseTrust(&f.Trust, fail); err != nil {
		return nil, err
	}
	if err := p.parseReview(&f.Review, fail); err != nil {
		return nil, err
	}
	p.parseDiscover(&f.Discover)
	if err := p.parseRoles(&f.Roles, fail); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Policy) parseReview(r *reviewSection, fail failFunc) error {
	if r.After == "" {
		if r.Lapse {
			return fail("review.lapse", "lapse needs an age: write after = \"90d\" (days) or a duration such as \"720h\"")
		}
		return nil
	}
	d, err := ParseAge(r.After)
	if err != nil {
		return fail("review.after", "%v", err)
	}
	p.reviewAfter, p.reviewLapse, p.reviewRaw = d, r.Lapse, r.After
	return nil
}

// ParseAge reads an age as [review] after writes it: a whole number of
// days ("90d") or a Go duration ("720h"), more than zero.
func ParseAge(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, fmt.Errorf("%q is not an age: write a number of days (\"90d\") or a duration (\"720h\")", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not an age: write a number of days (\"90d\") or a duration (\"720h\")", s)
		}
	}
	return d, nil
}

// ReviewAfter is how old a person's persistent grant may grow (since it
// was granted or last kept) before it is due for review; 0 when the
// policy asks for no review.
func (p *Policy) ReviewAfter() time.Duration {
	if p == nil {
		return 0
	}
	return p.reviewAfter
}

// ReviewLapse reports whether a grant due for review no longer holds
// until the person keeps it.
func (p *Policy) ReviewLapse() bool { return p != nil && p.reviewLapse }

// sourceKinds are the kinds of pack source [trust] require_signature names.
var sourceKinds = []string{"local", "git", "https", "oci"}

func (p *Policy) parseTrust(t *trustSection, fail failFunc) error {
	keys := func(list []string, key string) ([]string, error) {
		var out []string
		for i, s := range list {
			pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(s))
			if err != nil || len(bytes.TrimSpace(rest)) > 0 {
				return nil, fail(fmt.Sprintf("trust.%s[%d]", key, i), "%q is not one SSH public key: write it as in a .pub file, \"ssh-ed25519 AAAA… comment\"", oneLine(s))
			}
			out = appendUnique(out, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))))
		}
		return out, nil
	}
	var err error
	if p.trust.Signers, err = keys(t.Signers, "signers"); err != nil {
		return err
	}
	if p.trust.BlockedSigners, err = keys(t.BlockedSigners, "blocked_signers"); err != nil {
		return err
	}
	for i, s := range t.RequireSignature {
		if s != "all" && !slices.Contains(sourceKinds, s) {
			return fail(fmt.Sprintf("trust.require_signature[%d]", i), "%q is not a source kind: write all or some of %s", s, strings.Join(sourceKinds, ", "))
		}
		p.trust.RequireSignature = appendUnique(p.trust.RequireSignature, s)
	}
	return nil
}

// TrustedSigners lists the SSH public keys ("TYPE BASE64") whose pack
// signatures the policy accepts.
func (p *Policy) TrustedSigners() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.trust.Signers)
}

// BlockedSigners lists the SSH public keys whose signatures are refused.
func (p *Policy) BlockedSigners() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.trust.BlockedSigners)
}

// SignatureRequired reports whether a pack from a source of kind (one of
// sourceKinds) must carry a good signature by a trusted signer.
func (p *Policy) SignatureRequired(kind string) bool {
	if p == nil {
		return false
	}
	return slices.Contains(p.trust.RequireSignature, "all") || slices.Contains(p.trust.RequireSignature, kind)
}

type failFunc func(key, format string, args ...any) error

func (p *Policy) parseCeilings(c *ceilingsSection, fail failFunc) error {
	for i, s := range c.Never {
		n, err := ParseName(s)
		if err != nil {
			return fail(fmt.Sprintf("ceilings.never[%d]", i), "%q is not a capability (want one of %s)", s, nameList())
		}
		if !slices.Contains(p.never, n) {
			p.never = append(p.never, n)
		}
	}
	for _, n := range all {
		l := *c.list(n)
		if l == nil {
			continue
		}
		key := "ceilings." + string(n)
		if slices.Contains(p.never, n) {
			return fail(key, "%s is in ceilings.never and has a ceiling list too: keep one", n)
		}
		list, items := []string{}, []item{}
		for i, s := range *l {
			if err := checkCeiling(n, s); err != nil {
				return fail(fmt.Sprintf("%s[%d]", key, i), "%q: %v: fix or remove it", s, err)
			}
			list = appendUnique(list, s)
			if n == FilesystemRead || n == FilesystemWrite {
				if pr, err := ParsePathRule(s); err == nil {
					p.ceilingRules[n] = append(p.ceilingRules[n], pr)
				}
				continue
			}
			if it, ok := parseItem(n, s); ok {
				items = appendItem(items, it)
			}
		}
		p.ceilings[n] = list
		p.ceilingItems[n] = items
	}
	switch {
	case c.MemoryMB < 0 || c.MemoryMB > 4096:
		return fail("ceilings.memory_mb", "memory_mb must be between 1 and 4096 (a wasm32 memory is at most 4 GiB)")
	case c.InputBytes < 0:
		return fail("ceilings.input_bytes", "input_bytes must be positive")
	case c.OutputBytes < 0:
		return fail("ceilings.output_bytes", "output_bytes must be positive")
	}
	p.limits = Limits{MemoryPages: uint32(c.MemoryMB * 16), InputBytes: c.InputBytes, OutputBytes: c.OutputBytes}
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return fail("ceilings.timeout", "timeout %q is not a positive duration: write it as \"30s\" or \"2m\"", c.Timeout)
		}
		p.limits.Timeout = d
	}
	return nil
}

// checkCeiling validates one ceiling entry of n.
func checkCeiling(n Name, s string) error {
	if err := checkResource(n, s); err != nil {
		return err
	}
	if (n == FilesystemRead || n == FilesystemWrite) && strings.ContainsAny(s, "*?[") {
		return errors.New("a path ceiling is a directory, without globs")
	}
	return nil
}

func (p *Policy) parsePreapproval(i int, item preapproveItem, fail failFunc) (preapproval, error) {
	key := fmt.Sprintf("preapprove[%d]", i)
	pa := preapproval{pack: item.Pack, digest: strings.ToLower(item.Digest)}
	if item.Signer != "" {
		pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(item.Signer))
		if err != nil || len(bytes.TrimSpace(rest)) > 0 {
			return pa, fail(key+".signer", "%q is not one SSH public key: write it as in a .pub file, \"ssh-ed25519 AAAA… comment\"", oneLine(item.Signer))
		}
		pa.signer = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	}
	switch {
	case item.Pack == "" && pa.signer == "":
		return pa, fail(key+".pack", "pre-approval needs pack = \"name\", signer = \"ssh-ed25519 AAAA…\", or both")
	case item.Pack != "" && !packNameRE.MatchString(item.Pack):
		return pa, fail(key+".pack", "pre-approval needs pack = \"name\" (a-z, 0-9 and inner '-'), got %q", item.Pack)
	case item.Digest != "" && !digestRE.MatchString(pa.digest):
		return pa, fail(key+".digest", "%q is not a digest: write sha256: and 64 hex digits, as in packs.lock", item.Digest)
	case len(item.Grants) == 0:
		return pa, fail(key, "pre-approval of %q grants nothing: add grants = [\"network\", ...]", item.Pack)
	}
	for j, spec := range item.Grants {
		gkey := fmt.Sprintf("%s.grants[%d]", key, j)
		u, err := ParseGrantSpec(spec, ScopePersistent)
		if err != nil {
			return pa, fail(gkey, "%s: fix or remove it", specReason(err))
		}
		if u.Scope != ScopePersistent {
			return pa, fail(gkey, "%q: a pre-approval has no scope, drop =%s", spec, u.Scope)
		}
		if slices.Contains(p.never, u.Capability) {
			return pa, fail(gkey, "pre-approves %s, which ceilings.never forbids: remove one of them", u.Capability)
		}
		pa.grants = append(pa.grants, u)
	}
	return pa, nil
}

func (p *Policy) parseApproval(a *approvalSection, fail failFunc) error {
	for i, s := range a.AutoApprove {
		if err := checkClass(s); err != nil {
			return fail(fmt.Sprintf("approval.auto_approve[%d]", i), "%q: %v", s, err)
		}
		p.autoApprove = appendUnique(p.autoApprove, s)
	}
	for i, s := range a.NeverApprove {
		key := fmt.Sprintf("approval.never_approve[%d]", i)
		if err := checkClass(s); err != nil {
			return fail(key, "%q: %v", s, err)
		}
		if slices.Contains(p.autoApprove, s) {
			return fail(key, "%q is in both auto_approve and never_approve: keep one", s)
		}
		p.neverApprove = appendUnique(p.neverApprove, s)
	}
	switch a.Unlisted {
	case "", "ask":
	case "deny":
		p.unlistedDeny = true
	default:
		return fail("approval.unlisted", "unlisted = %q: write \"ask\" (a person decides) or \"deny\"", a.Unlisted)
	}
	return p.parseRisk(a.NeverAutoApproveRisk, fail)
}

// checkClass validates a call class: a base tool name, "pack__tool", or
// "pack__*" for every tool of a pack.
func checkClass(s string) error {
	if pack, ok := strings.CutSuffix(s, "__*"); ok {
		if !packNameRE.MatchString(pack) {
			return errors.New("\"PACK__*\" needs a pack name before __*")
		}
		return nil
	}
	if !classRE.MatchString(s) {
		return errors.New("a call class is a tool name as the model sees it (A-Z a-z 0-9 _ -), or PACK__* for all tools of a pack")
	}
	return nil
}

func nameList() string {
	var s []string
	for _, n := range all {
		s = append(s, string(n))
	}
	return strings.Join(s, ", ")
}

// Source names the file the policy came from.
// ExecConfinement is the policy's [exec] confinement: how native commands
// must be confined (ConfinementRequired when no policy says otherwise).
func (p *Policy) ExecConfinement() Confinement {
	if p == nil || p.confinement == "" {
		return ConfinementRequired
	}
	return p.confinement
}

func (p *Policy) Source() string {
	if p == nil {
		return ""
	}
	return p.source
}

// Blocked returns an error wrapping ErrDenied and ErrBlocked when the policy
// blocks ref by name or by content digest, else nil.
func (p *Policy) Blocked(ref PackRef) error {
	if p == nil {
		return nil
	}
	if slices.Contains(p.blocked, ref.Name) {
		return &DeniedError{Layer: LayerPolicy, Cause: ErrBlocked, Reason: "the policy " + p.source + " blocks pack " + ref.Name}
	}
	if ref.Digest != "" && slices.Contains(p.blockedDigests, strings.ToLower(ref.Digest)) {
		return &DeniedError{Layer: LayerPolicy, Cause: ErrBlocked, Reason: "the policy " + p.source + " blocks the content of pack " + ref.Name + " (" + ref.Digest + ")"}
	}
	return nil
}

// Mandated lists the packs the policy attaches to every chat.
func (p *Policy) Mandated() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.mandated)
}

// PreApproved reports whether the policy grants n to ref without asking.
func (p *Policy) PreApproved(ref PackRef, n Name) bool {
	return slices.ContainsFunc(p.preApproved(ref), func(u UserGrant) bool { return u.Capability == n })
}

// preApproved returns the grants the policy gives ref without asking. A
// pre-approval pinned to a digest applies only to that content.
func (p *Policy) preApproved(ref PackRef) []UserGrant {
	if p == nil {
		return nil
	}
	var out []UserGrant
	for _, pa := range p.preapprove {
		if ref.InPlace != "" && pa.digest == "" {
			// A pack used in place is a folder anyone who can write it
			// may name anything: only a pre-approval of its exact
			// content applies (RATIONALE.md, in-place grants).
			continue
		}
		if (pa.pack == "" || pa.pack == ref.Name) && (pa.digest == "" || pa.digest == strings.ToLower(ref.Digest)) &&
			(pa.signer == "" || pa.signer == ref.Signer) {
			out = append(out, pa.grants...)
		}
	}
	return out
}

// layer is the policy's verdict on the requested resources of n.
func (p *Policy) layer(n Name, space []item, env Env) layerVerdict {
	if p == nil {
		return layerVerdict{allowed: true, resources: space, why: whyNoPolicy}
	}
	if slices.Contains(p.never, n) {
		return layerVerdict{why: whyNever, cause: ErrPolicyCeiling}
	}
	ceil, ok := p.ceilingItems[n]
	if !ok {
		return layerVerdict{allowed: true, resources: space, why: whyNoCeiling}
	}
	if n == FilesystemRead || n == FilesystemWrite {
		ceil = make([]item, 0, len(p.ceilingRules[n]))
		for _, pr := range p.ceilingRules[n] {
			if it, ok := expandItem(pr, env); ok {
				ceil = appendItem(ceil, it)
			}
		}
	}
	kept, dropped := narrow(n, space, ceil)
	switch {
	case len(kept) == 0:
		return layerVerdict{ceiling: ceil, dropped: dropped, why: whyBeyond, cause: ErrPolicyCeiling}
	case len(dropped) > 0 || !allWithin(n, space, ceil):
		return layerVerdict{allowed: true, ceiling: ceil, resources: kept, dropped: dropped, why: whyCut}
	}
	return layerVerdict{allowed: true, ceiling: ceil, resources: kept, why: whyWithin}
}

func describeList(l []string) string {
	if len(l) == 0 {
		return "[] (nothing)"
	}
	return "[" + strings.Join(l, ", ") + "]"
}

// Approver returns the policy as an approver: it approves the call classes
// listed in auto_approve, denies those in never_approve (and, with
// unlisted = "deny", every other class), and defers the rest to the next
// approver with ErrDefer. A call listed in auto_approve whose risk_level
// is at or above never_auto_approve_risk is deferred too: a person decides. A nil policy defers everything. The gate asks it
// before it looks at a chat's remembered approvals, so a policy veto always
// holds.
func (p *Policy) Approver() Approver { return policyApprover{p: p} }

type policyApprover struct{ p *Policy }

func (a policyApprover) Name() string {
	if a.p == nil {
		return "policy"
	}
	return "policy " + a.p.source
}

func (policyApprover) automatic() {}

func (a policyApprover) Approve(ctx context.Context, pend Pending) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Deny, err
	}
	if a.p == nil {
		return Deny, ErrDefer
	}
	class := pend.Class()
	switch {
	case slices.ContainsFunc(a.p.neverApprove, func(c string) bool { return classMatch(c, class) }):
		return Deny, nil
	case slices.ContainsFunc(a.p.autoApprove, func(c string) bool { return classMatch(c, class) }):
		if a.p.PersonRequired(pend.RiskLevel) {
			// Listed, but too risky to run without a person.
			return Deny, ErrDefer
		}
		return RunOnce, nil
	case a.p.unlistedDeny:
		return Deny, nil
	}
	return Deny, ErrDefer
}

// classMatch reports whether the class pattern c covers class.
func classMatch(c, class string) bool {
	if pack, ok := strings.CutSuffix(c, "__*"); ok {
		return strings.HasPrefix(class, pack+"__")
	}
	return c == class
}

// Format returns the policy as normalized TOML: what is in force, in the
// same syntax as the file. A nil policy is a comment saying there is none.
func (p *Policy) Format() (string, error) {
	if p == nil {
		return "# no enterprise policy: no pack is blocked, capped or pre-approved; a person approves every call\n", nil
	}
	f := policyFile{Version: 1}
	f.Packs = packsSection{Blocked: p.blocked, BlockedDigests: p.blockedDigests, Mandated: p.mandated}
	for _, n := range p.never {
		f.Ceilings.Never = append(f.Ceilings.Never, string(n))
	}
	for _, n := range all {
		if l, ok := p.ceilings[n]; ok {
			l := slices.Clone(l)
			*f.Ceilings.list(n) = &l
		}
	}
	f.Ceilings.MemoryMB = int64(p.limits.MemoryPages / 16)
	f.Ceilings.InputBytes = p.limits.InputBytes
	f.Ceilings.OutputBytes = p.limits.OutputBytes
	if p.limits.Timeout != 0 {
		f.Ceilings.Timeout = p.limits.Timeout.String()
	}
	for _, pa := range p.preapprove {
		item := preapproveItem{Pack: pa.pack, Digest: pa.digest, Signer: pa.signer}
		for _, u := range pa.grants {
			item.Grants = append(item.Grants, u.String())
		}
		f.Preapprove = append(f.Preapprove, item)
	}
	f.Approval = approvalSection{AutoApprove: p.autoApprove, NeverApprove: p.neverApprove, Unlisted: "ask", NeverAutoApproveRisk: string(p.personRisk)}
	if p.unlistedDeny {
		f.Approval.Unlisted = "deny"
	}
	f.Trust = p.trust
	f.Review = reviewSection{After: p.reviewRaw, Lapse: p.reviewLapse}
	f.Discover = p.discoverOff.section()
	f.Roles = p.rolesRaw
	out, err := toml.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("capability: formatting the policy: %w", err)
	}
	return "# effective policy from " + p.source + "\n" + string(out), nil
}
