package gatecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// Issue 24: a pack enters a state directory through one door. The library's
// commit (dist.Staged.Commit, CommitGrants: the journaled rename and the
// packs.lock entry) is reached from the rest of the module only through
// the installer's commit in internal/app, which every front end reaches
// through the installer's entries, after the policy, trust, the machine's
// fit and consent.
const (
	distPkg = modPath + "/internal/dist"
	appPkg  = modPath + "/internal/app"
)

// commitFuncs commit a staged pack into a state directory.
var commitFuncs = []string{
	"(*" + distPkg + ".Staged).Commit",
	"(*" + distPkg + ".Staged).CommitGrants",
}

// installDoor is the one function outside package dist that may commit,
// and installEntries the only functions that may reach it: the installer.
var (
	installDoor    = "(*" + appPkg + ".App).commit"
	installEntries = []string{
		"(*" + appPkg + ".App).Install",
		"(*" + appPkg + ".App).Update",
		"(*" + appPkg + ".App).InstallBundle",
		"(*" + appPkg + ".App).installBuiltin",
	}
)

// doorFinding is a use of a commit function or of the door from the
// wrong place.
type doorFinding struct {
	pos  token.Position
	fn   string // the enclosing declared function
	used string
}

func (f doorFinding) String() string {
	return fmt.Sprintf("%s:%d: %s uses %s", f.pos.Filename, f.pos.Line, f.fn, f.used)
}

// installDoors lists every use (a call or a method value) of a commit
// function outside the door (and, inside package dist, outside Commit's
// own call of CommitGrants), and every use of the door outside the
// installer's entries. seen counts the uses found, so a blind walk shows.
func installDoors(m *module) (bad []doorFinding, seen int) {
	m.walk(func(c *checked, n ast.Node, stack []ast.Node) {
		id, ok := n.(*ast.Ident)
		if !ok {
			return
		}
		fn, ok := c.info.Uses[id].(*types.Func)
		if !ok {
			return
		}
		name := fn.Origin().FullName()
		in := declName(c, funcsOf(stack))
		f := doorFinding{pos: m.fset.Position(id.Pos()), fn: in, used: name}
		switch {
		case slices.Contains(commitFuncs, name):
			seen++
			if in != installDoor && !(c.path == distPkg && in == commitFuncs[0]) {
				bad = append(bad, f)
			}
		case name == installDoor:
			seen++
			if !slices.Contains(installEntries, in) {
				bad = append(bad, f)
			}
		}
	})
	return bad, seen
}

// oneInstallDoor is the static half of issue 24's single door.
func oneInstallDoor(t *testing.T, m *module) {
	bad, seen := installDoors(m)
	if seen < 1+len(installEntries) {
		t.Fatalf("saw %d uses of the commit and the installer's door, want at least %d: the walk is broken", seen, 1+len(installEntries))
	}
	if len(bad) > 0 {
		var lines []string
		for _, f := range bad {
			lines = append(lines, f.String())
		}
		t.Errorf("a pack is committed outside the installer (call app.App.Install, Update or InstallBundle, which apply the policy, trust, fit and consent):\n%s", strings.Join(lines, "\n"))
	}
}
