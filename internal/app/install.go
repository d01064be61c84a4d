package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// The installer's refusals besides those of the library (a *packs.LoadError,
// dist.ErrSignatureRequired, dist.ErrUntrustedSigner,
// dist.ErrSignerBlocked, dist.ErrSignature, and the policy's block list,
// an error wrapping capability.ErrDenied and capability.ErrBlocked). Check
// them with errors.Is.
var (
	// ErrMisfit: the pack does not fit this machine: its [platform] (os,
	// arch, required_tools) or its [dependencies]. The error is a
	// *MisfitError with the findings.
	ErrMisfit = errors.New("app: the pack does not fit this machine")
	// ErrDeclined: the person (or the front end for them) did not consent,
	// or no one could be asked.
	ErrDeclined = errors.New("app: not installed: no consent")
	// ErrExecNotRequested: a tool runs a native command that skill.toml
	// does not request under terminal_exec, so no grant could ever let it
	// run.
	ErrExecNotRequested = errors.New("app: a tool runs a command the pack does not request")
	// ErrIndexName: the pack an index name led to is named otherwise.
	ErrIndexName = errors.New("app: the index led to another pack")
	// ErrNoIndex: SOURCE is a pack name, nothing of that name is here, and
	// no index was given to look it up in.
	ErrNoIndex = errors.New("app: no pack index")
	// ErrOtherPack: an update found another pack at the recorded source.
	ErrOtherPack = errors.New("app: the source now holds another pack")
)

// MisfitError lists why a pack does not fit this machine.
type MisfitError struct {
	Pack     string
	Findings []packs.Finding // the errors and warnings of packs.CheckHost
}

func (e *MisfitError) Error() string {
	var rules []string
	for _, f := range e.Findings {
		if f.Severity == packs.SeverityError {
			rules = append(rules, f.Message)
		}
	}
	return fmt.Sprintf("app: %s does not fit this machine: %s", e.Pack, strings.Join(rules, "; "))
}

func (e *MisfitError) Unwrap() error { return ErrMisfit }

// BlockedError: the enterprise policy blocks the pack Ref (by name or
// by content digest). It wraps the policy's denial, so errors.Is matches
// capability.ErrDenied and capability.ErrBlocked.
type BlockedError struct {
	Ref    capability.PackRef
	Denial error // from capability.Policy.Blocked
}

func (e *BlockedError) Error() string { return fmt.Sprintf("app: %s: %v", e.Ref.Name, e.Denial) }

func (e *BlockedError) Unwrap() error { return e.Denial }

// Offer is what a front end shows the person before a pack is committed,
// and what its Consent decides on.
type Offer struct {
	Staged *dist.Staged
	// FromIndex is the source the pack index gave for the name asked
	// for; "" when the source was given directly.
	FromIndex string
	Request   capability.Request
	// PreApproved are the requested capabilities the enterprise policy
	// grants this pack without asking, in the order of capability.All().
	PreApproved []capability.Name
	// Previous is the installed entry an update replaces; nil for a new
	// install. Diff is the capability diff, Carried the person's grants
	// that carry over (never wider than before) and Dropped those that no
	// longer apply.
	Previous *dist.LockEntry
	Diff     dist.RequestDiff
	Carried  []capability.UserGrant
	Dropped  []capability.Name
	// Bundled are the grants a bundle's lock entry carries for the pack
	// (packs bundle import).
	Bundled []capability.UserGrant
	// InPlace are the persistent grants the person made to this same
	// content used in place (the source folder, at the digest being
	// installed): packs add keeps them unless told otherwise.
	InPlace []capability.UserGrant
}

