package gatecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	modPath     = "github.com/packs-run/packs"
	capPkg      = modPath + "/capability"
	runtimePkg  = modPath + "/runtime"
	hostfnsPkg  = modPath + "/hostfns"
	confinePkg  = hostfnsPkg + "/confine"
	superPkg    = confinePkg + "/supervisor"
	approvalTyp = capPkg + ".Approval"
	decideFunc  = "(*" + capPkg + ".Gate).Decide"
	invocation  = runtimePkg + ".Invocation"
	execCmdType = "os/exec.Cmd"
)

// sinks are the functions that run guest or native code, by
// types.Func.FullName. A call through an interface whose argument is a
// runtime.Invocation is a sink too: see isInvoke. runtime.Pipeline.Call is
// not one: it is the gate (it asks Gate.Decide itself), and hostfns.Exec
// checks the approval its Call carries; both are entries of the execution
// layer below.
var sinks = map[string]string{
	"os/exec.Command":                                               "builds a native command",
	"os/exec.CommandContext":                                        "builds a native command",
	"(*os/exec.Cmd).Run":                                            "runs a native command",
	"(*os/exec.Cmd).Start":                                          "runs a native command",
	"(*os/exec.Cmd).Output":                                         "runs a native command",
	"(*os/exec.Cmd).CombinedOutput":                                 "runs a native command",
	"os.StartProcess":                                               "runs a native command",
	"syscall.Exec":                                                  "runs a native command",
	"syscall.ForkExec":                                              "runs a native command",
	"syscall.StartProcess":                                          "runs a native command",
	confinePkg + ".Command":                                         "builds a confined native command",
	"(*" + confinePkg + ".Cmd).Start":                               "runs a confined native command",
	"github.com/extism/go-sdk.NewPlugin":                            "instantiates a guest (runs its init)",
	"(*github.com/extism/go-sdk.CompiledPlugin).Instance":           "instantiates a guest (runs its init)",
	"(*github.com/extism/go-sdk.Plugin).Call":                       "calls into a guest",
	"(*github.com/extism/go-sdk.Plugin).CallWithContext":            "calls into a guest",
	"(github.com/tetratelabs/wazero.Runtime).Instantiate":           "instantiates a guest (runs _start)",
	"(github.com/tetratelabs/wazero.Runtime).InstantiateWithConfig": "instantiates a guest (runs _start)",
	"(github.com/tetratelabs/wazero.Runtime).InstantiateModule":     "instantiates a guest (runs _start)",
	"(github.com/tetratelabs/wazero/api.Function).Call":             "calls into a guest",
	"(github.com/tetratelabs/wazero/api.Function).CallWithStack":    "calls into a guest",
}

// implementations are the packages allowed to call sinks without an
// Approval in hand, because they ARE the execution layer. Each lists the
// only exported functions through which the rest of the module may reach
// its sinks; implementationEntries proves nothing else reaches them.
var implementations = map[string]struct {
	entries []string // exported functions allowed to reach a sink
	reason  string
}{
	runtimePkg: {
		entries: []string{"(*" + runtimePkg + ".Pipeline).Call"},
		reason:  "the one pipeline: it asks the gate, and its invoke checks that the approval covers exactly the call (ErrNotApproved) before any guest or command runs",
	},
	confinePkg: {
		entries: []string{"(*" + confinePkg + ".Cmd).Release", "(*" + confinePkg + ".Cmd).Start", confinePkg + ".Command", confinePkg + ".Prepare", confinePkg + ".Probe"},
		reason: "the confinement hostfns.Exec starts every native command in: Command and Cmd.Start are sinks themselves, so only the execution layer reaches them; " +
			"Probe, Prepare and Cmd.Release start a supervisor with nothing to run (to learn what the machine gives, or to have it ready for the next call): it runs a command only when Cmd.Start hands it one",
	},
	superPkg: {
		entries: nil,
		reason:  "the supervisor starts the command confine.Cmd.Start hands it, from its own init in a process of its own: no function of it reaches the start",
	},
	hostfnsPkg: {
		entries: []string{hostfnsPkg + ".Exec"},
		reason:  "hostfns.Exec is the one place a native command starts; it refuses unless its Call carries an approval that holds for that invocation and grant",
	},
}

