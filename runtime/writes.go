package runtime

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/packs-run/packs/capability"
)

// Writes is what one call's own exercises wrote in its workspace: the
// files and folders of its allowed filesystem_write exercises. A call
// whose writes the host does not see one by one (a native command, a
// built-in's Go code) may have written anything there.
type Writes struct {
	paths []string // workspace-relative, slash-separated
	any   bool
}

// Wrote reports whether the call wrote the workspace file rel (relative,
// slash-separated), itself or as part of a folder it wrote (a renamed
// folder moves the files in it).
func (w Writes) Wrote(rel string) bool {
	if w.any {
		return true
	}
	for _, p := range w.paths {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// writeLog passes a call's exercises on to the audit log and keeps what
// they wrote in the workspace (Writes): so only the call's own writes are
// its artifacts, not a file the person uploaded or another call wrote
// meanwhile.
type writeLog struct {
	capability.Recorder
	who       capability.Exercise // the call's Person, Issuer and Client, stamped on each exercise
	workspace []string            // the workspace, as given and with symlinks resolved
	mu        sync.Mutex
	w         Writes
}

func (l *writeLog) RecordExercise(e capability.Exercise) error {
	e.Person, e.Issuer, e.Client = l.who.Person, l.who.Issuer, l.who.Client
	if e.Allowed {
		l.mu.Lock()
		switch e.Capability {
		case capability.FilesystemWrite:
			for _, root := range l.workspace {
				if rel, err := filepath.Rel(root, e.Resource); err == nil && rel != "." && filepath.IsLocal(rel) {
					l.w.paths = append(l.w.paths, filepath.ToSlash(rel))
					break
				}
			}
		case capability.TerminalExec:
			l.w.any = true
		}
		l.mu.Unlock()
	}
	return l.Recorder.RecordExercise(e)
}

func (l *writeLog) writes() Writes {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Writes{paths: append([]string(nil), l.w.paths...), any: l.w.any}
}

// workspaceRoots is the workspace as given and, when it differs, with
// its symbolic links resolved: an exercise names the path the host used.
func workspaceRoots(dir string) []string {
	roots := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		roots = append(roots, real)
	}
	return roots
}