// Widen is grants (an update's carried grants) with the resources the
// update newly asks for under n added: the person said yes to n's new
// requests (packs update's question, the web app's update dialog). A
// capability not granted before is granted for its new resources only; one
// with no resources is granted whole.
func (o Offer) Widen(grants []capability.UserGrant, n capability.Name) []capability.UserGrant {
	added := o.Diff.Added[n]
	for i, u := range grants {
		if u.Capability == n {
			if len(u.Resources) > 0 {
				grants[i].Resources = append(slices.Clone(u.Resources), added...)
			}
			return grants
		}
	}
	u := capability.UserGrant{Capability: n, Scope: capability.ScopePersistent}
	if len(o.Request.Resources(n)) > 0 {
		u.Resources = slices.Clone(added)
	}
	return append(grants, u)
}

// Consent decides, for the person, what a pack about to be installed is
// granted: persistent grants within its request. An error (wrapping
// ErrDeclined when the answer is no) installs nothing and is returned as
// is. Each front end supplies its own: the terminal's questions and
// packs add's --grant and --yes, the web request's fields.
type Consent interface {
	Consent(ctx context.Context, o Offer) ([]capability.UserGrant, error)
}

// ConsentFunc is a Consent.
type ConsentFunc func(ctx context.Context, o Offer) ([]capability.UserGrant, error)

// Consent implements Consent.
func (f ConsentFunc) Consent(ctx context.Context, o Offer) ([]capability.UserGrant, error) {
	return f(ctx, o)
}

// InstallRequest is one install as a front end asks for it.
type InstallRequest struct {
	// Source is what packs add takes: a folder or .tar.gz path, a git,
	// https or oci URL, or a pack NAME looked up in Index.
	Source string
	Index  string // the pack index (file or URL) a NAME is looked up in
	// Signers are keys the person trusts for this install (packs add
	// --signer), besides the policy's: naming one requires a signature.
	Signers       []string
	AllowUnpinned bool    // accept an https archive without #sha256=
	Consent       Consent // nil: nobody can consent, nothing is installed
	By            string  // the front end, for the audit row: "packs add", "web", ...
	// Person and Issuer name who installs (an OIDC subject and issuer),
	// for the audit row; empty for the token holder and the terminal.
	Person, Issuer string
}

// InstallResult is a committed pack.
type InstallResult struct {
	Entry       dist.LockEntry
	Pack        *packs.Pack // loaded from the installed folder
	PreApproved []capability.Name
	Previous    *dist.LockEntry // the entry an update replaced
	Diff        dist.RequestDiff
	Dropped     []capability.Name
	// UpToDate: an update found the installed content unchanged and
	// committed nothing.
	UpToDate bool
}

// Install installs a pack from req.Source: the one door through which a
// pack enters the state directory, for every front end. In order: the
// source is resolved (a NAME through the index) and fetched; the pack is
// staged and validated; the enterprise policy's block list, its [trust]
// (signature required per kind of source, trusted and blocked signers)
// and req.Signers are applied; its tools may run only commands it
// requests; it must fit this machine ([platform], required tools,
// [dependencies]); req.Consent decides its grants (the policy's
// pre-approvals apply without asking); then it is committed (journaled,
// atomic), its packs.lock entry and packs.db row and grants are written
// together, the Installed hooks run, and an audit row records it.
func (a *App) Install(ctx context.Context, req InstallRequest) (InstallResult, error) {
	source, fromIndex, err := a.resolveSource(ctx, req)
	if err != nil {
		return InstallResult{}, err
	}
	trust, err := a.trust(source, req.Signers)
	if err != nil {
		return InstallResult{}, err
	}
	st, err := a.Home.StageSource(ctx, source, dist.StageOptions{}, dist.FetchOptions{AllowUnpinned: req.AllowUnpinned, Trust: trust})
	if err != nil {
		return InstallResult{}, err
	}
	defer st.Discard()
	if fromIndex != "" && st.Name() != req.Source {
		return InstallResult{}, fmt.Errorf("%w: the index names %s for %q, and it holds pack %q: nothing was installed; ask the index's maintainer", ErrIndexName, source, req.Source, st.Name())
	}
	if err := a.admit(st); err != nil {
		return InstallResult{}, err
	}
	o := Offer{Staged: st, FromIndex: fromIndex, Request: st.Pack.Request()}
	o.PreApproved = a.preApproved(st.Ref(), o.Request)
	inPlace, key, err := a.inPlaceGrantsFor(ctx, source, st.Integrity)
	if err != nil {
		return InstallResult{}, err
	}
	o.InPlace = inPlace
	grants, err := decide(ctx, req.Consent, o)
	if err != nil {
		return InstallResult{}, err
	}
	res, err := a.commit(ctx, st, grants, commitOptions{by: req.By, person: req.Person, issuer: req.Issuer, pre: o.PreApproved})
	if err == nil && key != "" {
		// Installed, the pack wins over its folder: the folder's grants
		// moved into packs.lock.
		if err := a.DB.DeleteInPlaceGrants(ctx, key); err != nil {
			return res, fmt.Errorf("app: %s is installed, but the grants of its folder were not forgotten: %w", res.Entry.Name, err)
		}
	}
	return res, err
}

