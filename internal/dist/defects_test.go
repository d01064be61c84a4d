package dist

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/packs"
)

// TestHexRefIsACommit: a #REF that looks like a commit resolves as a
// commit, even when the host advertises a branch or tag of that very name
// (a compromised host pushing a branch named after the pinned hash); a hex
// name that is no commit is refused, never followed as a branch or tag.
func TestHexRefIsACommit(t *testing.T) {
	fx := newGitFixture(t)
	root := t.TempDir()
	work := filepath.Join(root, "work")
	gitRun(t, root, "clone", "-q", fx.bare, work)
	// The attacker's branches: named after v1's hash (and a prefix of it),
	// holding v2's content; and a hex-named branch that is no commit.
	gitRun(t, work, "branch", fx.v1[:12], fx.v2)
	gitRun(t, work, "branch", fx.v1, fx.v2)
	gitRun(t, work, "tag", fx.v1[:8], fx.v2)
	gitRun(t, work, "branch", "abcdef0123", fx.v2)
	gitRun(t, work, "push", "-q", "origin", fx.v1[:12], fx.v1, "abcdef0123", "refs/tags/"+fx.v1[:8])
	base := "git+file://" + filepath.ToSlash(fx.bare)
	for _, ref := range []string{fx.v1, fx.v1[:12], fx.v1[:8], fx.v1[:4]} {
		t.Run(ref, func(t *testing.T) {
			h := openTestHome(t, t.TempDir())
			e, err := stageSource(t, h, base+"#"+ref, FetchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if e.Resolved != "git:"+fx.v1 || e.Version != "1.0.0" {
				t.Errorf("#%s resolved to %s (version %s), want the commit %s", ref, e.Resolved, e.Version, fx.v1)
			}
		})
	}
	h := openTestHome(t, t.TempDir())
	if _, err := stageSource(t, h, base+"#abcdef0123", FetchOptions{}); !errors.Is(err, ErrRefNotFound) {
		t.Errorf("a hex-named branch that is no commit: err = %v, want ErrRefNotFound", err)
	}
	// Named in full, such a branch is what the person asked for.
	e, err := stageSource(t, openTestHome(t, t.TempDir()), base+"#refs/heads/abcdef0123", FetchOptions{})
	if err != nil || e.Resolved != "git:"+fx.v2 {
		t.Errorf("#refs/heads/abcdef0123: %s, %v; want the branch's commit %s", e.Resolved, err, fx.v2)
	}
}

// TestIndexRefusesLocalGit: an index entry may not name a repository on
// this machine, as it may not name a path.
func TestIndexRefusesLocalGit(t *testing.T) {
	doc := "version = 1\n[packs]\nweather = \"git+file:///srv/weather.git\"\n"
	if _, err := ParseIndex("index.toml", []byte(doc)); !errors.Is(err, ErrIndex) {
		t.Errorf("ParseIndex(git+file) err = %v, want ErrIndex", err)
	}
}

// TestValidateRefusesEscapingSymlink: validate and add agree: a symlink
// that leaves the pack is an error of the pack's files (packs.CheckShipped), as
// Stage refuses it.
func TestValidateRefusesEscapingSymlink(t *testing.T) {
	for _, target := range []string{"../../outside.txt", "/etc/passwd"} {
		dir := filepath.Join(t.TempDir(), "weather")
		writeTree(t, dir, packFiles("weather", "1.0.0"))
		if err := os.Symlink(target, filepath.Join(dir, "docs-link")); err != nil {
			t.Fatal(err)
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, f := range packs.CheckShipped(dir, p, nil) {
			if f.Severity == packs.SeverityError {
				rules = append(rules, f.Rule)
			}
		}
		if len(rules) != 1 || rules[0] != "path-escape" {
			t.Errorf("symlink to %s: errors %v, want [path-escape]", target, rules)
		}
		h := openTestHome(t, t.TempDir())
		if _, err := h.Stage(t.Context(), dir, StageOptions{}); !errors.Is(err, packs.ErrPathEscape) {
			t.Errorf("Stage with a symlink to %s: err = %v, want ErrPathEscape", target, err)
		}
	}
}
