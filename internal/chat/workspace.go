package chat

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Artifact is a file a tool created or changed in the chat's workspace
// (spec 000 §8.3).
type Artifact struct {
	Path string `json:"path"` // relative to the workspace
	Type string `json:"type"` // "file"
	MIME string `json:"mime"`
	Size int64  `json:"size_bytes"`
}

// maxSnapshotFiles bounds the walk of a workspace. A workspace with more
// files still works; changes past the bound are not listed as artifacts.
const maxSnapshotFiles = 10_000

// stamp is what tells a changed file from an unchanged one.
type stamp struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// snapshot maps workspace-relative paths of regular files to their stamps.
type snapshot map[string]stamp

// takeSnapshot walks dir without following symlinks.
func takeSnapshot(dir string) snapshot {
	s := snapshot{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(s) >= maxSnapshotFiles {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		s[filepath.ToSlash(rel)] = stamp{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
		return nil
	})
	return s
}

// artifacts lists the files of after that are new or changed since before
// and that the call wrote (wrote: runtime.Writes.Wrote), sorted by path: a
// file someone else put there meanwhile is not the call's.
func artifacts(dir string, before, after snapshot, wrote func(rel string) bool) []Artifact {
	var out []Artifact
	for rel, st := range after {
		if old, ok := before[rel]; ok && old == st || !wrote(rel) {
			continue
		}
		out = append(out, Artifact{Path: rel, Type: "file", MIME: sniffFile(filepath.Join(dir, filepath.FromSlash(rel))), Size: st.size})
	}
	slices.SortFunc(out, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// sniffFile names the type of the file at p.
func sniffFile(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return "application/octet-stream"
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return mimeType(p, head, isBinary(head, n == len(head)))
}
