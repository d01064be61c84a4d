package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// RootKind says where a folder of skills comes from, which decides its
// place in the discovery order (docs/inplace.md).
type RootKind string

const (
	RootGiven   RootKind = "given"   // packs list --dir, $PACKS_PATH, [discover] paths
	RootProject RootKind = "project" // the usual folders below the working directory
	RootUser    RootKind = "user"    // the usual folders under the person's home
)

// The usual folders people keep Agent Skills in: Claude Code's and the
// shared .agents convention in a project and in the home, and Codex's in
// the home. Project folders are looked in before user folders.
var (
	ProjectSkillDirs = []string{".claude/skills", ".agents/skills"}
	UserSkillDirs    = []string{".claude/skills", ".agents/skills", ".codex/skills"}
)

// Root is one folder discovery scans.
type Root struct {
	Dir  string // absolute
	Kind RootKind
}

// DiscoverConfig is the [discover] table of <home>/config.toml.
type DiscoverConfig struct {
	Paths   []string `toml:"paths"`   // folders of skills scanned first, after $PACKS_PATH
	Project *bool    `toml:"project"` // false: not the usual folders below the working directory
	User    *bool    `toml:"user"`    // false: not the usual folders under the home
}

// configFileName is the config file of the state directory.
const configFileName = "config.toml"

// DiscoverConfig reads [discover] of the state directory's config.toml
// (the zero value when the file or the table is absent). An unknown key
// in [discover] is an error naming the file and what to fix; the other
// tables belong to their own readers.
func (a *App) DiscoverConfig() (DiscoverConfig, error) {
	if a.Home == nil {
		return DiscoverConfig{}, nil
	}
	path := filepath.Join(a.Home.Dir(), configFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return DiscoverConfig{}, nil
	}
	if err != nil {
		return DiscoverConfig{}, fmt.Errorf("app: %w", err)
	}
	var f struct {
		Discover DiscoverConfig `toml:"discover"`
	}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		return DiscoverConfig{}, fmt.Errorf("app: %s: %w: fix the TOML", path, err)
	}
	if d, ok := raw["discover"].(map[string]any); ok {
		for k := range d {
			if k != "paths" && k != "project" && k != "user" {
				return DiscoverConfig{}, fmt.Errorf("app: %s: [discover] has no key %q: use paths, project or user", path, k)
			}
		}
	}
	if err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return DiscoverConfig{}, fmt.Errorf("app: %s: [discover]: %w: paths is a list of folders, project and user are true or false", path, err)
	}
	return f.Discover, nil
}

// DiscoverRoots lists the folders discovery scans, in order: the given
// folders (extra, then $PACKS_PATH, then [discover] paths), then the
// project folders below wd, then the user folders under $HOME. The usual
// folders are left out when config.toml's [discover] or the enterprise
// policy's switches their kind off, and when they do not exist; a folder
// is listed once, at its first place. "~/" in a given folder is $HOME.
func (a *App) DiscoverRoots(wd string, extra []string) ([]Root, error) {
	cfg, err := a.DiscoverConfig()
	if err != nil {
		return nil, err
	}
	home := a.getenv()("HOME")
	var out []Root
	seen := map[string]bool{}
	add := func(dir string, kind RootKind, mustExist bool) {
		if rest, ok := strings.CutPrefix(dir, "~"); ok && home != "" && (rest == "" || rest[0] == '/') {
			dir = filepath.Join(home, rest)
		}
		abs, err := filepath.Abs(dir)
		if err != nil || seen[abs] {
			return
		}
		if mustExist {
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return
			}
		}
		seen[abs] = true
		out = append(out, Root{Dir: abs, Kind: kind})
	}
	given := slices.Clone(extra)
	given = append(given, filepath.SplitList(a.getenv()("PACKS_PATH"))...)
	given = append(given, cfg.Paths...)
	for _, d := range given {
		if d != "" {
			add(d, RootGiven, false)
		}
	}
	if wd != "" && (cfg.Project == nil || *cfg.Project) && a.Policy.DiscoverProject() {
		for _, d := range ProjectSkillDirs {
			add(filepath.Join(wd, d), RootProject, true)
		}
	}
	if home != "" && (cfg.User == nil || *cfg.User) && a.Policy.DiscoverUser() {
		for _, d := range UserSkillDirs {
			add(filepath.Join(home, d), RootUser, true)
		}
	}
	return out, nil
}

// InPlacePack is a pack discovered in a skills folder, as list, info and
// the web app show it.
type InPlacePack struct {
	packs.Summary
	Kind RootKind
	// HiddenBy is what hides it: "installed" (a pack of that name is
	// installed) or the folder of the pack of that name found first.
	HiddenBy string
	Pack     *packs.Pack // nil when it does not load
	LoadErr  error
}