// Update fetches the installed pack name again from the source its lock
// entry records and installs it through the same checks as Install when
// its content changed. The person's grants carry over only as far as they
// went (dist.CarryGrants); req.Consent sees the diff and decides. A
// signed pack stays signed: the key that signed it is trusted again and a
// signature is required. req.Source and req.Index are ignored.
func (a *App) Update(ctx context.Context, name string, req InstallRequest) (InstallResult, error) {
	e, err := a.Home.Entry(name)
	if err != nil {
		return InstallResult{}, err
	}
	source := dist.SourceForUpdate(e.Source)
	trust, err := a.trust(source, req.Signers)
	if err != nil {
		return InstallResult{}, err
	}
	if e.Signer != "" {
		trust.Require = true
		trust.Signers = append(trust.Signers, e.Signer)
	}
	st, err := a.Home.StageSource(ctx, source, dist.StageOptions{}, dist.FetchOptions{AllowUnpinned: req.AllowUnpinned, Trust: trust})
	if err != nil {
		return InstallResult{}, err
	}
	defer st.Discard()
	if st.Name() != e.Name {
		return InstallResult{}, fmt.Errorf("%w: %s now holds pack %q, not %q: %s stays installed; install the other with packs add", ErrOtherPack, e.Source, st.Name(), e.Name, e.Name)
	}
	if st.Integrity == e.Integrity {
		return InstallResult{Entry: e, Pack: st.Pack, UpToDate: true}, nil
	}
	if err := a.admit(st); err != nil {
		return InstallResult{}, err
	}
	dir, err := a.Home.PackDir(e.Name)
	if err != nil {
		return InstallResult{}, err
	}
	old, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return InstallResult{}, fmt.Errorf("app: update: the installed %s does not load (%w): remove it and add it again", e.Name, err)
	}
	o := Offer{Staged: st, Request: st.Pack.Request(), Previous: &e}
	o.Diff = dist.DiffRequests(old.Request(), o.Request)
	current, err := a.Grants().PeekGrants(ctx, e.Ref(), "")
	if err != nil {
		return InstallResult{}, err
	}
	o.Carried, o.Dropped = dist.CarryGrants(old.Request(), o.Request, current)
	o.PreApproved = a.preApproved(st.Ref(), o.Request)
	grants, err := decide(ctx, req.Consent, o)
	if err != nil {
		return InstallResult{}, err
	}
	res, err := a.commit(ctx, st, grants, commitOptions{by: req.By, person: req.Person, issuer: req.Issuer, pre: o.PreApproved, previous: &e})
	res.Diff, res.Dropped = o.Diff, o.Dropped
	return res, err
}

