package author

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// Lint is packs.Lint (spec 004's checklist) plus what only the built
// modules tell: capabilities the pack requests that no tool's code can use,
// and capabilities a tool's code uses that the pack does not request. A
// module's imports show network (http_request) and terminal_exec (exec); an
// exec tool uses terminal_exec. Files, environment variables and secrets
// go through WASI and config calls every module imports, so they are not
// judged here.
//
//	capability-unused    [warning] requested, and no tool's code can use it
//	capability-missing   [warning] a tool's code uses it, and the pack does not request it
func Lint(dir string, p *packs.Pack) []packs.Finding {
	fs := packs.Lint(dir, p)
	used := map[capability.Name]*packs.Tool{}
	read := map[string][]capability.Name{}
	for _, t := range p.Tools {
		var groups []capability.Name
		switch {
		case len(t.Run.Exec) > 0:
			groups = []capability.Name{capability.TerminalExec}
		case t.Run.Wasm != "":
			g, ok := read[t.Run.Wasm]
			if !ok {
				g = importedGroups(p.Dir, t.Run.Wasm)
				read[t.Run.Wasm] = g
			}
			groups = g
		}
		for _, n := range groups {
			if used[n] == nil {
				used[n] = t
			}
		}
	}
	req := p.Request().Names()
	manifest := filepath.Join(dir, "skill.toml")
	for _, n := range []capability.Name{capability.Network, capability.TerminalExec} {
		asked := slices.Contains(req, n)
		t := used[n]
		switch {
		case asked && t == nil && len(p.Tools) > 0:
			fs = append(fs, packs.Finding{Pack: p.Name, File: manifest, Severity: packs.SeverityWarning, Rule: "capability-unused",
				Message: fmt.Sprintf("the pack requests %s, and no tool's code can use it: remove the request (a person is asked to grant all of it)", n)})
		case !asked && t != nil:
			fs = append(fs, packs.Finding{Pack: p.Name, File: t.File, Line: t.Line, Severity: packs.SeverityWarning, Rule: "capability-missing",
				Message: fmt.Sprintf("tool %s uses %s, and skill.toml does not request it: add it under [capabilities], or every call is denied", t.Name, n)})
		}
	}
	return fs
}

// importedGroups is hostfns.ImportedGroups of a pack's module; a module
// that cannot be read counts as using nothing (validate reports it).
func importedGroups(root, rel string) []capability.Name {
	path, err := packs.SafeJoin(root, rel)
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	g, _ := hostfns.ImportedGroups(b)
	return g
}
