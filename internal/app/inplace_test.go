package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
)

// skill writes a knowledge-only skill called name (with a description
// that says which copy it is) into root.
func skill(t *testing.T, root, name, which string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: " + which + "\n---\nBody.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeEnv is an environment of HOME and PACKS_PATH only: no test reads the
// machine's own home.
func fakeEnv(home, path string) func(string) string {
	return func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PACKS_PATH":
			return path
		}
		return ""
	}
}

// TestDiscoverOrder: the given folders come first ($PACKS_PATH, then
// config.toml's [discover] paths), then the project folders below the
// working directory (.claude/skills before .agents/skills), then the user
// folders (~/.claude, ~/.agents, ~/.codex); the first pack of a name wins
// and the later ones are hidden by it. Missing usual folders are left out.
func TestDiscoverOrder(t *testing.T) {
	state, user, wd, given, configured := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	a := open(t, state)
	a.Getenv = fakeEnv(user, given)
	if err := os.WriteFile(filepath.Join(state, "config.toml"), []byte("[llm]\nmodel = \"m\"\n\n[discover]\npaths = [\""+configured+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	skill(t, given, "alpha", "given")
	skill(t, configured, "alpha", "configured")
	skill(t, configured, "beta", "configured")
	skill(t, filepath.Join(wd, ".claude", "skills"), "beta", "project claude")
	skill(t, filepath.Join(wd, ".claude", "skills"), "gamma", "project claude")
	skill(t, filepath.Join(wd, ".agents", "skills"), "gamma", "project agents")
	skill(t, filepath.Join(wd, ".agents", "skills"), "delta", "project agents")
	skill(t, filepath.Join(user, ".claude", "skills"), "delta", "user claude")
	skill(t, filepath.Join(user, ".codex", "skills"), "epsilon", "user codex")
	skill(t, filepath.Join(user, ".codex", "skills"), "zeta", "user codex")
	skill(t, filepath.Join(user, ".agents", "skills"), "zeta", "user agents")

	roots, err := a.DiscoverRoots(wd, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []RootKind
	for _, r := range roots {
		kinds = append(kinds, r.Kind)
	}
	wantKinds := []RootKind{RootGiven, RootGiven, RootProject, RootProject, RootUser, RootUser, RootUser}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("root kinds = %v, want %v (%v)", kinds, wantKinds, roots)
	}

	found, _, err := a.InPlacePacks(context.Background(), wd, nil)
	if err != nil {
		t.Fatal(err)
	}
	winners := map[string]string{}
	hidden := map[string]int{}
	for _, p := range found {
		if p.HiddenBy != "" {
			hidden[p.Name]++
			continue
		}
		winners[p.Name] = p.Description + "/" + string(p.Kind)
	}
	want := map[string]string{
		"alpha": "given/given", "beta": "configured/given", "gamma": "project claude/project",
		"delta": "project agents/project", "epsilon": "user codex/user", "zeta": "user agents/user",
	}
	for name, w := range want {
		if winners[name] != w {
			t.Errorf("%s: found %q, want %q", name, winners[name], w)
		}
	}
	if hidden["alpha"] != 1 || hidden["beta"] != 1 || hidden["gamma"] != 1 || hidden["delta"] != 1 || hidden["zeta"] != 1 {
		t.Errorf("hidden: %v", hidden)
	}
}

// TestDiscoverSwitchedOff: config.toml's [discover] can leave the project
// or user folders out, and the enterprise policy can too, whatever the
// config says; an unknown key in [discover] is an error naming the file.
func TestDiscoverSwitchedOff(t *testing.T) {
	state, user, wd := t.TempDir(), t.TempDir(), t.TempDir()
	skill(t, filepath.Join(wd, ".agents", "skills"), "proj", "p")
	skill(t, filepath.Join(user, ".claude", "skills"), "mine", "u")
	names := func(a *App) []string {
		t.Helper()
		found, _, err := a.InPlacePacks(context.Background(), wd, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range found {
			out = append(out, p.Name)
		}
		return out
	}
	config := func(s string) {
		if err := os.WriteFile(filepath.Join(state, "config.toml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := open(t, state)
	a.Getenv = fakeEnv(user, "")
	if got := names(a); !slices.Equal(got, []string{"proj", "mine"}) {
		t.Errorf("by default: %v", got)
	}
	config("[discover]\nuser = false\n")
	if got := names(a); !slices.Equal(got, []string{"proj"}) {
		t.Errorf("config user = false: %v", got)
	}
	config("[discover]\nproject = false\n")
	if got := names(a); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("config project = false: %v", got)
	}
	config("[discover]\nuser = true\n")
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("[discover]\nuser = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := capability.FindPolicy(pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Policy = p
	if got := names(a); !slices.Equal(got, []string{"proj"}) {
		t.Errorf("policy user = false over config user = true: %v", got)
	}
	config("[discover]\nusers = false\n")
	if _, err := a.DiscoverRoots(wd, nil); err == nil {
		t.Error("an unknown [discover] key was accepted")
	}
}

// TestInPlaceGrantsBoundToFolder: a pack used in place holds only what
// the person granted its folder, at its content: not an installed pack's
// grants, nothing after an edit, and InPlaceChange says what changed.
func TestInPlaceGrantsBoundToFolder(t *testing.T) {
	ctx := context.Background()
	state, user, wd := t.TempDir(), t.TempDir(), t.TempDir()
	a := open(t, state)
	a.Getenv = fakeEnv(user, "")
	dir := writePack(t, "weather", "1.0.0")
	skills := filepath.Join(user, ".claude", "skills")
	if err := os.MkdirAll(skills, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(skills, "weather")); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(skills, "weather")

	if _, _, err := a.InPlace(ctx, wd, "nothing"); !errors.Is(err, ErrNotFound) || !errors.Is(err, dist.ErrNotInstalled) {
		t.Errorf("a name found nowhere: %v", err)
	}
	p, ref, err := a.InPlace(ctx, wd, "weather")
	if err != nil {
		t.Fatal(err)
	}
	if ref.InPlace == "" || ref.Digest == "" || p.Dir != dir {
		t.Fatalf("ref = %+v, dir %s", ref, p.Dir)
	}
	held := func(ref capability.PackRef) int {
		t.Helper()
		u, err := a.Grants().PeekGrants(ctx, ref, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(u)
	}
	// An installed pack's grants of the same name are not the folder's.
	if err := a.DB.PutGrant(ctx, "weather", "", capability.UserGrant{Capability: capability.Network, Scope: capability.ScopePersistent}); err != nil {
		t.Fatal(err)
	}
	if n := held(ref); n != 0 {
		t.Errorf("the folder holds %d grants before any was made to it", n)
	}
	if _, _, err := a.GrantInPlace(ctx, wd, "weather", "", whole(capability.EnvRead)); err == nil {
		t.Error("a grant of a capability the pack does not ask for was recorded")
	}
	if _, ref, err = a.GrantInPlace(ctx, wd, "weather", "", whole(capability.Network)); err != nil {
		t.Fatal(err)
	}
	if n := held(ref); n != 1 {
		t.Errorf("after the grant: %d grants", n)
	}
	if _, ok, _ := a.InPlaceChange(ctx, ref.InPlace, ref.Digest); ok {
		t.Error("a change reported before any edit")
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, now, err := a.InPlace(ctx, wd, "weather")
	if err != nil {
		t.Fatal(err)
	}
	if now.Digest == ref.Digest || held(now) != 0 {
		t.Errorf("after an edit: digest %s (was %s), %d grants held", now.Digest, ref.Digest, held(now))
	}
	d, ok, err := a.InPlaceChange(ctx, now.InPlace, now.Digest)
	if err != nil || !ok || !slices.Equal(d.Added, []string{"notes.md"}) || len(d.Changed)+len(d.Removed) != 0 {
		t.Errorf("InPlaceChange = %+v, %v, %v", d, ok, err)
	}
}