// InstallBundle installs every pack of the bundle file, offline, through
// the same checks as Install: each archive's digest and signature (a pack
// the bundle records as signed must be signed by that key, trusted here:
// the policy's signers or req.Signers), the policy, the commands its tools
// run and the machine's fit (a dependency may come in the same bundle).
// req.Consent is asked about each pack, with the grants its bundle entry
// carries in Offer.Bundled. Everything is checked, and every consent
// given, before anything is committed: a refusal installs nothing.
func (a *App) InstallBundle(ctx context.Context, file string, req InstallRequest) ([]InstallResult, error) {
	trust, err := a.trust(file, nil)
	if err != nil {
		return nil, err
	}
	trust.Signers = append(trust.Signers, req.Signers...)
	staged, err := a.Home.StageBundle(ctx, file, dist.StageOptions{}, trust)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, p := range staged {
			p.Staged.Discard()
		}
	}()
	var together []packs.Installed
	for _, p := range staged {
		in := packs.Installed{Name: p.Staged.Name()}
		if m := p.Staged.Pack.Manifest; m != nil {
			in.ID, in.Version = m.ID, m.Version
		}
		together = append(together, in)
	}
	for _, p := range staged {
		if err := a.admit(p.Staged, together...); err != nil {
			return nil, err
		}
	}
	grants := make([][]capability.UserGrant, len(staged))
	offers := make([]Offer, len(staged))
	for i, p := range staged {
		o := Offer{Staged: p.Staged, Request: p.Staged.Pack.Request(), Bundled: capability.FromLock(p.Entry.Capabilities)}
		o.PreApproved = a.preApproved(p.Staged.Ref(), o.Request)
		if grants[i], err = decide(ctx, req.Consent, o); err != nil {
			return nil, err
		}
		offers[i] = o
	}
	var out []InstallResult
	for i, p := range staged {
		res, err := a.commit(ctx, p.Staged, grants[i], commitOptions{by: req.By, person: req.Person, issuer: req.Issuer, pre: offers[i].PreApproved})
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// resolveSource turns a pack NAME that is no file or folder here into the
// source req.Index lists for it; it returns the source and, for a name,
// that source again as fromIndex.
func (a *App) resolveSource(ctx context.Context, req InstallRequest) (source, fromIndex string, err error) {
	if !dist.IsPackName(req.Source) {
		return req.Source, "", nil
	}
	if _, err := os.Lstat(req.Source); !errors.Is(err, os.ErrNotExist) {
		return req.Source, "", nil
	}
	if req.Index == "" {
		return "", "", fmt.Errorf("%w: there is no folder or file %q here, and no pack index to look the name up in: give a path or URL, or name an index", ErrNoIndex, req.Source)
	}
	resolved, err := dist.ResolveIndex(ctx, req.Index, req.Source, nil)
	if err != nil {
		return "", "", err
	}
	return resolved, resolved, nil
}

// trust is the signature trust for installing from source: the policy's
// [trust] signers and blocked signers, plus signers (keys, as in
// authorized_keys). A signature is required when the policy requires one
// for source's kind, or when the person names a signer: trusting a key
// means expecting its signature.
func (a *App) trust(source string, signers []string) (dist.Trust, error) {
	t := dist.Trust{Signers: a.Policy.TrustedSigners(), Blocked: a.Policy.BlockedSigners()}
	for _, s := range signers {
		k, err := dist.NormalizeKey(s)
		if err != nil {
			return t, err
		}
		t.Signers = append(t.Signers, k)
	}
	if src, err := dist.ParseSource(source); err == nil {
		t.Require = a.Policy.SignatureRequired(src.Kind.String())
	}
	t.Require = t.Require || len(signers) > 0
	return t, nil
}

// admit applies the policy's block list, the commands rule and the
// machine's fit to a staged pack; also are packs installed with it.
func (a *App) admit(st *dist.Staged, also ...packs.Installed) error {
	if err := a.Policy.Blocked(st.Ref()); err != nil {
		return &BlockedError{Ref: st.Ref(), Denial: err}
	}
	for _, f := range st.Findings {
		if f.Rule == "exec-grant" {
			return fmt.Errorf("%w: %s:%d: %s", ErrExecNotRequested, f.File, f.Line, f.Message)
		}
	}
	h, err := a.host()
	if err != nil {
		return err
	}
	h.Installed = append(h.Installed, also...)
	var misfit []packs.Finding
	bad := false
	for _, f := range packs.CheckHost(st.Pack, h) {
		// The pack is staged in a temporary folder: name its files by
		// the pack, as "weather/skill.toml".
		if rel, err := filepath.Rel(st.Pack.Dir, f.File); err == nil && filepath.IsLocal(rel) {
			f.File = filepath.Join(st.Name(), rel)
		}
		misfit = append(misfit, f)
		bad = bad || f.Severity == packs.SeverityError
	}
	if bad {
		return &MisfitError{Pack: st.Name(), Findings: misfit}
	}
	return nil
}

// host describes this machine and the installed packs for packs.CheckHost
// at install, where an unmet requirement is an error.
func (a *App) host() (packs.Host, error) {
	return Host(a.Home.Dir(), a.getenv()("PATH"), true)
}

// Host describes this machine and the packs installed in home ("" for
// none) for packs.CheckHost: native commands run on hostfns.SafePath, so a
// tool a pack runs is looked for there; path (the person's PATH) for the
// others. install makes an unmet requirement an error (the installer)
// rather than a warning (packs validate).
func Host(home, path string, install bool) (packs.Host, error) {
	h := packs.Host{OS: goruntime.GOOS, Arch: goruntime.GOARCH, ExecPath: hostfns.SafePath, Path: path, Install: install}
	if home == "" {
		return h, nil
	}
	installed, err := dist.InstalledIn(home)
	if err != nil {
		return h, err
	}
	h.Installed = installed
	return h, nil
}

// preApproved lists the requested capabilities the policy grants ref
// without asking, in the order of capability.All().
func (a *App) preApproved(ref capability.PackRef, req capability.Request) []capability.Name {
	var out []capability.Name
	for _, n := range req.Names() {
		if a.Policy.PreApproved(ref, n) {
			out = append(out, n)
		}
	}
	return out
}

// decide asks c, refusing when there is no one to ask.
func decide(ctx context.Context, c Consent, o Offer) ([]capability.UserGrant, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nobody can consent to installing %s here", ErrDeclined, o.Staged.Name())
	}
	return c.Consent(ctx, o)
}

