package packs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// Host is the machine and state directory a pack is checked against by
// CheckHost: at packs add (Install), where a mismatch refuses the pack, and
// at packs validate, where it is a warning.
type Host struct {
	OS, Arch string // Go's names: runtime.GOOS, runtime.GOARCH
	// ExecPath is the search path packs runs native commands with
	// (hostfns.SafePath): a required tool the manifest's terminal_exec
	// lists must be found there, since that is where packs will look.
	// Path is the person's PATH, for the tools the pack's docs have the
	// person run.
	ExecPath, Path string
	// Installed are the packs installed in the state directory, for
	// [dependencies]; nil when there is none.
	Installed []Installed
	// Install makes every unmet requirement an error.
	Install bool
}

// Installed is an installed pack as [dependencies] names it.
type Installed struct {
	Name, ID, Version string
}

// CheckHost checks p's [platform] and [dependencies] against h. Findings
// are placed at the manifest's lines; a pack without skill.toml has none.
func CheckHost(p *Pack, h Host) []Finding {
	m := p.Manifest
	if m == nil {
		return nil
	}
	rep := &reporter{pack: p.Name}
	add := func(path []string, index int, rule, format string, args ...any) {
		sev := SeverityWarning
		if h.Install {
			sev = SeverityError
		}
		rep.add(m.file, tomlLine(m.doc, path, index), sev, rule, format, args...)
	}
	pl := m.Platform
	if len(pl.OS) > 0 && !slices.Contains(pl.OS, h.OS) {
		add([]string{"platform", "os"}, -1, "platform-os", "the pack works on %s, and this machine runs %s: packs add refuses it here", strings.Join(pl.OS, ", "), h.OS)
	}
	if len(pl.Arch) > 0 && !slices.Contains(pl.Arch, h.Arch) {
		add([]string{"platform", "arch"}, -1, "platform-arch", "the pack works on %s, and this machine is %s: packs add refuses it here", strings.Join(pl.Arch, ", "), h.Arch)
	}
	commands := m.Capabilities.TerminalExec.Commands
	for i, tool := range pl.RequiredTools {
		if where, ok := findTool(tool, commands, h); !ok {
			add([]string{"platform", "required_tools"}, i, "platform-tool", "required tool %s is not installed (looked in %s): install it, then add the pack", tool, where)
		}
	}
	for i, tool := range pl.OptionalTools {
		if where, ok := findTool(tool, commands, h); !ok {
			rep.warnf(m.file, tomlLine(m.doc, []string{"platform", "optional_tools"}, i), "platform-tool",
				"optional tool %s is not installed (looked in %s): what the pack does with it will not work", tool, where)
		}
	}
	for _, d := range m.Dependencies {
		found, ok := installedPack(h.Installed, d.Pack)
		var why string
		switch {
		case !ok:
			why = "which is not installed"
		case !d.cons.allows(found.Version):
			why = fmt.Sprintf("and %s %s is installed", found.Name, orUnversioned(found.Version))
		default:
			continue
		}
		want := strings.TrimSpace(d.Pack + " " + d.Constraint)
		line := tomlLine(m.doc, d.path, -1)
		if d.Optional {
			rep.warnf(m.file, line, "dependency", "the pack can use %s, %s: install it (packs add) for what the pack does with it", want, why)
			continue
		}
		add(d.path, -1, "dependency", "the pack depends on %s, %s: install a version that fits first (packs add)", want, why)
	}
	return rep.list
}

func orUnversioned(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}

