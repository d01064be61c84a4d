package packs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func packNames(res DiscoverResult) []string {
	var out []string
	for _, p := range res.Packs {
		out = append(out, p.Name)
	}
	return out
}

func discoverRules(res DiscoverResult) []string {
	var out []string
	for _, f := range res.Findings {
		out = append(out, string(f.Severity)+":"+f.Rule)
	}
	return out
}

// TestDiscoverPrecedence: roots are scanned in order, the first pack of a
// name wins, and the collision is recorded.
func TestDiscoverPrecedence(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	writePackFiles(t, first, map[string]string{
		"shared/SKILL.md":       skillMD("shared"),
		"alpha/SKILL.md":        skillMD("alpha"),
		"alpha/tools.json":      "not even json",
		"alpha/skill.toml":      "[broken",
		"notes.md":              "a file at the root is not a pack",
		"plain-folder/x.txt":    "no entry doc",
		"readme-only/README.md": "# Just a readme\n\nNo frontmatter, so not a pack.\n",
	})
	writePackFiles(t, second, map[string]string{
		"shared/SKILL.md": skillMD("shared"),
		"beta/README.md":  skillMD("beta"),
	})
	res, err := Discover(context.Background(), []string{first, second}, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := packNames(res), []string{"alpha", "shared", "beta"}; !slices.Equal(got, want) {
		t.Errorf("packs = %v, want %v", got, want)
	}
	if len(res.Collisions) != 1 {
		t.Fatalf("collisions = %+v", res.Collisions)
	}
	c := res.Collisions[0]
	if c.Name != "shared" || c.Winner != filepath.Join(first, "shared") || c.Loser != filepath.Join(second, "shared") {
		t.Errorf("collision = %+v", c)
	}
	if got := discoverRules(res); !slices.Equal(got, []string{"warning:name-collision"}) {
		t.Errorf("findings = %v (discovery reads frontmatter only: a broken tools.json or skill.toml is not its business)", got)
	}
	alpha := res.Packs[0]
	if !alpha.HasTools || alpha.Root != first || alpha.Dir != filepath.Join(first, "alpha") || alpha.EntryDoc != "SKILL.md" || alpha.Description != "A test pack." {
		t.Errorf("alpha = %+v", alpha)
	}
	if beta := res.Packs[2]; beta.EntryDoc != "README.md" || beta.HasTools || beta.Root != second {
		t.Errorf("beta = %+v", beta)
	}
}

func TestDiscoverInvalidAndMissing(t *testing.T) {
	root := t.TempDir()
	writePackFiles(t, root, map[string]string{
		"good/SKILL.md":    skillMD("good"),
		"wrong/SKILL.md":   skillMD("other"),
		"nofront/SKILL.md": "# no frontmatter\n",
	})
	missing := filepath.Join(root, "does-not-exist")
	res, err := Discover(context.Background(), []string{missing, root}, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := packNames(res); !slices.Equal(got, []string{"good"}) {
		t.Errorf("packs = %v: invalid packs must be excluded", got)
	}
	want := []string{"warning:root-missing", "error:frontmatter-missing", "error:name-mismatch"}
	if got := discoverRules(res); !slices.Equal(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
	if res.Findings[0].File != missing {
		t.Errorf("root-missing names %q", res.Findings[0].File)
	}
}

// TestDiscoverDepth: MaxDepth 1 looks at the root's children only; deeper
// scans do not descend into packs; skipped folders are skipped.
func TestDiscoverDepth(t *testing.T) {
	root := t.TempDir()
	writePackFiles(t, root, map[string]string{
		"top/SKILL.md":                     skillMD("top"),
		"top/nested/SKILL.md":              skillMD("nested"),
		"group/inner/SKILL.md":             skillMD("inner"),
		"group/deeper/more/SKILL.md":       skillMD("more"),
		".git/hooked/SKILL.md":             skillMD("hooked"),
		"node_modules/dep/SKILL.md":        skillMD("dep"),
		"group/node_modules/dep2/SKILL.md": skillMD("dep2"),
	})
	cases := []struct {
		depth int
		packs []string
		rules []string
	}{
		{1, []string{"top"}, []string{"warning:discover-depth"}},
		{2, []string{"inner", "top"}, []string{"warning:discover-depth"}},
		{3, []string{"more", "inner", "top"}, nil},
	}
	for _, tc := range cases {
		res, err := Discover(context.Background(), []string{root}, DiscoverOptions{MaxDepth: tc.depth})
		if err != nil {
			t.Fatal(err)
		}
		if got := packNames(res); !slices.Equal(got, tc.packs) {
			t.Errorf("depth %d: packs = %v, want %v", tc.depth, got, tc.packs)
		}
		if got := discoverRules(res); !slices.Equal(got, tc.rules) {
			t.Errorf("depth %d: findings = %v, want %v", tc.depth, got, tc.rules)
		}
	}
}

func TestDiscoverMaxPacks(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+"/SKILL.md"] = skillMD(n)
	}
	writePackFiles(t, root, files)
	res, err := Discover(context.Background(), []string{root, root}, DiscoverOptions{MaxPacks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := packNames(res); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("packs = %v", got)
	}
	if got := discoverRules(res); !slices.Equal(got, []string{"warning:discover-limit"}) {
		t.Errorf("findings = %v", got)
	}
}

// TestDiscoverSymlinks: a link that stays inside the scanned root is
// followed (once), one that leaves it is not.
func TestDiscoverSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writePackFiles(t, root, map[string]string{"store/kept/SKILL.md": skillMD("kept")})
	writePackFiles(t, outside, map[string]string{"stranger/SKILL.md": skillMD("stranger")})
	for name, target := range map[string]string{
		"kept":     filepath.Join(root, "store", "kept"),
		"stranger": filepath.Join(outside, "stranger"),
		"dangling": filepath.Join(root, "nothing"),
		"self":     root,
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Discover(context.Background(), []string{root}, DiscoverOptions{MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := packNames(res); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("packs = %v", got)
	}
	if res.Packs[0].Dir != filepath.Join(root, "kept") {
		t.Errorf("dir = %s", res.Packs[0].Dir)
	}
	if got := discoverRules(res); !slices.Equal(got, []string{"warning:path-escape"}) {
		t.Errorf("findings = %v", got)
	}
	if len(res.Collisions) != 0 {
		t.Errorf("one folder reached twice is not a collision: %+v", res.Collisions)
	}
}

func TestDiscoverEntryDocOption(t *testing.T) {
	root := t.TempDir()
	writePackFiles(t, root, map[string]string{"p/GUIDE.md": skillMD("p"), "p/SKILL.md": "not frontmatter"})
	res, err := Discover(context.Background(), []string{root}, DiscoverOptions{EntryDoc: "GUIDE.md"})
	if err != nil || !slices.Equal(packNames(res), []string{"p"}) || res.Packs[0].EntryDoc != "GUIDE.md" {
		t.Errorf("Discover = %+v, %v", res, err)
	}
}

func TestDiscoverBigEntryWarns(t *testing.T) {
	root := t.TempDir()
	writePackFiles(t, root, map[string]string{"big/SKILL.md": skillMD("big") + strings.Repeat("x", 300)})
	res, err := Discover(context.Background(), []string{root}, DiscoverOptions{MaxEntryBytes: 100})
	if err != nil || !slices.Equal(packNames(res), []string{"big"}) || !slices.Equal(discoverRules(res), []string{"warning:size"}) {
		t.Errorf("Discover = %v %v, %v", packNames(res), discoverRules(res), err)
	}
}

func TestDiscoverCancelled(t *testing.T) {
	root := t.TempDir()
	writePackFiles(t, root, map[string]string{"a/SKILL.md": skillMD("a")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Discover(ctx, []string{root}, DiscoverOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDiscoverRootIsFile(t *testing.T) {
	dir := t.TempDir()
	writePackFiles(t, dir, map[string]string{"f": "x"})
	res, err := Discover(context.Background(), []string{filepath.Join(dir, "f")}, DiscoverOptions{})
	if err != nil || !slices.Equal(discoverRules(res), []string{"warning:root-missing"}) {
		t.Errorf("Discover = %v, %v", discoverRules(res), err)
	}
}