// commitOptions say how commit records an install.
type commitOptions struct {
	by       string
	person   string // who installs (InstallRequest.Person, Issuer)
	issuer   string
	pre      []capability.Name
	previous *dist.LockEntry
	// keepRows keeps the pack's grant rows in packs.db (a built-in's
	// update, whose rows pinGrants already rewrote) instead of replacing
	// them with the grants made now.
	keepRows bool
	// auto: the binary installs the pack (a built-in new to this state
	// directory), not the person. In a shared store that records other
	// content under its name, it is installed here only (see commit).
	auto bool
}

// commit is the one place a staged pack is committed into the state
// directory: the journaled commit (packs.lock and the pack's folder
// together), its packs.db row, the person's grants in packs.db and their
// mirror in packs.lock, the Installed hooks and the audit row.
// internal/gatecheck proves that nothing else in the module commits.
//
// In a store replicas share, the store's record decides what the install
// does to it. Content the store already records under the name (installed
// on another replica) is materialised here: the store's grants stay, and
// the grants made now are added to them. Other content is new content for
// every replica, so a new decision, as a reinstall is on one machine: its
// row and grants replace the store's, and the replicas still holding the
// older content refuse it until they install this one (checkStoreContent).
// A built-in the binary installs (opt.auto) never replaces another
// content's record: this replica, of another version of packs, installs
// it here only, and refuses it until the replicas run one version.
func (a *App) commit(ctx context.Context, st *dist.Staged, grants []capability.UserGrant, opt commitOptions) (InstallResult, error) {
	materialise, localOnly := false, false
	if a.shared {
		r, err := a.DB.Pack(ctx, st.Name())
		switch {
		case err == nil:
			materialise = r.Integrity == st.Integrity
			localOnly = !materialise && opt.auto
		case !errors.Is(err, store.ErrPackNotFound):
			return InstallResult{}, err
		}
	}
	e, err := st.CommitGrants(ctx, grants)
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Entry: e, Pack: st.Pack, PreApproved: opt.pre, Previous: opt.previous}
	switch {
	case localOnly:
		a.Logger.Warn("app: the shared store records other content for a built-in pack: it is installed on this replica only, and refused here until the replicas run one version of packs", "pack", e.Name, "integrity", e.Integrity)
	case materialise:
		// A built-in's update keeps the store's rows as they are; a grant
		// the store holds already, live and the same, is not written
		// again (which would restart its review: KeepGrant).
		add := grants
		if opt.keepRows {
			add = nil
		}
		var have []store.GrantRow
		if len(add) > 0 {
			if have, err = a.DB.Grants(ctx, e.Name); err != nil {
				return res, err
			}
		}
		for _, u := range add {
			if slices.ContainsFunc(have, func(r store.GrantRow) bool {
				return r.Chat == "" && r.RevokedAt.IsZero() && r.Scope == u.Scope && r.Capability == u.Capability && slices.Equal(r.Resources, u.Resources)
			}) {
				continue
			}
			if err := a.DB.PutGrant(ctx, e.Name, "", u); err != nil {
				return res, fmt.Errorf("app: %s is installed, but its grants were not recorded: grant %s again (packs grant %s %s): %w", e.Name, u.Capability, e.Name, u, err)
			}
		}
		e, err = a.MirrorGrants(ctx, e.Name)
	default:
		if err := a.DB.PutPack(ctx, packRow(e)); err != nil {
			return res, fmt.Errorf("app: %s is installed, but packs.db was not updated (the next start repairs it): %w", e.Name, err)
		}
		if opt.keepRows {
			e, err = a.MirrorGrants(ctx, e.Name)
		} else {
			e, err = a.ReplaceGrants(ctx, e.Name, grants)
		}
	}
	if err != nil {
		return res, err
	}
	res.Entry = e
	for _, hook := range a.Installed {
		if err := hook(ctx, e); err != nil {
			return res, err
		}
	}
	return res, a.recordInstall(ctx, e, grants, opt)
}

