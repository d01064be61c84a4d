package dist

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/packs-run/packs/packs"
)

// ListSourceSkills fetches source (a folder, a local .tar.gz or a git
// repository, as packs add takes them) into a temporary folder when it is
// not a folder already, and lists its skills with FindSkills. The
// returned func removes what was fetched.
func ListSourceSkills(ctx context.Context, source string, lim ArchiveLimits) (packs.SourceSkills, func(), error) {
	none := func() {}
	src, err := ParseSource(source)
	if err != nil {
		return packs.SourceSkills{}, none, err
	}
	root := source
	switch src.Kind {
	case SourceLocal:
		fi, err := os.Stat(source)
		if err != nil {
			return packs.SourceSkills{}, none, fmt.Errorf("packs: add %s: %w", source, err)
		}
		if !fi.IsDir() {
			return packs.SourceSkills{}, none, fmt.Errorf("%w: %s: choosing skills works on a folder or a git repository: extract the archive and add its folder with --skill", ErrUnsupportedSource, source)
		}
	case SourceGit:
		tmp, err := os.MkdirTemp("", "packs-skills-*")
		if err != nil {
			return packs.SourceSkills{}, none, fmt.Errorf("packs: add %s: %w", source, err)
		}
		cleanup := func() { os.RemoveAll(tmp) }
		if root, _, err = fetchGitTree(ctx, src, tmp, lim); err != nil {
			cleanup()
			return packs.SourceSkills{}, none, err
		}
		s, err := packs.FindSkills(ctx, root)
		if err != nil {
			cleanup()
			return packs.SourceSkills{}, none, err
		}
		return s, cleanup, nil
	default:
		return packs.SourceSkills{}, none, fmt.Errorf("%w: %s: choosing skills works on a folder or a git repository (git+https://…, git+file://…)", ErrUnsupportedSource, source)
	}
	s, err := packs.FindSkills(ctx, root)
	return s, none, err
}

// SkillSource is the source that installs one skill of source (as
// ListSourceSkills read it): the skill's folder for a folder, the
// repository with :SUBDIR for git.
func SkillSource(source string, k packs.SourceSkill) (string, error) {
	src, err := ParseSource(source)
	if err != nil {
		return "", err
	}
	switch src.Kind {
	case SourceLocal:
		return filepath.Join(source, filepath.FromSlash(k.Path)), nil
	case SourceGit:
		sub := k.Path
		if src.Subdir != "" {
			sub = path.Join(src.Subdir, k.Path)
			source = strings.TrimSuffix(source, ":"+src.Subdir)
		}
		if sub == "." {
			return source, nil
		}
		return source + ":" + sub, nil
	}
	return "", fmt.Errorf("%w: %s: choosing skills works on a folder or a git repository", ErrUnsupportedSource, source)
}