// personRuns are functions outside the execution layer that start a native
// program because a person asked for exactly that at the command line,
// never on behalf of a model or a pack's tool call: no tool, base tool or
// front end can reach them (personRunsOnlyFromCmd proves it).
var personRuns = map[string]string{
	"github.com/packs-run/packs/internal/author.Build": "packs build runs the author's own build (make) in the folder the person names, as make itself would",
}

// testServers are packages that start the real servers tests run against
// (a PostgreSQL), never a tool: no file but a test imports them
// (testServersOnlyInTests proves it), so no tool call can reach them.
var testServers = map[string]string{
	modPath + "/internal/testpg": "starts the PostgreSQL the store's tests run against",
}

// module is the type-checked source of every package of the module.
type module struct {
	fset *token.FileSet
	pkgs []*checked
	imp  types.Importer // the module's packages from source, the rest from export data
}

type checked struct {
	path  string
	files []*ast.File
	info  *types.Info
}

type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Standard   bool
	Module     *struct{ Main bool }
	Error      *struct{ Err string }
}

// loadModule type-checks every non-test file of every package of the
// module from source, importing its dependencies from export data that
// `go list -export` builds. A package that does not type-check fails the
// walk: the proof holds only over code that compiles.
func loadModule(t *testing.T) *module {
	t.Helper()
	ctx := context.Background()
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-export", "-deps", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var all []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		all = append(all, p)
	}
	exports := map[string]string{}
	for _, p := range all {
		exports[p.ImportPath] = p.Export
	}
	m := &module{fset: token.NewFileSet()}
	byPath := map[string]*types.Package{}
	gc := importer.ForCompiler(m.fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p, ok := byPath[path]; ok {
			return p, nil
		}
		return gc.Import(path)
	})
	m.imp = imp
	var problems []string
	// go list -deps prints a package after its dependencies, so each
	// module package's imports are checked before it.
	for _, p := range all {
		if p.Module == nil || !p.Module.Main {
			continue
		}
		if p.Error != nil {
			problems = append(problems, p.ImportPath+": "+p.Error.Err)
			continue
		}
		c := &checked{path: p.ImportPath, info: &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		}}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(m.fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			c.files = append(c.files, f)
		}
		conf := types.Config{Importer: imp, Error: func(err error) { problems = append(problems, err.Error()) }}
		pkg, _ := conf.Check(p.ImportPath, m.fset, c.files, c.info)
		byPath[p.ImportPath] = pkg
		m.pkgs = append(m.pkgs, c)
	}
	if len(problems) > 0 {
		t.Fatalf("the module does not type-check, so the gate cannot be proven over it:\n%s", strings.Join(problems, "\n"))
	}
	return m
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// site is one call of a sink.
type site struct {
	pos   token.Position
	pkg   string
	fn    string // the enclosing declared function
	sink  string
	funcs []ast.Node // enclosing FuncDecl / FuncLit, outermost first
	node  ast.Node
}

func (s site) String() string {
	return fmt.Sprintf("%s:%d: %s calls %s", s.pos.Filename, s.pos.Line, s.fn, s.sink)
}

// walk visits every node of every file with the stack of its ancestors.
func (m *module) walk(visit func(c *checked, n ast.Node, stack []ast.Node)) {
	for _, c := range m.pkgs {
		for _, f := range c.files {
			var stack []ast.Node
			ast.Inspect(f, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				visit(c, n, stack)
				stack = append(stack, n)
				return true
			})
		}
	}
}

func funcsOf(stack []ast.Node) []ast.Node {
	var out []ast.Node
	for _, n := range stack {
		switch n.(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			out = append(out, n)
		}
	}
	return out
}

// declName names a function declaration as types.Func.FullName does.
func declName(c *checked, funcs []ast.Node) string {
	if len(funcs) == 0 {
		return "package-level code"
	}
	if d, ok := funcs[0].(*ast.FuncDecl); ok {
		if fn, ok := c.info.Defs[d.Name].(*types.Func); ok {
			return fn.FullName()
		}
	}
	return "func literal"
}

