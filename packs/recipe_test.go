package packs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

const recipeManifest = `[skill]
id = "pack"
name = "pack"
version = "1.0.0"
description = "test"

[capabilities]
terminal_exec = { commands = ["git", "echo"], blocked = ["rm"] }
env_read = ["HOME"]
`

// recipePack writes a pack with skill.toml and the one recipe, and returns
// its findings.
func recipePack(t *testing.T, manifest, recipe string) (string, []Finding) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pack")
	files := map[string]string{"SKILL.md": skillMD("pack"), "recipes/r.yaml": recipe}
	if manifest != "" {
		files["skill.toml"] = manifest
	}
	writePackFiles(t, dir, files)
	return dir, Validate(dir, LoadOptions{})
}

const goodRecipe = `id: feature
name: Feature branch
description: make a branch
version: "1.0"
triggers:
  - keywords: [git, branch]
  - intent: start a feature
  - context:
      has_files: [".git"]
parameters:
  - name: branch
    type: string
    required: true
    validation: "^[a-z0-9/-]+$"
  - name: count
    type: integer
    default: "3"
preconditions:
  - check: command_exists
    args: [git]
    message: git must be installed
  - check: env_set
    args: [HOME]
  - check: custom
    script: git status --porcelain
    message: a repository
steps:
  - id: create
    name: Create branch
    command: git checkout -b "{{branch}}"
    confirmation: prompt
    risk_level: moderate
    timeout: 30
  - id: log
    command: 'git log -n {{count}} --format=%s'
    confirmation: auto
    timeout: 2s
    expect:
      exit_code: 0
      output_contains: init
verification:
  - check: echo '{"items":[{"phase":"Running"}]}'
    expect:
      json_path: .items[*].phase
      contains: Running
    message: should run
rollback:
  - command: git checkout -
    undoes: create
`

func TestRecipeParse(t *testing.T) {
	dir, fs := recipePack(t, recipeManifest, goodRecipe)
	if len(fs) != 0 {
		t.Fatalf("findings: %v", fs)
	}
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := p.Recipe("feature")
	if !ok {
		t.Fatalf("recipes: %v", p.Recipes)
	}
	if r.File != "recipes/r.yaml" || len(r.Steps) != 2 || len(r.Preconditions) != 3 || len(r.Verification) != 1 || len(r.Rollback) != 1 || len(r.Triggers) != 3 {
		t.Fatalf("recipe: %+v", r)
	}
	s := r.Steps[0]
	if s.Confirmation != ConfirmPrompt || s.RiskLevel != "moderate" || s.Timeout != 30*time.Second || s.Line != 28 {
		t.Errorf("step 0: %+v", s)
	}
	if got, want := s.Command.Argv, []string{"git", "checkout", "-b", "{{branch}}"}; !slices.Equal(got, want) {
		t.Errorf("argv = %q, want %q", got, want)
	}
	if r.Steps[1].Confirmation != ConfirmAuto || r.Steps[1].Timeout != 2*time.Second {
		t.Errorf("step 1: %+v", r.Steps[1])
	}
	if r.Rollback[0].ID != "rollback-1" || r.Rollback[0].Undoes != "create" || r.Verification[0].ID != "verify-1" {
		t.Errorf("ids: %q %q", r.Rollback[0].ID, r.Verification[0].ID)
	}
	args, err := r.Bind(map[string]string{"branch": "feat/x"})
	if err != nil {
		t.Fatal(err)
	}
	if string(args) != `{"branch":"feat/x","count":3}` {
		t.Errorf("Bind = %s", args)
	}
	argv, err := r.Steps[1].Command.Expand(args)
	if err != nil || !slices.Equal(argv, []string{"git", "log", "-n", "3", "--format=%s"}) {
		t.Errorf("Expand = %q, %v", argv, err)
	}
}