// Attachable reports whether the pack can be attached in place: it loads,
// nothing hides it, and the policy does not block it.
func (p InPlacePack) Attachable(pol *capability.Policy) error {
	switch {
	case p.HiddenBy == "installed":
		return fmt.Errorf("app: %s is installed: the installed pack is the one attached", p.Name)
	case p.HiddenBy != "":
		return fmt.Errorf("app: %s in %s is hidden by %s, found first", p.Name, p.Dir, p.HiddenBy)
	case p.LoadErr != nil:
		return p.LoadErr
	}
	if err := p.Pack.Attachable(); err != nil {
		return err
	}
	return pol.Blocked(capability.PackRef{Name: p.Name})
}

// Discoverer is an App for discovery alone, where no state directory
// exists yet (packs list before anything was added): nothing is
// installed, and config.toml is absent.
func Discoverer(pol *capability.Policy, getenv func(string) string) *App {
	return &App{Policy: pol, Getenv: getenv}
}

// InPlacePacks discovers the packs of DiscoverRoots(wd, extra), in order,
// each loaded, with the ones hidden by an installed pack or an earlier
// one of the same name marked so. Findings are discovery's warnings.
func (a *App) InPlacePacks(ctx context.Context, wd string, extra []string) ([]InPlacePack, []packs.Finding, error) {
	roots, err := a.DiscoverRoots(wd, extra)
	if err != nil || len(roots) == 0 {
		return nil, nil, err
	}
	dirs := make([]string, len(roots))
	for i, r := range roots {
		dirs[i] = r.Dir
	}
	res, err := packs.Discover(ctx, dirs, packs.DiscoverOptions{})
	if err != nil {
		return nil, nil, err
	}
	kind := func(root string) RootKind {
		for _, r := range roots {
			if r.Dir == root {
				return r.Kind
			}
		}
		return RootGiven
	}
	var out []InPlacePack
	for _, s := range res.Packs {
		p := InPlacePack{Summary: s, Kind: kind(s.Root)}
		if a.Home != nil {
			if _, err := a.Home.Entry(s.Name); err == nil {
				p.HiddenBy = "installed"
			}
		}
		p.Pack, p.LoadErr = packs.Load(s.Dir, packs.LoadOptions{})
		out = append(out, p)
	}
	for _, c := range res.Collisions {
		root := ""
		for _, r := range roots {
			if strings.HasPrefix(c.Loser, r.Dir+string(filepath.Separator)) && len(r.Dir) > len(root) {
				root = r.Dir
			}
		}
		out = append(out, InPlacePack{Summary: packs.Summary{Name: c.Name, Dir: c.Loser, Root: root}, Kind: kind(root), HiddenBy: c.Winner})
	}
	return out, res.Findings, nil
}

// ErrNotFound: no pack of that name is installed or discovered.
var ErrNotFound = errors.New("app: no such pack")