// findTool looks for a required or optional tool: on ExecPath when
// terminal_exec lists it (packs runs it, and looks nowhere else), else on
// the person's PATH. It returns where it looked.
func findTool(tool string, commands []string, h Host) (string, bool) {
	path := h.Path
	where := "PATH"
	if slices.Contains(commands, tool) {
		path, where = h.ExecPath, h.ExecPath+", where packs runs terminal_exec commands"
	}
	if filepath.IsAbs(tool) {
		return tool, isExecutable(tool)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir != "" && filepath.IsAbs(dir) && isExecutable(filepath.Join(dir, tool)) {
			return where, true
		}
	}
	return where, false
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// installedPack finds an installed pack by name, or by its skill.toml id.
func installedPack(list []Installed, name string) (Installed, bool) {
	for _, in := range list {
		if in.Name == name || in.ID != "" && in.ID == name {
			return in, true
		}
	}
	return Installed{}, false
}

// ManifestID returns the id in the skill.toml of the pack folder dir, or ""
// when it has none or the manifest does not parse.
func ManifestID(dir string) string {
	if doc, ok := readSmall(dir, manifestFile, manifestFile, maxManifestBytes, &reporter{}); ok {
		if m := parseManifest(doc, manifestFile, "", &reporter{}); m != nil {
			return m.ID
		}
	}
	return ""
}

// checkProvides checks [provides] against what the pack ships: recipes in
// recipes/, tools in tools.json.
func checkProvides(p *Pack, rep *reporter) {
	m := p.Manifest
	if m == nil {
		return
	}
	for _, c := range []struct {
		key, what string
		said      *bool
		has       bool
	}{
		{"recipes", "recipes (recipes/*.yaml)", m.Provides.Recipes, len(p.Recipes) > 0},
		{"executable", "tools (tools.json)", m.Provides.Executable, len(p.Tools) > 0},
	} {
		if c.said == nil || *c.said == c.has {
			continue
		}
		has := "has none"
		if c.has {
			has = "has some"
		}
		rep.errorf(m.file, tomlLine(m.doc, []string{"provides", c.key}, -1), "provides-mismatch",
			"%s = %t, but the pack %s %s: set it to %t or remove it", c.key, *c.said, has, c.what, c.has)
	}
}

// constraint is a parsed version constraint: every clause must hold.
type constraint []clause

type clause struct {
	op string // ">=", ">", "<=", "<", "=", "^", "~"
	v  string // canonical "vMAJOR.MINOR.PATCH[-pre]"
	// parts is how many numbers were written: "^1.2" and "~1" bound by
	// what was written.
	parts int
}

// maxConstraintLen bounds a constraint's text.
const maxConstraintLen = 256

// parseConstraint reads a version constraint: "*" or "" (any), or clauses
// separated by commas or spaces, each an operator (>=, >, <=, <, =, ==, ^,
// ~; none means =) and a version of one to three numbers with an optional
// pre-release ("1", "1.2", "1.2.3-rc.1"). The error completes
// "dependency NAME: ...".
func parseConstraint(s string) (constraint, error) {
	if len(s) > maxConstraintLen {
		return nil, fmt.Errorf("the constraint is over %d characters", maxConstraintLen)
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "*" {
		return nil, nil
	}
	var c constraint
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		op := ""
		for _, o := range []string{">=", "<=", "==", ">", "<", "=", "^", "~"} {
			if strings.HasPrefix(f, o) {
				op, f = o, f[len(o):]
				break
			}
		}
		switch op {
		case "", "==":
			op = "="
		}
		if f == "" {
			return nil, fmt.Errorf("%q has an operator and no version: write it as \">=1.2\"", s)
		}
		core, pre, _ := strings.Cut(f, "-")
		parts := strings.Count(core, ".") + 1
		full := core + strings.Repeat(".0", max(0, 3-parts))
		if pre != "" {
			full += "-" + pre
		}
		if parts > 3 || checkSemver(full) != nil {
			return nil, fmt.Errorf("%q is not a version constraint: write it as \">=1.2\", \"^1.4\" or \">=1.0, <2\"", s)
		}
		c = append(c, clause{op: op, v: "v" + full, parts: parts})
	}
	return c, nil
}

// allows reports whether version satisfies every clause. A pack without a
// version satisfies only the empty constraint.
func (c constraint) allows(version string) bool {
	if len(c) == 0 {
		return true
	}
	if checkSemver(version) != nil {
		return false
	}
	v := "v" + version
	for _, cl := range c {
		cmp := semver.Compare(v, cl.v)
		ok := false
		switch cl.op {
		case ">=":
			ok = cmp >= 0
		case ">":
			ok = cmp > 0
		case "<=":
			ok = cmp <= 0
		case "<":
			ok = cmp < 0
		case "=":
			ok = cmp == 0
		case "^":
			ok = cmp >= 0 && semver.Compare(v, caretBound(cl)) < 0
		case "~":
			ok = cmp >= 0 && semver.Compare(v, tildeBound(cl)) < 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// caretBound is the first version ^v excludes: the next major, or for 0.x
// the next minor (0.0.x: the next patch), as Cargo and npm read it.
func caretBound(cl clause) string {
	var maj, mn, pt int
	fmt.Sscanf(semver.Canonical(cl.v), "v%d.%d.%d", &maj, &mn, &pt)
	switch {
	case maj > 0 || cl.parts == 1:
		return fmt.Sprintf("v%d.0.0", maj+1)
	case mn > 0 || cl.parts == 2:
		return fmt.Sprintf("v0.%d.0", mn+1)
	}
	return fmt.Sprintf("v0.0.%d", pt+1)
}

// tildeBound is the first version ~v excludes: the next minor, or the
// next major when only the major was written.
func tildeBound(cl clause) string {
	var maj, mn int
	fmt.Sscanf(semver.Canonical(cl.v), "v%d.%d", &maj, &mn)
	if cl.parts == 1 {
		return fmt.Sprintf("v%d.0.0", maj+1)
	}
	return fmt.Sprintf("v%d.%d.0", maj, mn+1)
}