// callee is the function a call calls, or nil (a conversion, a call of a
// func value, a builtin).
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr: // generic instantiation
		if s, ok := f.X.(*ast.SelectorExpr); ok {
			id = s.Sel
		} else if i, ok := f.X.(*ast.Ident); ok {
			id = i
		}
	}
	if id == nil {
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	return fn
}

func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// isInvoke reports whether call passes a runtime.Invocation: a call of
// Runtime.Invoke, directly or through an interface such as chat's Runner.
func isInvoke(info *types.Info, call *ast.CallExpr) bool {
	if fn := callee(info, call); fn == nil || fn.Name() != "Invoke" {
		return false
	}
	for _, a := range call.Args {
		if tv, ok := info.Types[a]; ok && typeName(tv.Type) == invocation {
			return true
		}
	}
	return false
}

// sites finds every sink call (and every os/exec.Cmd literal) in the module.
func (m *module) sites() []site {
	var out []site
	m.walk(func(c *checked, n ast.Node, stack []ast.Node) {
		var sink string
		switch n := n.(type) {
		case *ast.CallExpr:
			if fn := callee(c.info, n); fn != nil {
				if _, ok := sinks[fn.FullName()]; ok {
					sink = fn.FullName()
				}
			}
			if sink == "" && isInvoke(c.info, n) {
				sink = "Invoke(runtime.Invocation) through " + types.ExprString(n.Fun)
			}
		case *ast.CompositeLit:
			if tv, ok := c.info.Types[n]; ok && typeName(tv.Type) == execCmdType {
				sink = "os/exec.Cmd literal"
			}
		}
		if sink == "" {
			return
		}
		funcs := funcsOf(stack)
		out = append(out, site{pos: m.fset.Position(n.Pos()), pkg: c.path, fn: declName(c, funcs), sink: sink, funcs: funcs, node: n})
	})
	return out
}

// approvalSources are the objects an Approval may come from in a
// function: its parameters of type Approval (the caller's Approval, checked
// at the caller) and variables assigned a result of Gate.Decide.
func approvalSources(c *checked, funcs []ast.Node) map[types.Object]bool {
	src := map[types.Object]bool{}
	for _, f := range funcs {
		var ft *ast.FuncType
		var body *ast.BlockStmt
		switch f := f.(type) {
		case *ast.FuncDecl:
			ft, body = f.Type, f.Body
		case *ast.FuncLit:
			ft, body = f.Type, f.Body
		}
		for _, field := range ft.Params.List {
			for _, name := range field.Names {
				if obj := c.info.Defs[name]; obj != nil && typeName(obj.Type()) == approvalTyp {
					src[obj] = true
				}
			}
		}
		if body == nil {
			continue
		}
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Rhs) != 1 {
				return true
			}
			call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
			if !ok {
				return true
			}
			if fn := callee(c.info, call); fn == nil || fn.FullName() != decideFunc {
				return true
			}
			if id, ok := as.Lhs[0].(*ast.Ident); ok {
				if obj := c.info.ObjectOf(id); obj != nil {
					src[obj] = true
				}
			}
			return true
		})
	}
	return src
}

// isSource reports whether e names an Approval source.
func isSource(c *checked, src map[types.Object]bool, e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && src[c.info.Uses[id]]
}

// gated explains why a sink site outside the implementations is gated, or
// returns "" when it is not.
func gated(c *checked, s site) string {
	src := approvalSources(c, s.funcs)
	if call, ok := s.node.(*ast.CallExpr); ok && isInvoke(c.info, call) {
		for _, a := range call.Args {
			lit, ok := ast.Unparen(a).(*ast.CompositeLit)
			if !ok || typeName(c.info.Types[lit].Type) != invocation {
				continue
			}
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if k, _ := kv.Key.(*ast.Ident); ok && k.Name == "Approval" && isSource(c, src, kv.Value) {
					return "its Invocation's Approval is " + types.ExprString(kv.Value) + ", from Gate.Decide or an Approval parameter"
				}
			}
		}
		return ""
	}
	// Any other sink needs a Covers check on an Approval source before it.
	var why string
	for _, f := range s.funcs {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || call.Pos() >= s.node.Pos() {
				return true
			}
			if fn := callee(c.info, call); fn != nil && fn.FullName() == "("+approvalTyp+").Covers" {
				if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && isSource(c, src, sel.X) {
					why = "it is preceded by " + types.ExprString(call)
				}
			}
			return true
		})
	}
	return why
}

