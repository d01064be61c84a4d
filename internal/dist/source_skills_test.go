package dist

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// publicRepo is the repository of several public skills with a plugin
// marketplace (packs/testdata/public-skills/README.md).
const publicRepo = "../../packs/testdata/public-skills/anthropic-skills"

// copySkills copies src into dst (a test's own copy of a fixture).
func copySkills(t *testing.T, src, dst string) {
	t.Helper()
	// os.CopyFS makes the folders and copies the files, modes kept.
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestListSourceSkillsGit: a git repository of several skills is fetched
// and listed; each skill's source is the repository with :SUBDIR.
func TestListSourceSkillsGit(t *testing.T) {
	repo := t.TempDir()
	copySkills(t, publicRepo, repo)
	gitRun(t, repo, "init", "-q")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "commit", "-qm", "skills")
	source := "git+file://" + filepath.ToSlash(repo)
	got, done, err := ListSourceSkills(context.Background(), source, ArchiveLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if !slices.Equal(got.Names(), []string{"brand-guidelines", "internal-comms", "webapp-testing"}) {
		t.Fatalf("skills: %+v", got.Skills)
	}
	s, err := SkillSource(source, got.Skills[2])
	if err != nil || s != source+":skills/webapp-testing" {
		t.Errorf("SkillSource = %q, %v", s, err)
	}
	if s, err := SkillSource(repo, got.Skills[0]); err != nil || s != filepath.Join(repo, "skills", "brand-guidelines") {
		t.Errorf("SkillSource of a folder = %q, %v", s, err)
	}
	if _, _, err := ListSourceSkills(context.Background(), "https://example.com/x.tar.gz#sha256="+strings.Repeat("0", 64), ArchiveLimits{}); !errors.Is(err, ErrUnsupportedSource) {
		t.Error("an https archive was accepted for choosing skills")
	}
}