func TestRecipeDefaultConfirmation(t *testing.T) {
	m := recipeManifest + "\n[recipes]\ndefault_confirmation = \"always\"\n"
	dir, fs := recipePack(t, m, "id: a\nname: A\nsteps:\n  - id: s\n    command: git status\n  - id: t\n    command: git status\n    confirmation: auto\n")
	if len(fs) != 0 {
		t.Fatalf("findings: %v", fs)
	}
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Recipes[0].Steps; got[0].Confirmation != ConfirmAlways || got[1].Confirmation != ConfirmAuto {
		t.Errorf("confirmations: %q %q", got[0].Confirmation, got[1].Confirmation)
	}
}

// TestRecipeFindings checks that each bad recipe yields its finding at its
// line.
func TestRecipeFindings(t *testing.T) {
	head := "id: a\nname: A\n"
	cases := []struct {
		name, manifest, recipe string
		want                   []string // "file:line severity rule"
	}{
		{"bogus default_confirmation", recipeManifest + "\n[recipes]\ndefault_confirmation = \"bogus\"\n", head + "steps:\n  - id: s\n    command: git status\n",
			[]string{"skill.toml:12 error recipe-confirmation"}},
		{"yaml syntax", recipeManifest, "id: [\n", []string{"recipes/r.yaml:2 error recipe-syntax"}},
		{"not a mapping", recipeManifest, "- a\n", []string{"recipes/r.yaml:1 error recipe-type"}},
		{"alias", recipeManifest, head + "description: &d x\nversion: *d\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:3 error recipe-syntax"}},
		{"unknown key", recipeManifest, head + "stepz: []\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:3 error recipe-unknown-key"}},
		{"no steps", recipeManifest, head, []string{"recipes/r.yaml:1 error recipe-field-missing"}},
		{"no id", recipeManifest, "name: A\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:1 error recipe-field-missing"}},
		{"bad id", recipeManifest, "id: A_b\nname: A\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:1 error recipe-id"}},
		{"step without id", recipeManifest, head + "steps:\n  - command: git status\n", []string{"recipes/r.yaml:4 error recipe-field-missing"}},
		{"step ids twice", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:6 error recipe-duplicate"}},
		{"command and tool", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    tool: x\n", []string{"recipes/r.yaml:4 error recipe-field-missing"}},
		{"unknown tool", recipeManifest, head + "steps:\n  - id: s\n    tool: nope\n", []string{"recipes/r.yaml:5 error recipe-tool"}},
		{"ungranted command", recipeManifest, head + "steps:\n  - id: s\n    command: curl http://x\n", []string{"recipes/r.yaml:5 error recipe-grant"}},
		{"blocked command", recipeManifest, head + "steps:\n  - id: s\n    command: rm -rf x\n", []string{"recipes/r.yaml:5 error recipe-grant"}},
		{"no manifest", "", head + "steps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:5 error recipe-grant"}},
		{"pipe", recipeManifest, head + "steps:\n  - id: s\n    command: git log | head\n", []string{"recipes/r.yaml:5 error recipe-command"}},
		{"dollar", recipeManifest, head + "steps:\n  - id: s\n    command: echo \"$HOME\"\n", []string{"recipes/r.yaml:5 error recipe-command"}},
		{"unterminated quote", recipeManifest, head + "steps:\n  - id: s\n    command: echo 'x\n", []string{"recipes/r.yaml:5 error recipe-command"}},
		{"program from a parameter", recipeManifest, head + "parameters:\n  - name: p\nsteps:\n  - id: s\n    command: '{{p}} x'\n", []string{"recipes/r.yaml:7 error recipe-command"}},
		{"unknown placeholder", recipeManifest, head + "steps:\n  - id: s\n    command: git checkout {{branch}}\n", []string{"recipes/r.yaml:5 error recipe-placeholder"}},
		{"option injection", recipeManifest, head + "parameters:\n  - name: p\nsteps:\n  - id: s\n    command: git log -{{p}}\n", []string{"recipes/r.yaml:7 error recipe-option"}},
		{"bad confirmation", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    confirmation: never\n", []string{"recipes/r.yaml:6 error recipe-confirmation"}},
		{"bad risk", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    risk_level: extreme\n", []string{"recipes/r.yaml:6 error recipe-risk"}},
		{"bad timeout", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    timeout: 2h\n", []string{"recipes/r.yaml:6 error recipe-timeout"}},
		{"zero timeout", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    timeout: 0\n", []string{"recipes/r.yaml:6 error recipe-timeout"}},
		{"bad json_path", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    expect:\n      json_path: \"$[\"\n", []string{"recipes/r.yaml:7 error recipe-expect"}},
		{"contains alone", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    expect:\n      contains: x\n", []string{"recipes/r.yaml:7 error recipe-expect"}},
		{"bad exit code", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    expect:\n      exit_code: 300\n", []string{"recipes/r.yaml:7 error recipe-expect"}},
		{"bad param type", recipeManifest, head + "parameters:\n  - name: p\n    type: list\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:5 error recipe-param"}},
		{"bad regex", recipeManifest, head + "parameters:\n  - name: p\n    validation: \"[\"\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:5 error recipe-param"}},
		{"default fails validation", recipeManifest, head + "parameters:\n  - name: p\n    validation: \"^a$\"\n    default: b\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:6 error recipe-param"}},
		{"param twice", recipeManifest, head + "parameters:\n  - name: p\n  - name: p\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:5 error recipe-duplicate"}},
		{"bad check", recipeManifest, head + "preconditions:\n  - check: file_exists\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:4 error recipe-precondition"}},
		{"command_exists ungranted", recipeManifest, head + "preconditions:\n  - check: command_exists\n    args: [kubectl]\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:5 error recipe-grant"}},
		{"env_set ungranted", recipeManifest, head + "preconditions:\n  - check: env_set\n    args: [AWS_PROFILE]\nsteps:\n  - id: s\n    command: git status\n", []string{"recipes/r.yaml:4 warning recipe-grant"}},
		{"rollback undoes nothing", recipeManifest, head + "steps:\n  - id: s\n    command: git status\nrollback:\n  - command: git status\n    undoes: t\n", []string{"recipes/r.yaml:7 error recipe-rollback"}},
		{"input on a command", recipeManifest, head + "steps:\n  - id: s\n    command: git status\n    input: {a: 1}\n", []string{"recipes/r.yaml:6 error recipe-unknown-key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, fs := recipePack(t, c.manifest, c.recipe)
			var got []string
			for _, s := range spotsOf(dir, fs) {
				got = append(got, strings.TrimSpace(s.file+":"+strconv.Itoa(s.line)+" "+string(s.sev)+" "+s.rule))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("findings = %q, want %q\n%v", got, c.want, fs)
			}
		})
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestSplitCommand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{"git status", []string{"git", "status"}, false},
		{"  git   status  ", []string{"git", "status"}, false},
		{`git commit -m "a b"`, []string{"git", "commit", "-m", "a b"}, false},
		{`git commit -m 'a "b" $c'`, []string{"git", "commit", "-m", `a "b" $c`}, false},
		{`echo "a\"b\\c\d"`, []string{"echo", `a"b\c\d`}, false},
		{`echo a\ b`, []string{"echo", "a b"}, false},
		{"echo a\\\nb", []string{"echo", "ab"}, false},
		{`echo ""`, []string{"echo", ""}, false},
		{`echo x""y`, []string{"echo", "xy"}, false},
		{"echo {{p}}", []string{"echo", "{{p}}"}, false},
		{"echo a#b x~", []string{"echo", "a#b", "x~"}, false},
		{"echo --x=1,2 @f +y !z %s", []string{"echo", "--x=1,2", "@f", "+y", "!z", "%s"}, false},
		{"", nil, true},
		{"''", nil, true},
		{"a | b", nil, true},
		{"a; b", nil, true},
		{"a && b", nil, true},
		{"a > f", nil, true},
		{"a < f", nil, true},
		{"a $(b)", nil, true},
		{"a `b`", nil, true},
		{"a $X", nil, true},
		{`a "$X"`, nil, true},
		{"a \"`b`\"", nil, true},
		{"a *.go", nil, true},
		{"a ?", nil, true},
		{"a [ab]", nil, true},
		{"a ~/x", nil, true},
		{"a # comment", nil, true},
		{"a 'x", nil, true},
		{`a "x`, nil, true},
		{`a \`, nil, true},
		{"(a)", nil, true},
	}
	for _, c := range cases {
		got, err := splitCommand(c.in)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.err)
		}
	}
	if _, err := splitCommand("a | b"); !errors.Is(err, errShellSyntax) {
		t.Errorf("a pipe: %v, want errShellSyntax", err)
	}
}

func TestRecipeBind(t *testing.T) {
	r := &Recipe{ID: "b", Parameters: []RecipeParameter{
		{Name: "s", Type: "string", Required: true}, {Name: "i", Type: "integer"}, {Name: "n", Type: "number"}, {Name: "f", Type: "boolean"},
	}}
	cases := []struct {
		in   map[string]string
		want string
		err  bool
	}{
		{map[string]string{"s": "x"}, `{"s":"x"}`, false},
		{map[string]string{"s": "x", "i": "12", "n": "1.5", "f": "true"}, `{"f":true,"i":12,"n":1.5,"s":"x"}`, false},
		{map[string]string{}, "", true},
		{map[string]string{"s": "x", "zz": "1"}, "", true},
		{map[string]string{"s": "x", "i": "1.5"}, "", true},
		{map[string]string{"s": "x", "n": "NaN"}, "", true},
		{map[string]string{"s": "x", "f": "yes"}, "", true},
		{map[string]string{"s": "a\x00b"}, "", true},
	}
	for _, c := range cases {
		got, err := r.Bind(c.in)
		if (err != nil) != c.err || string(got) != c.want {
			t.Errorf("Bind(%v) = %s, %v; want %s, error %v", c.in, got, err, c.want, c.err)
		}
		var pe *ParamError
		if err != nil && (!errors.As(err, &pe) || !errors.Is(err, ErrInvalidInput)) {
			t.Errorf("Bind(%v): %v is not a *ParamError wrapping ErrInvalidInput", c.in, err)
		}
	}
}

// TestRecipeOptionInjection: a parameter value that would make its own
// argv element an option is refused when the command is expanded.
func TestRecipeOptionInjection(t *testing.T) {
	dir, fs := recipePack(t, recipeManifest, "id: a\nname: A\nparameters:\n  - name: b\nsteps:\n  - id: s\n    command: git checkout {{b}}\n")
	if len(fs) != 0 {
		t.Fatal(fs)
	}
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Recipes[0]
	for _, v := range []string{"--upload-pack=touch /tmp/x", "-b"} {
		args, err := r.Bind(map[string]string{"b": v})
		if err != nil {
			t.Fatal(err)
		}
		if argv, err := r.Steps[0].Command.Expand(args); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Expand(%q) = %q, %v; want ErrInvalidInput", v, argv, err)
		}
	}
	args, _ := r.Bind(map[string]string{"b": "feature x; rm -rf /"})
	argv, err := r.Steps[0].Command.Expand(args)
	if err != nil || !slices.Equal(argv, []string{"git", "checkout", "feature x; rm -rf /"}) {
		t.Errorf("a value with spaces and ; stays one element: %q, %v", argv, err)
	}
}

func TestExpectCheck(t *testing.T) {
	two := 2
	path, err := parseJSONPath(".items[*].status.phase")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		e    Expect
		code int
		out  string
		ok   bool
	}{
		{Expect{}, 0, "", true},
		{Expect{}, 1, "", false},
		{Expect{ExitCode: &two}, 2, "", true},
		{Expect{ExitCode: &two}, 0, "", false},
		{Expect{OutputContains: "ok"}, 0, "all ok", true},
		{Expect{OutputContains: "ok"}, 0, "fail", false},
		{Expect{JSONPath: "x", path: path}, 0, "", false},
		{Expect{JSONPath: "x", path: path}, 0, `{"items":[{"status":{"phase":"Pending"}}]}`, true},
		{Expect{JSONPath: "x", path: path, Contains: "Running"}, 0, `{"items":[{"status":{"phase":"Pending"}},{"status":{"phase":"Running"}}]}`, true},
		{Expect{JSONPath: "x", path: path, Contains: "Running"}, 0, `{"items":[{"status":{"phase":"Pending"}}]}`, false},
		{Expect{JSONPath: "x", path: path}, 0, `{"items":[]}`, false},
		{Expect{JSONPath: "x", path: path}, 0, `not json`, false},
	}
	for i, c := range cases {
		err := c.e.Check(c.code, []byte(c.out), nil)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrExpectation)) {
			t.Errorf("case %d: Check = %v, want ok %v", i, err, c.ok)
		}
	}
}

func TestRecipeToolInput(t *testing.T) {
	s := RecipeStep{Tool: "t", input: map[string]inputValue{"a": {param: "p"}, "b": {lit: []byte(`[1,2]`)}}, inputKeys: []string{"a", "b"}}
	got, err := s.ToolInput([]byte(`{"p":"x y"}`))
	if err != nil || string(got) != `{"a":"x y","b":[1,2]}` {
		t.Errorf("ToolInput = %s, %v", got, err)
	}
	if _, err := s.ToolInput([]byte(`{}`)); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("missing parameter: %v", err)
	}
}

// FuzzRecipe: no recipe document makes the parser panic, and every finding
// is well formed, with a line inside the document.
func FuzzRecipe(f *testing.F) {
	f.Add([]byte(goodRecipe))
	f.Add([]byte("id: a\nname: A\nsteps:\n  - id: s\n    command: git \"{{p}}\" 'x'\n"))
	f.Add([]byte("id: [\n"))
	f.Add([]byte("a: &x [*x]\n"))
	cx := recipeContext{def: ConfirmPrompt, req: capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"git", "echo"}}}}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep := &reporter{}
		r := parseRecipe(doc, "r.yaml", cx, rep)
		checkFindings(t, doc, rep.list)
		if r != nil && HasErrors(rep.list) {
			t.Fatalf("a recipe with errors: %v", rep.list)
		}
		if r == nil && !HasErrors(rep.list) {
			t.Fatal("no recipe and no error")
		}
	})
}

// FuzzSplitCommand: splitting never panics, and what it returns rejoins
// (each element single-quoted) into a command that splits the same way.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"git status", `a "b c" 'd' e\ f`, "a | b", `"x\"y"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := splitCommand(s)
		if err != nil {
			return
		}
		var quoted []string
		for _, a := range argv {
			quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
		again, err := splitCommand(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, argv) {
			t.Fatalf("%q -> %q -> %q, %v", s, argv, again, err)
		}
	})
}