// ungated sorts the sink sites of m: in an execution-layer package, gated
// (with the reason), or bad.
func ungated(m *module) (impl, ok, bad []site, why []string) {
	byPath := map[string]*checked{}
	for _, c := range m.pkgs {
		byPath[c.path] = c
	}
	for _, s := range m.sites() {
		if _, isImpl := implementations[s.pkg]; isImpl {
			impl = append(impl, s)
		} else if w, run := personRuns[s.fn]; run {
			ok, why = append(ok, s), append(why, "a person's own command: "+w)
		} else if w, test := testServers[s.pkg]; test {
			ok, why = append(ok, s), append(why, "a test's server: "+w)
		} else if w := gated(byPath[s.pkg], s); w != "" {
			ok, why = append(ok, s), append(why, w)
		} else {
			bad = append(bad, s)
		}
	}
	return impl, ok, bad, why
}

// everySinkIsGated is the static half of issue 4: every call that runs
// guest or native code is inside the execution layer, or has in hand an
// Approval that came from Gate.Decide (or from an Approval parameter, which
// approvalProvenance checks at every caller).
func everySinkIsGated(t *testing.T, m *module) {
	impl, ok, bad, why := ungated(m)
	for _, s := range impl {
		t.Logf("%s (execution layer: %s)", s, implementations[s.pkg].reason)
	}
	for i, s := range ok {
		t.Logf("%s: gated: %s", s, why[i])
	}
	if len(bad) > 0 {
		var lines []string
		for _, s := range bad {
			lines = append(lines, s.String())
		}
		t.Errorf("call sites that run guest or native code without an Approval from Gate.Decide "+
			"(pass the gate's Approval into the function and check it with Covers, or call Session.Call instead):\n%s", strings.Join(lines, "\n"))
	}
	// The known paths must still be seen, or the walk went blind.
	pkgs := map[string]bool{}
	for _, s := range impl {
		pkgs[s.pkg] = true
	}
	if !pkgs[runtimePkg] || !pkgs[hostfnsPkg] {
		t.Errorf("the walk no longer sees the known paths: execution layer %v", pkgs)
	}
}

// personRunsOnlyFromCmd checks that each function of personRuns is called
// from the command line's package only (and not taken as a value anywhere
// else), so no tool call can reach it.
func personRunsOnlyFromCmd(t *testing.T, m *module) {
	seen := map[string]int{}
	m.walk(func(c *checked, n ast.Node, stack []ast.Node) {
		id, ok := n.(*ast.Ident)
		if !ok {
			return
		}
		fn, ok := c.info.Uses[id].(*types.Func)
		if !ok {
			return
		}
		if _, listed := personRuns[fn.FullName()]; !listed {
			return
		}
		if c.path != modPath+"/cmd/packs" && !strings.HasSuffix(m.fset.Position(id.Pos()).Filename, "_test.go") {
			t.Errorf("%s: %s is reached outside cmd/packs (from %s): only a person's command may run it", m.fset.Position(id.Pos()), fn.FullName(), c.path)
		}
		seen[fn.FullName()]++
	})
	for name := range personRuns {
		if seen[name] == 0 {
			t.Errorf("%s is listed in personRuns but never called: remove it from the list", name)
		}
	}
}

// testServersOnlyInTests checks that no package's own files (the walk
// reads no _test.go file) import a package of testServers, and that each
// listed package still exists.
func testServersOnlyInTests(t *testing.T, m *module) {
	m.walk(func(c *checked, n ast.Node, _ []ast.Node) {
		spec, ok := n.(*ast.ImportSpec)
		if !ok {
			return
		}
		if path, _ := strconv.Unquote(spec.Path.Value); testServers[path] != "" {
			t.Errorf("%s: %s imports %s: only tests may start a test's server", m.fset.Position(spec.Pos()), c.path, path)
		}
	})
	for path := range testServers {
		if !slices.ContainsFunc(m.pkgs, func(c *checked) bool { return c.path == path }) {
			t.Errorf("%s is listed in testServers but is not in the module: remove it from the list", path)
		}
	}
}