// InPlace loads the pack name used in place: the first discovered in
// DiscoverRoots(wd, nil), not installed. Its reference carries the
// folder's digest now and the folder (capability.PackRef.InPlace): the
// pipeline checks the folder against that digest at every call, and the
// person's grants of that folder hold only at that content. A name found
// nowhere is an error wrapping ErrNotFound and dist.ErrNotInstalled.
func (a *App) InPlace(ctx context.Context, wd, name string) (*packs.Pack, capability.PackRef, error) {
	found, _, err := a.InPlacePacks(ctx, wd, nil)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	for _, p := range found {
		if p.Name != name || p.HiddenBy != "" {
			continue
		}
		if p.LoadErr != nil {
			return nil, capability.PackRef{}, p.LoadErr
		}
		return loadInPlace(p.Dir)
	}
	roots, _ := a.DiscoverRoots(wd, nil)
	where := make([]string, len(roots))
	for i, r := range roots {
		where[i] = r.Dir
	}
	return nil, capability.PackRef{}, fmt.Errorf("%w: %w: %s is neither installed nor in a skills folder (looked in: %s): add it with packs add, or put it in one of them",
		ErrNotFound, dist.ErrNotInstalled, name, orNone(strings.Join(where, ", ")))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// loadInPlace loads the pack in dir with the reference of its content now.
// The folder is hashed before and after it is loaded: one that changed in
// between is refused, so the pack loaded is the content the digest names.
func loadInPlace(dir string) (*packs.Pack, capability.PackRef, error) {
	before, err := packs.Digest(dir)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	p, err := packs.Load(dir, packs.LoadOptions{})
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	after, err := packs.Digest(dir)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	if after != before {
		return nil, capability.PackRef{}, fmt.Errorf("%w: %s changed while it was loaded: try again once it is saved", packs.ErrModified, dir)
	}
	key, err := inPlaceKey(dir)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	return p, capability.PackRef{Name: p.Name, Digest: before, InPlace: key}, nil
}

// inPlaceKey is the folder as in-place grants are keyed: absolute, with
// symlinks resolved, so the same folder reached two ways is one.
func inPlaceKey(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	return real, nil
}

// GrantInPlace records what the person granted the pack name used in
// place, bound to its folder's content now: persistent grants, and chat
// grants in chat. Each grant must fit what the pack asks for. Grants made
// earlier at another content of the folder go (store.PutInPlaceGrants).
// It returns the pack and its reference, for showing what a call holds.
func (a *App) GrantInPlace(ctx context.Context, wd, name, chat string, grants []capability.UserGrant) (*packs.Pack, capability.PackRef, error) {
	p, ref, err := a.InPlace(ctx, wd, name)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	for _, u := range grants {
		if err := capability.CheckGrant(p.Request(), u); err != nil {
			return nil, capability.PackRef{}, err
		}
	}
	sums, err := dist.FileSums(p.Dir)
	if err != nil {
		return nil, capability.PackRef{}, err
	}
	if now, err := packs.Digest(p.Dir); err != nil || now != ref.Digest {
		return nil, capability.PackRef{}, fmt.Errorf("%w: %s changed while it was granted: nothing was recorded; grant again once it is saved", packs.ErrModified, p.Dir)
	}
	c := store.InPlaceContent{Dir: ref.InPlace, Name: p.Name, Digest: ref.Digest, Files: sums}
	if err := a.DB.PutInPlaceGrants(ctx, c, chat, grants); err != nil {
		return nil, capability.PackRef{}, err
	}
	return p, ref, nil
}

// InPlaceChange says how the folder of an in-place pack differs from the
// content its grants were made at: ok is false when it has no grants or
// they were made at its content now (digest).
func (a *App) InPlaceChange(ctx context.Context, dir, digest string) (dist.TreeDiff, bool, error) {
	c, ok, err := a.DB.InPlaceGranted(ctx, dir)
	if err != nil || !ok || c.Digest == digest {
		return dist.TreeDiff{}, false, err
	}
	now, err := dist.FileSums(dir)
	if err != nil {
		return dist.TreeDiff{}, false, err
	}
	return dist.DiffSums(c.Files, now), true, nil
}

// inPlaceGrantsFor returns the persistent grants the person made to the
// folder source used in place, when they were made at content digest:
// what an install of that folder keeps (Offer.InPlace). The folder's key
// is returned too, for forgetting them once installed.
func (a *App) inPlaceGrantsFor(ctx context.Context, source, digest string) ([]capability.UserGrant, string, error) {
	fi, err := os.Stat(source)
	if err != nil || !fi.IsDir() {
		return nil, "", nil
	}
	key, err := inPlaceKey(source)
	if err != nil {
		return nil, "", nil
	}
	c, ok, err := a.DB.InPlaceGranted(ctx, key)
	if err != nil || !ok || c.Digest != digest {
		return nil, "", err
	}
	rows, err := a.DB.InPlaceGrantRows(ctx, key)
	if err != nil {
		return nil, "", err
	}
	var out []capability.UserGrant
	for _, r := range rows {
		if r.Scope == capability.ScopePersistent {
			out = append(out, r.UserGrant())
		}
	}
	return out, key, nil
}

// InPlaceCatalog serves packs used in place, for a chat's catalog after
// the installed ones (chat.Catalogs): Pack is App.InPlace in WorkDir.
type InPlaceCatalog struct {
	App     *App
	WorkDir string
}

// Pack implements chat.Catalog.
func (c InPlaceCatalog) Pack(ctx context.Context, name string) (*packs.Pack, capability.PackRef, error) {
	return c.App.InPlace(ctx, c.WorkDir, name)
}

// Changed implements chat.ChangeTeller: what changed in the folder of the
// in-place pack ref since the person granted it, in one line; "" when it
// has no grants or they were made at its content now.
func (c InPlaceCatalog) Changed(ctx context.Context, ref capability.PackRef) string {
	d, ok, err := c.App.InPlaceChange(ctx, ref.InPlace, ref.Digest)
	if err != nil || !ok {
		return ""
	}
	return d.String()
}

// RevokeInPlace withdraws every grant of n to the pack name used in
// place (its folder, whatever its content), and returns how many there
// were.
func (a *App) RevokeInPlace(ctx context.Context, wd, name string, n capability.Name) (int64, error) {
	found, _, err := a.InPlacePacks(ctx, wd, nil)
	if err != nil {
		return 0, err
	}
	for _, p := range found {
		if p.Name != name || p.HiddenBy != "" {
			continue
		}
		key, err := inPlaceKey(p.Dir)
		if err != nil {
			return 0, err
		}
		return a.DB.RevokeInPlaceGrant(ctx, key, n)
	}
	return 0, fmt.Errorf("%w: %w: %s", ErrNotFound, dist.ErrNotInstalled, name)
}

// inPlaceAttachable reports whether name is a pack used in place (in
// WorkDir's and the home's skills folders) that can be attached.
func (a *App) inPlaceAttachable(ctx context.Context, name string) (bool, error) {
	found, _, err := a.InPlacePacks(ctx, a.WorkDir, nil)
	if err != nil {
		return false, err
	}
	for _, p := range found {
		if p.Name == name && p.HiddenBy == "" {
			return p.Attachable(a.Policy) == nil, nil
		}
	}
	return false, nil
}

// Ref loads the pack p again with the reference of its folder's content
// now, as InPlace does, without discovering it again.
func (p InPlacePack) Ref() (*packs.Pack, capability.PackRef, error) { return loadInPlace(p.Dir) }
