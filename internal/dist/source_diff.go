package dist

import (
	"bytes"
	"crypto/sha256"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/packs-run/packs/capability"
)

// RequestDiff is how a new version's capability request differs from the
// installed one's: resources added and removed, per capability. A
// capability newly asked for lists all its resources under Added (with an
// empty list when it has none); one no longer asked for, under Removed.
type RequestDiff struct {
	Added   map[capability.Name][]string
	Removed map[capability.Name][]string
	New     []capability.Name // capabilities the old version did not ask for
	Gone    []capability.Name // capabilities the new version does not ask for
}

// Widened reports whether the new version asks for anything the old one
// did not: such an update needs the person's consent again.
func (d RequestDiff) Widened() bool { return len(d.Added) > 0 || len(d.New) > 0 }

// Lines renders the diff as "+ network: api.example.com" and
// "- env_read: LANG" lines, in the order of capability.All().
func (d RequestDiff) Lines() []string {
	var out []string
	for _, n := range capability.All() {
		if r, ok := d.Added[n]; ok {
			out = append(out, "+ "+string(n)+": "+orNothing(strings.Join(r, ", ")))
		}
		if r, ok := d.Removed[n]; ok {
			out = append(out, "- "+string(n)+": "+orNothing(strings.Join(r, ", ")))
		}
	}
	return out
}

// DiffRequests compares what two versions of a pack ask for.
func DiffRequests(old, next capability.Request) RequestDiff {
	d := RequestDiff{Added: map[capability.Name][]string{}, Removed: map[capability.Name][]string{}}
	for _, n := range capability.All() {
		o, nx := old.Has(n), next.Has(n)
		or, nr := old.Resources(n), next.Resources(n)
		switch {
		case nx && !o:
			d.New = append(d.New, n)
			d.Added[n] = nr
		case o && !nx:
			d.Gone = append(d.Gone, n)
			d.Removed[n] = or
		case o && nx:
			if add := minus(nr, or); len(add) > 0 {
				d.Added[n] = add
			}
			if rm := minus(or, nr); len(rm) > 0 {
				d.Removed[n] = rm
			}
		}
	}
	return d
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// CarryGrants keeps the person's persistent grants of the old version that
// still fit the new one's request, never wider than they were: a grant of
// a whole capability (no resources) is pinned to the resources the old
// version asked for, and resources the new version no longer asks for are
// dropped. It returns the grants kept and the capabilities whose grant was
// dropped entirely.
func CarryGrants(old, next capability.Request, grants []capability.UserGrant) ([]capability.UserGrant, []capability.Name) {
	var kept []capability.UserGrant
	var dropped []capability.Name
	for _, u := range grants {
		if u.Scope != capability.ScopePersistent || u.Revoked {
			continue
		}
		n := u.Capability
		res := u.Resources
		if len(res) == 0 {
			res = old.Resources(n)
		}
		var fit []string
		for _, r := range res {
			if capability.CheckGrant(next, capability.UserGrant{Capability: n, Resources: []string{r}, Scope: u.Scope}) == nil {
				fit = append(fit, r)
			}
		}
		switch {
		case !next.Has(n):
			dropped = append(dropped, n)
		case len(res) == 0 && len(next.Resources(n)) == 0:
			kept = append(kept, capability.UserGrant{Capability: n, Scope: u.Scope})
		case len(fit) == 0:
			dropped = append(dropped, n)
		default:
			kept = append(kept, capability.UserGrant{Capability: n, Resources: fit, Scope: u.Scope})
		}
	}
	return kept, dropped
}

// TreeDiff lists the files (slash-separated, relative) added, removed and
// changed between two pack folders.
type TreeDiff struct {
	Added, Removed, Changed []string
}

// DiffTrees compares two pack folders by content (symlinks by target),
// ignoring .git folders.
func DiffTrees(oldDir, newDir string) (TreeDiff, error) {
	a, err := treeSums(oldDir)
	if err != nil {
		return TreeDiff{}, err
	}
	b, err := treeSums(newDir)
	if err != nil {
		return TreeDiff{}, err
	}
	var d TreeDiff
	for _, k := range slices.Sorted(maps.Keys(b)) {
		switch old, ok := a[k]; {
		case !ok:
			d.Added = append(d.Added, k)
		case !bytes.Equal(old, b[k]):
			d.Changed = append(d.Changed, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[k]; !ok {
			d.Removed = append(d.Removed, k)
		}
	}
	return d, nil
}

func treeSums(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h := sha256.New()
		if d.Type()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte("link:" + t))
		} else {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		out[filepath.ToSlash(rel)] = h.Sum(nil)
		return nil
	})
	return out, err
}

// SourceForUpdate turns a lock entry's source back into one StageSource
// takes: a "file://" URL (what Stage records for a local folder or
// archive) becomes its path; anything else is returned as is.
func SourceForUpdate(source string) string {
	if u, err := url.Parse(source); err == nil && u.Scheme == "file" && u.Host == "" {
		return filepath.FromSlash(u.Path)
	}
	return source
}