// finding is an Approval of unknown origin.
type finding struct {
	pos token.Position
	fn  string
	msg string
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.pos.Filename, f.pos.Line, f.fn, f.msg)
}

// unknownApprovals lists every Approval handed on (a call argument, a
// composite-literal field, an assignment to a field) outside package
// capability that is not a parameter of type Approval or a result of
// Gate.Decide, and every Approval literal; fields counts the literal
// fields seen, so a blind walk shows.
func unknownApprovals(m *module) (bad []finding, fields int) {
	check := func(c *checked, stack []ast.Node, e ast.Expr, what string) {
		tv, ok := c.info.Types[e]
		if !ok || typeName(tv.Type) != approvalTyp {
			return
		}
		funcs := funcsOf(stack)
		if !isSource(c, approvalSources(c, funcs), e) {
			bad = append(bad, finding{m.fset.Position(e.Pos()), declName(c, funcs), what + " " + types.ExprString(e) + " is not from Gate.Decide or an Approval parameter"})
		}
	}
	m.walk(func(c *checked, node ast.Node, stack []ast.Node) {
		// The execution layer hands the pipeline's own Approval from Gate.Decide
		// to its instances and host calls; its invoke checks on every call that
		// the approval covers exactly that call (the dynamic tests prove it).
		if _, impl := implementations[c.path]; c.path == capPkg || impl {
			return
		}
		switch node := node.(type) {
		case *ast.CallExpr:
			for _, a := range node.Args {
				check(c, stack, a, "argument")
			}
		case *ast.KeyValueExpr:
			if len(stack) > 0 {
				if _, ok := stack[len(stack)-1].(*ast.CompositeLit); ok {
					fields++
					check(c, stack, node.Value, "field")
				}
			}
		case *ast.AssignStmt:
			for i, l := range node.Lhs {
				if _, ok := l.(*ast.SelectorExpr); ok && i < len(node.Rhs) {
					check(c, stack, node.Rhs[i], "assigned")
				}
			}
		case *ast.CompositeLit:
			if tv, ok := c.info.Types[node]; ok && typeName(tv.Type) == approvalTyp {
				bad = append(bad, finding{m.fset.Position(node.Pos()), declName(c, funcsOf(stack)), "an Approval literal outside package capability"})
			}
		}
	})
	return bad, fields
}

// approvalProvenance checks that a parameter source is always rooted in
// a decision: see unknownApprovals.
func approvalProvenance(t *testing.T, m *module) {
	bad, fields := unknownApprovals(m)
	if fields == 0 {
		t.Fatal("saw no composite literal field: the walk is broken")
	}
	if len(bad) > 0 {
		var lines []string
		for _, f := range bad {
			lines = append(lines, f.String())
		}
		t.Errorf("approvals of unknown origin:\n%s", strings.Join(lines, "\n"))
	}
}