func TestParseRecipeTests(t *testing.T) {
	dir, fs := recipePack(t, recipeManifest, goodRecipe)
	if len(fs) != 0 {
		t.Fatal(fs)
	}
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := `test_cases:
  - name: ok
    recipe: feature
    parameters: {branch: b}
    env: {HOME: /h}
    mock_commands:
      - command: "git *"
        exit_code: 1
        stdout: out
        stderr: err
    expected_result: precondition_failed
    expected_message: m
`
	cases, fs := ParseRecipeTests([]byte(good), "t.yaml", p)
	if len(fs) != 0 || len(cases) != 1 {
		t.Fatalf("cases %v, findings %v", cases, fs)
	}
	want := RecipeTestCase{Name: "ok", Recipe: "feature", Parameters: map[string]string{"branch": "b"}, Env: map[string]string{"HOME": "/h"},
		Mocks: []RecipeMock{{Command: "git *", ExitCode: 1, Stdout: "out", Stderr: "err"}}, Expected: "precondition_failed", ExpectedMessage: "m", Line: 2}
	if got := cases[0]; got.String() != want.String() || got.Line != want.Line || got.Expected != want.Expected || got.Mocks[0] != want.Mocks[0] || got.Env["HOME"] != "/h" || got.Parameters["branch"] != "b" {
		t.Errorf("case = %+v, want %+v", got, want)
	}
	if !cases[0].Mocks[0].Matches([]string{"git", "checkout", "-b", "x"}) || cases[0].Mocks[0].Matches([]string{"gitx"}) {
		t.Error("mock matching")
	}
	bad := []struct{ name, doc, want string }{
		{"unknown key", "test_cases:\n  - name: a\n    recipe: feature\n    expected_result: success\n    mocks: []\n", "t.yaml:5 recipe-unknown-key"},
		{"unknown recipe", "test_cases:\n  - name: a\n    recipe: nope\n    expected_result: success\n", "t.yaml:3 recipe-tool"},
		{"unknown parameter", "test_cases:\n  - name: a\n    recipe: feature\n    parameters: {zz: 1}\n    expected_result: success\n", "t.yaml:4 recipe-param"},
		{"bad result", "test_cases:\n  - name: a\n    recipe: feature\n    expected_result: fine\n", "t.yaml:4 recipe-expect"},
		{"no result", "test_cases:\n  - name: a\n    recipe: feature\n", "t.yaml:2 recipe-field-missing"},
		{"mock without command", "test_cases:\n  - name: a\n    recipe: feature\n    expected_result: success\n    mock_commands:\n      - exit_code: 1\n", "t.yaml:6 recipe-field-missing"},
		{"syntax", "test_cases: [\n", "t.yaml:2 recipe-syntax"},
	}
	for _, c := range bad {
		cases, fs := ParseRecipeTests([]byte(c.doc), "t.yaml", p)
		var got []string
		for _, f := range fs {
			got = append(got, f.File+":"+strconv.Itoa(f.Line)+" "+f.Rule)
		}
		if cases != nil || !slices.Equal(got, []string{c.want}) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzRecipeTests: no test file makes the parser panic, and its findings
// are well formed.
func FuzzRecipeTests(f *testing.F) {
	f.Add([]byte("test_cases:\n  - name: a\n    recipe: r\n    mock_commands:\n      - command: \"git *\"\n    expected_result: success\n"))
	f.Add([]byte("test_cases: [\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		cases, fs := ParseRecipeTests(doc, "t.yaml", nil)
		checkFindings(t, doc, fs)
		if cases != nil && HasErrors(fs) {
			t.Fatal("cases with errors")
		}
	})
}

// TestRecipeSymlinkEscape: a recipe file or the recipes folder that leads
// outside the pack through a symlink is a path-escape error, not read and
// not silently skipped.
func TestRecipeSymlinkEscape(t *testing.T) {
	outside := t.TempDir()
	writePackFiles(t, outside, map[string]string{"r.yaml": "id: a\nname: A\nsteps:\n  - id: s\n    command: git status\n"})
	for _, c := range []struct{ name, link, target, want string }{
		{"file", "recipes/r.yaml", filepath.Join(outside, "r.yaml"), "recipes/r.yaml:0 error path-escape"},
		{"folder", "recipes", outside, "recipes:0 error path-escape"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pack")
			writePackFiles(t, dir, map[string]string{"SKILL.md": skillMD("pack"), "skill.toml": recipeManifest})
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, c.link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(c.target, filepath.Join(dir, c.link)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range spotsOf(dir, Validate(dir, LoadOptions{})) {
				got = append(got, s.file+":"+strconv.Itoa(s.line)+" "+string(s.sev)+" "+s.rule)
			}
			if !slices.Equal(got, []string{c.want}) {
				t.Errorf("findings %q, want %q", got, c.want)
			}
		})
	}
}

// TestRecipeBindJSON binds arguments given as one JSON object, as
// run_recipe does: ParamValues, then Bind.
func TestRecipeBindJSON(t *testing.T) {
	def := "d"
	r := &Recipe{ID: "b", Parameters: []RecipeParameter{
		{Name: "s", Type: "string", Required: true}, {Name: "i", Type: "integer"}, {Name: "f", Type: "boolean"}, {Name: "o", Type: "string", Required: true, Default: &def},
	}}
	cases := []struct {
		in, want string
		err      bool
	}{
		{`{"s": "x", "i": 3, "f": true}`, `{"f":true,"i":3,"o":"d","s":"x"}`, false},
		{`{"s": "-1", "i": -2}`, `{"i":-2,"o":"d","s":"-1"}`, false},
		{`{"s": ["x"]}`, "", true},
		{`{"s": null}`, "", true},
		{`["s"]`, "", true},
		{`{"i": 1}`, "", true},
	}
	for _, c := range cases {
		var got json.RawMessage
		values, err := ParamValues([]byte(c.in))
		if err == nil {
			got, err = r.Bind(values)
		}
		if (err != nil) != c.err || string(got) != c.want {
			t.Errorf("Bind(ParamValues(%s)) = %s, %v; want %s, error %v", c.in, got, err, c.want, c.err)
		}
	}
	if got := r.Missing(map[string]string{"i": "1"}); !slices.Equal(got, []string{"s"}) {
		t.Errorf("Missing = %q", got)
	}
}

// TestRecipeCheckValues: the values a model gave are checked before the
// person is asked for the rest: a missing required one is not an error
// yet, a value that does not fit or an unknown name is.
func TestRecipeCheckValues(t *testing.T) {
	r := &Recipe{ID: "b", Parameters: []RecipeParameter{
		{Name: "s", Type: "string", Required: true, Validation: regexp.MustCompile(`^[a-z]+$`)}, {Name: "i", Type: "integer", Required: true},
	}}
	cases := []struct {
		in      map[string]string
		wantErr bool
		missing []string
	}{
		{map[string]string{}, false, []string{"s", "i"}},
		{map[string]string{"s": "ok"}, false, []string{"i"}},
		{map[string]string{"s": "--x"}, true, []string{"i"}},
		{map[string]string{"i": "x"}, true, []string{"s"}},
		{map[string]string{"nope": "1"}, true, []string{"s", "i"}},
		{map[string]string{"s": "ok", "i": "2"}, false, nil},
	}
	for _, c := range cases {
		err := r.CheckValues(c.in)
		if (err != nil) != c.wantErr || (err != nil && !errors.Is(err, ErrInvalidInput)) {
			t.Errorf("CheckValues(%v) = %v, want error %v", c.in, err, c.wantErr)
		}
		if got := r.Missing(c.in); !slices.Equal(got, c.missing) {
			t.Errorf("Missing(%v) = %v, want %v", c.in, got, c.missing)
		}
	}
}

// FuzzParamValues feeds a model's run_recipe parameters: every answer is
// values or a *ParamError, never a panic, and values bind or fail cleanly.
func FuzzParamValues(f *testing.F) {
	for _, s := range []string{`{"s": "x", "i": 3, "f": true}`, `{"s": -1e400}`, `[]`, `{"s": {"a": 1}}`, `null`, `{"s": "\u0000"}`, ``} {
		f.Add([]byte(s))
	}
	r := &Recipe{ID: "b", Parameters: []RecipeParameter{{Name: "s", Type: "string", Required: true}, {Name: "i", Type: "integer"}, {Name: "f", Type: "boolean"}, {Name: "n", Type: "number"}}}
	f.Fuzz(func(t *testing.T, in []byte) {
		values, err := ParamValues(in)
		var pe *ParamError
		if err != nil {
			if !errors.As(err, &pe) {
				t.Fatalf("ParamValues(%q): %T %v", in, err, err)
			}
			return
		}
		if err := r.CheckValues(values); err != nil && !errors.As(err, &pe) {
			t.Fatalf("CheckValues: %T %v", err, err)
		}
		if out, err := r.Bind(values); err == nil && !json.Valid(out) {
			t.Fatalf("Bind(%v) = %s: not JSON", values, out)
		}
	})
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"a", "a", true}, {"a", "ab", false}, {"*", "", true}, {"https://x/*", "https://x/a/b", true},
		{"*.example.com:443*", "api.example.com:443 (1.2.3.4)", true}, {"a*b*c", "abc", true}, {"a*b*c", "acb", false},
	} {
		if got := GlobMatch(tc.p, tc.s); got != tc.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", tc.p, tc.s, got, tc.want)
		}
	}
}
