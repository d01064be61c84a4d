package packs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const publicRepo = "testdata/public-skills/anthropic-skills"

// copyDir copies src into dst (a test's own copy of a fixture).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	// os.CopyFS makes the folders and copies the files, modes kept.
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestFindSkillsMarketplace: a Claude Code plugin marketplace lists its
// plugins' skills by plugin; a plugin kept elsewhere is a warning; a
// plugin without "skills" holds those of its skills/ folder; without a
// marketplace the skills/ folder is discovered.
func TestFindSkillsMarketplace(t *testing.T) {
	ctx := context.Background()
	got, err := FindSkills(ctx, publicRepo)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ name, path, plugin string }
	var rows []row
	for _, s := range got.Skills {
		rows = append(rows, row{s.Name, s.Path, s.Plugin})
	}
	want := []row{
		{"brand-guidelines", "skills/brand-guidelines", "example-skills"},
		{"internal-comms", "skills/internal-comms", "example-skills"},
		{"webapp-testing", "skills/webapp-testing", "webapp-skills"},
	}
	if got.Marketplace != "anthropic-agent-skills" || !slices.Equal(rows, want) || len(got.Findings) != 0 {
		t.Errorf("FindSkills = %q %+v %v, want %+v", got.Marketplace, rows, got.Findings, want)
	}
	picked, err := got.Pick([]string{"webapp-testing", "brand-guidelines", "webapp-testing"})
	if err != nil || len(picked) != 2 || picked[0].Name != "webapp-testing" || picked[1].Name != "brand-guidelines" {
		t.Errorf("Pick = %+v, %v", picked, err)
	}
	if _, err := got.Pick([]string{"pdf"}); !errors.Is(err, ErrNoSkill) {
		t.Errorf("Pick of a skill not there: %v", err)
	}

	// A plugin in its own folder without "skills", and one elsewhere.
	repo := t.TempDir()
	copyDir(t, publicRepo, repo)
	if err := os.MkdirAll(filepath.Join(repo, "plugins", "comms"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(repo, "skills"), filepath.Join(repo, "plugins", "comms", "skills")); err != nil {
		t.Fatal(err)
	}
	mk := `{"name": "m", "plugins": [
		{"name": "comms", "source": "./plugins/comms"},
		{"name": "far", "source": {"source": "github", "repo": "someone/else"}}]}`
	if err := os.WriteFile(filepath.Join(repo, MarketplaceFile), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = FindSkills(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Names(), []string{"brand-guidelines", "internal-comms", "webapp-testing"}) || got.Skills[0].Plugin != "comms" ||
		got.Skills[0].Path != "plugins/comms/skills/brand-guidelines" {
		t.Errorf("default skills folder: %+v", got.Skills)
	}
	if len(got.Findings) != 1 || got.Findings[0].Rule != "plugin-elsewhere" {
		t.Errorf("findings: %v", got.Findings)
	}

	// No marketplace: the skills folder is discovered.
	if err := os.Remove(filepath.Join(repo, MarketplaceFile)); err != nil {
		t.Fatal(err)
	}
	got, err = FindSkills(ctx, filepath.Join(repo, "plugins", "comms"))
	if err != nil || !slices.Equal(got.Names(), []string{"brand-guidelines", "internal-comms", "webapp-testing"}) || got.Skills[2].Path != "skills/webapp-testing" {
		t.Errorf("without a marketplace: %+v, %v", got.Skills, err)
	}
}

// FuzzFindSkills: any marketplace.json is read without a panic, and every
// skill it yields is a folder inside the repository.
func FuzzFindSkills(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join(publicRepo, MarketplaceFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"plugins": [{"name": "x", "source": "../..", "skills": ["../../etc"]}]}`))
	f.Add([]byte(`{"metadata": {"pluginRoot": "/abs"}, "plugins": [{"name": "x", "source": "p"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		repo := t.TempDir()
		skill := filepath.Join(repo, "skills", "a")
		if err := os.MkdirAll(filepath.Join(repo, ".claude-plugin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(skill, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: a\ndescription: A.\n---\nA.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, MarketplaceFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := FindSkills(context.Background(), repo)
		if err != nil {
			return
		}
		for _, s := range got.Skills {
			if !filepath.IsLocal(filepath.FromSlash(s.Path)) && s.Path != "." {
				t.Fatalf("skill %s at %q, outside the repository", s.Name, s.Path)
			}
		}
	})
}