// implementationEntries checks that inside the execution layer the
// sinks are reached only through the allowed exported entry points: a new
// exported function of runtime that runs a guest without Invoke's check
// fails here. Calls are followed within the package; a function value
// (a host function registered with extism) runs only inside a guest call.
func implementationEntries(t *testing.T, m *module) {
	for _, c := range m.pkgs {
		impl, ok := implementations[c.path]
		if !ok {
			continue
		}
		calls := map[string][]string{} // declared function -> functions of the package it calls
		direct := map[string]bool{}    // declared functions with a sink call
		var exported []string
		for _, f := range c.files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				fn, _ := c.info.Defs[fd.Name].(*types.Func)
				if fn == nil || fd.Body == nil {
					continue
				}
				name := fn.FullName()
				if fn.Exported() && (recvExported(fn)) {
					exported = append(exported, name)
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						if g := callee(c.info, n); g != nil {
							if _, ok := sinks[g.FullName()]; ok {
								direct[name] = true
							}
							if g.Pkg() != nil && g.Pkg().Path() == c.path {
								calls[name] = append(calls[name], g.Origin().FullName())
							}
						}
					case *ast.CompositeLit:
						if tv, ok := c.info.Types[n]; ok && typeName(tv.Type) == execCmdType {
							direct[name] = true
						}
					}
					return true
				})
			}
		}
		if len(direct) == 0 {
			t.Errorf("%s: no function calls a sink: the walk is broken", c.path)
		}
		reaches := func(from string) bool {
			seen := map[string]bool{}
			var visit func(string) bool
			visit = func(f string) bool {
				if seen[f] {
					return false
				}
				seen[f] = true
				if direct[f] {
					return true
				}
				return slices.ContainsFunc(calls[f], visit)
			}
			return visit(from)
		}
		sort.Strings(exported)
		var got []string
		for _, e := range exported {
			if reaches(e) {
				got = append(got, e)
			}
		}
		if !slices.Equal(got, impl.entries) {
			t.Errorf("%s: exported functions that reach a sink = %v, want only %v (%s)", c.path, got, impl.entries, impl.reason)
		}
	}
}

// recvExported reports whether a method's receiver type is exported (a
// function has none).
func recvExported(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	if sig.Recv() == nil {
		return true
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Exported()
}

// TestStaticGate walks the whole module once and runs the checks
// over it.
func TestStaticGate(t *testing.T) {
	m := loadModule(t)
	t.Run("EverySinkIsGated", func(t *testing.T) { everySinkIsGated(t, m) })
	t.Run("ApprovalProvenance", func(t *testing.T) { approvalProvenance(t, m) })
	t.Run("PersonRunsOnlyFromCmd", func(t *testing.T) { personRunsOnlyFromCmd(t, m) })
	t.Run("TestServersOnlyInTests", func(t *testing.T) { testServersOnlyInTests(t, m) })
	t.Run("ImplementationEntries", func(t *testing.T) { implementationEntries(t, m) })
	t.Run("OneInstallDoor", func(t *testing.T) { oneInstallDoor(t, m) })
	t.Run("CatchesBypasses", func(t *testing.T) { catchesBypasses(t, m) })
}

// catchesBypasses proves the walk can fail: it type-checks
// testdata/bypass against the module and expects every bad* function, and
// no good* one, to be flagged.
func catchesBypasses(t *testing.T, m *module) {
	fset := m.fset
	f, err := parser.ParseFile(fset, filepath.Join("testdata", "bypass", "bypass.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	c := &checked{path: modPath + "/internal/gatecheck/testdata/bypass", files: []*ast.File{f}, info: &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
	}}
	if _, err := (&types.Config{Importer: m.imp}).Check(c.path, fset, c.files, c.info); err != nil {
		t.Fatalf("testdata/bypass does not type-check: %v", err)
	}
	fixture := &module{fset: fset, pkgs: []*checked{c}, imp: m.imp}
	got := map[string]bool{}
	_, ok, bad, _ := ungated(fixture)
	for _, s := range bad {
		got[strings.TrimPrefix(s.fn, c.path+".")] = true
	}
	findings, _ := unknownApprovals(fixture)
	for _, f := range findings {
		got[strings.TrimPrefix(f.fn, c.path+".")] = true
	}
	doors, _ := installDoors(fixture)
	for _, f := range doors {
		got[strings.TrimPrefix(f.fn, c.path+".")] = true
	}
	want := map[string]bool{}
	for _, d := range f.Decls {
		if fd, isFunc := d.(*ast.FuncDecl); isFunc && strings.HasPrefix(fd.Name.Name, "bad") {
			want[fd.Name.Name] = true
		}
	}
	if len(want) == 0 || len(ok) != 2 {
		t.Fatalf("the fixture has %d bad functions and %d gated sites, want some and 2", len(want), len(ok))
	}
	for name := range want {
		if !got[name] {
			t.Errorf("%s was not flagged", name)
		}
	}
	for name := range got {
		if !want[name] {
			t.Errorf("%s was flagged, but it is gated", name)
		}
	}
}
