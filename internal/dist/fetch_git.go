package dist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/packs-run/packs/packs"
)

// commitPrefix is a #REF that names a commit: 4 to 40 hex digits. Such a
// ref resolves as a commit and never as a branch or tag, whatever the host
// advertises: a host could otherwise push a branch named after the commit
// a person pinned.
var commitPrefix = regexp.MustCompile(`^[0-9a-f]{4,40}$`)

// fetchGit fetches src into tmp and writes the pack folder's files at the
// resolved commit under tmp (named after the pack). It returns that folder
// and "git:<commit>". A branch or tag is fetched shallow (depth 1); a commit
// needs the history of every branch and tag, since servers refuse to send an
// unadvertised commit by default. The files are written from the git
// objects under lim, as an archive is extracted: no .git folder, no
// submodules, symlinks checked again by Stage.
func fetchGit(ctx context.Context, src Source, tmp string, lim ArchiveLimits) (string, string, error) {
	fail := func(err error) (string, string, error) {
		return "", "", fmt.Errorf("packs: add %s: %w", src.Raw, err)
	}
	repo, err := git.PlainInit(filepath.Join(tmp, "repo.git"), true)
	if err != nil {
		return fail(err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{src.URL}})
	if err != nil {
		return fail(err)
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{})
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return fail(fmt.Errorf("%w: %s is an empty repository: push the pack first", packs.ErrInvalidPack, src.URL))
		}
		return fail(fmt.Errorf("%w: %s: %w", ErrFetch, src.URL, err))
	}
	want, spec, err := pickRef(src, refs)
	if err != nil {
		return fail(err)
	}
	fo := &git.FetchOptions{RemoteName: "origin", Tags: git.NoTags}
	if spec != "" {
		fo.RefSpecs, fo.Depth = []config.RefSpec{config.RefSpec(spec)}, 1
	} else {
		fo.RefSpecs = []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
	}
	if err := remote.FetchContext(ctx, fo); err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fail(fmt.Errorf("%w: %s: %w", ErrFetch, src.URL, err))
	}
	commit, err := resolveCommit(repo, want, src)
	if err != nil {
		return fail(err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return fail(err)
	}
	if src.Subdir != "" {
		if tree, err = tree.Tree(src.Subdir); err != nil {
			return fail(fmt.Errorf("%w: there is no folder %q at commit %s: name the folder that holds SKILL.md", packs.ErrInvalidPack, src.Subdir, commit.Hash.String()[:12]))
		}
	}
	out := filepath.Join(tmp, ".checkout") // not a pack name: nameFetched renames it
	if err := writeGitTree(ctx, repo, tree, out, lim); err != nil {
		return fail(err)
	}
	dir, err := nameFetched(out, src.Subdir, src.URL)
	if err != nil {
		return fail(fmt.Errorf("%w (commit %s)", err, commit.Hash.String()[:12]))
	}
	return dir, "git:" + commit.Hash.String(), nil
}