// recordInstall writes the audit row of an install.
func (a *App) recordInstall(ctx context.Context, e dist.LockEntry, grants []capability.UserGrant, opt commitOptions) error {
	log, err := a.OpenAudit(ctx)
	if err != nil {
		return fmt.Errorf("app: %s is installed, but the audit log cannot record it: %w", e.Name, err)
	}
	in := audit.Install{Pack: e.Name, Version: e.Version, Source: e.Source, Integrity: e.Integrity, Resolved: e.Resolved,
		Signer: e.Signer, By: opt.by, Person: opt.person, Issuer: opt.issuer, Time: e.Installed}
	if opt.previous != nil {
		in.Previous = opt.previous.Integrity
	}
	for _, u := range grants {
		in.Granted = append(in.Granted, u.String())
	}
	for _, n := range opt.pre {
		in.PreApproved = append(in.PreApproved, string(n))
	}
	slices.Sort(in.Granted)
	err = log.RecordInstall(ctx, in)
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("app: %s is installed, but the audit log cannot record it: %w", e.Name, err)
	}
	return nil
}

// Granting is the Consent that installs the pack granting each of names
// whole (everything the pack asks for under it), persistently: the web
// app's "grant" field, and scripts' and tests' fixed answers. A name the
// pack does not ask for is refused (dist.ErrNotRequested), as the commit
// would refuse it.
func Granting(names ...capability.Name) Consent {
	return ConsentFunc(func(_ context.Context, o Offer) ([]capability.UserGrant, error) {
		out := make([]capability.UserGrant, 0, len(names))
		for _, n := range names {
			if !o.Request.Has(n) {
				return nil, fmt.Errorf("%w: %s does not ask for %s: grant only what it asks for", dist.ErrNotRequested, o.Staged.Name(), n)
			}
			out = append(out, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
		}
		return out, nil
	})
}