// pickRef finds src.Ref (or HEAD) among the advertised refs. It returns the
// hash to check out (zero for a commit prefix, resolved after fetching) and
// the refspec to fetch shallow ("" to fetch every branch and tag).
func pickRef(src Source, refs []*plumbing.Reference) (plumbing.Hash, string, error) {
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	peel := func(r *plumbing.Reference) *plumbing.Reference {
		for i := 0; i < 5 && r != nil && r.Type() == plumbing.SymbolicReference; i++ {
			r = byName[r.Target()]
		}
		return r
	}
	if src.Ref == "" {
		r := peel(byName[plumbing.HEAD])
		if r == nil || r.Hash().IsZero() {
			return plumbing.ZeroHash, "", fmt.Errorf("%w: %s has no HEAD: name a branch or tag with #REF", ErrRefNotFound, src.URL)
		}
		name := r.Name()
		if name == plumbing.HEAD {
			return r.Hash(), "", nil
		}
		return r.Hash(), "+" + name.String() + ":refs/fetched", nil
	}
	if commitPrefix.MatchString(src.Ref) {
		// A commit, resolved among the fetched history (resolveCommit); a
		// branch or tag of that name is never followed.
		return plumbing.ZeroHash, "", nil
	}
	for _, name := range []plumbing.ReferenceName{
		plumbing.NewBranchReferenceName(src.Ref), plumbing.NewTagReferenceName(src.Ref), plumbing.ReferenceName(src.Ref),
	} {
		if r := peel(byName[name]); r != nil && strings.HasPrefix(name.String(), "refs/") {
			return r.Hash(), "+" + name.String() + ":refs/fetched", nil
		}
	}
	var names []string
	for _, r := range refs {
		if n := r.Name(); n.IsBranch() || n.IsTag() {
			names = append(names, n.Short())
		}
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return plumbing.ZeroHash, "", fmt.Errorf("%w: %s has no branch, tag or commit %q (it has: %s)", ErrRefNotFound, src.URL, src.Ref, orNothing(strings.Join(names, ", ")))
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// resolveCommit finds the commit: want (a commit or an annotated tag), or
// the one commit whose hash starts with src.Ref.
func resolveCommit(repo *git.Repository, want plumbing.Hash, src Source) (*object.Commit, error) {
	if !want.IsZero() {
		if tag, err := repo.TagObject(want); err == nil {
			return tag.Commit()
		}
		c, err := repo.CommitObject(want)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s is not a commit", ErrRefNotFound, src.URL, want)
		}
		return c, nil
	}
	iter, err := repo.CommitObjects()
	if err != nil {
		return nil, err
	}
	var found []*object.Commit
	err = iter.ForEach(func(c *object.Commit) error {
		if strings.HasPrefix(c.Hash.String(), src.Ref) {
			found = append(found, c)
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case len(found) == 0:
		return nil, fmt.Errorf("%w: %s has no commit %s on any branch or tag (a #REF of hex digits names a commit, never a branch or tag of that name)", ErrRefNotFound, src.URL, src.Ref)
	case len(found) > 1:
		return nil, fmt.Errorf("%w: %s: commit prefix %s is ambiguous: give more digits", ErrRefNotFound, src.URL, src.Ref)
	}
	return found[0], nil
}

// writeGitTree writes tree's files into dst (which must not exist) under lim.
func writeGitTree(ctx context.Context, repo *git.Repository, tree *object.Tree, dst string, lim ArchiveLimits) error {
	lim = lim.withDefaults()
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	var files int
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if files++; files > lim.MaxFiles {
			return fmt.Errorf("%w: more than %d entries", ErrArchiveTooLarge, lim.MaxFiles)
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) || path.Base(name) == ".git" {
			return fmt.Errorf("%w: %q cannot be a path in a pack", ErrArchiveUnsafe, name)
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		switch e.Mode {
		case filemode.Dir:
			if err := os.Mkdir(to, 0o755); err != nil {
				return err
			}
			continue
		case filemode.Submodule:
			return fmt.Errorf("%w: %s is a git submodule: a pack must hold its files itself", packs.ErrUnsupportedFile, name)
		case filemode.Regular, filemode.Deprecated, filemode.Executable, filemode.Symlink:
		default:
			return fmt.Errorf("%w: %s has git mode %s", packs.ErrUnsupportedFile, name, e.Mode)
		}
		blob, err := repo.BlobObject(e.Hash)
		if err != nil {
			return err
		}
		if blob.Size > lim.MaxFileBytes {
			return fmt.Errorf("%w: %s is %d bytes, over %d", ErrArchiveTooLarge, name, blob.Size, lim.MaxFileBytes)
		}
		if total += blob.Size; total > lim.MaxBytes {
			return fmt.Errorf("%w: more than %d bytes in all", ErrArchiveTooLarge, lim.MaxBytes)
		}
		r, err := blob.Reader()
		if err != nil {
			return err
		}
		if e.Mode == filemode.Symlink {
			target, err := io.ReadAll(io.LimitReader(r, 4096))
			r.Close()
			if err != nil {
				return err
			}
			if err := os.Symlink(string(target), to); err != nil {
				return err
			}
			continue
		}
		perm := os.FileMode(0o644)
		if e.Mode == filemode.Executable {
			perm = 0o755
		}
		err = writeFileFrom(to, perm, io.LimitReader(r, blob.Size))
		r.Close()
		if err != nil {
			return err
		}
	}
}

func writeFileFrom(to string, perm os.FileMode, r io.Reader) error {
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// nameFetched renames the fetched pack folder dir after the pack's name
// (its SKILL.md frontmatter), so Stage installs it under that name; without
// one, after the subfolder or the repository. It returns the new path. A
// folder with no entry doc is packs.ErrInvalidPack with one clear line.
func nameFetched(dir, subdir, repoURL string) (string, error) {
	p, _ := packs.Inspect(dir, packs.LoadOptions{})
	if p == nil || p.EntryDoc == "" || p.Frontmatter.Name == "" {
		where := "the repository root"
		if subdir != "" {
			where = "folder " + subdir
		}
		return "", fmt.Errorf("%w: no pack in %s: it has no SKILL.md with a name in its frontmatter (name the pack's folder with :SUBDIR)", packs.ErrInvalidPack, where)
	}
	name := p.Name
	if !validDirName(name) {
		name = path.Base(subdir)
		if subdir == "" {
			name = strings.TrimSuffix(path.Base(strings.TrimSuffix(repoURL, "/")), ".git")
		}
	}
	if !validDirName(name) {
		return "", fmt.Errorf("%w: %q cannot be a pack folder name", packs.ErrInvalidPack, name)
	}
	to := filepath.Join(filepath.Dir(dir), name)
	if err := os.Rename(dir, to); err != nil {
		return "", err
	}
	return to, nil
}
