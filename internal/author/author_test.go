package author

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

// TestInitBuildTestValidateLint is the authoring loop end to end, for each
// language and ABI: init → build → test → validate clean → lint clean. A
// language whose toolchain is missing is skipped, saying why.
func TestInitBuildTestValidateLint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds six modules with real toolchains")
	}
	ctx := context.Background()
	cache := t.TempDir()
	for _, lang := range Languages {
		for _, abi := range ABIs {
			t.Run(lang+"-"+abi, func(t *testing.T) {
				name := "hello-" + lang + "-" + abi
				dir := filepath.Join(t.TempDir(), name)
				files, err := Init(dir, InitOptions{Name: name, Lang: lang, ABI: abi})
				if err != nil {
					t.Fatalf("init: %v", err)
				}
				for _, want := range []string{"SKILL.md", "skill.toml", "tools.json", "Makefile"} {
					if !contains(files, want) {
						t.Fatalf("init wrote %v, without %s", files, want)
					}
				}
				tc, err := Toolchain(dir)
				if err != nil || tc != lang {
					t.Fatalf("toolchain = %q, %v; want %q", tc, err, lang)
				}
				var te *ToolchainError
				if _, err := MakeVars(tc, nil, nil); errors.As(err, &te) {
					t.Skipf("the %s toolchain is not installed here: %v", lang, err)
				}
				var out strings.Builder
				if err := Build(ctx, dir, &out); err != nil {
					t.Fatalf("build: %v\n%s", err, out.String())
				}
				results, fs, err := Test(ctx, dir, TestOptions{CacheDir: cache})
				if err != nil || len(fs) > 0 || len(results) == 0 {
					t.Fatalf("test: %v, findings %v, results %+v", err, fs, results)
				}
				p, err := packs.Load(dir, packs.LoadOptions{})
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				if len(p.Findings) > 0 {
					t.Fatalf("validate warnings: %v", p.Findings)
				}
				rt, err := runtime.New(ctx, runtime.Config{CacheDir: cache, PoolSize: -1})
				if err != nil {
					t.Fatal(err)
				}
				defer rt.Close(ctx)
				if fs := rt.Check(ctx, p); len(fs) > 0 {
					t.Fatalf("validate (modules): %v", fs)
				}
				if fs := Lint(dir, p); len(fs) > 0 {
					t.Fatalf("lint: %v", fs)
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		opt  InitOptions
		want error
	}{
		{InitOptions{Name: "Bad_Name", Lang: "go"}, ErrUsage},
		{InitOptions{Name: "ok", Lang: "cobol"}, ErrUsage},
		{InitOptions{Name: "ok", Lang: "go", ABI: "grpc"}, ErrUsage},
	} {
		if _, err := Init(filepath.Join(dir, "x"), tc.opt); !errors.Is(err, tc.want) {
			t.Errorf("Init(%+v) = %v, want %v", tc.opt, err, tc.want)
		}
	}
	full := filepath.Join(dir, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644)
	if _, err := Init(full, InitOptions{Name: "full", Lang: "go"}); !errors.Is(err, ErrExists) {
		t.Fatalf("init into a non-empty folder: %v, want ErrExists", err)
	}
}

func TestMakeVarsNamesTheMissingProgram(t *testing.T) {
	none := func(string) (string, error) { return "", exec.ErrNotFound }
	onlyMake := func(s string) (string, error) {
		if s == "make" {
			return "/usr/bin/make", nil
		}
		return "", exec.ErrNotFound
	}
	noFiles := func(string) (os.FileInfo, error) { return nil, os.ErrNotExist }
	for _, tc := range []struct {
		toolchain string
		look      lookFunc
		missing   string
	}{
		{"go", none, "make"},
		{"go", onlyMake, "go"},
		{"wat", onlyMake, "wat2wasm"},
		{"rust", onlyMake, "/usr/bin/cargo"},
	} {
		_, err := MakeVars(tc.toolchain, tc.look, noFiles)
		var te *ToolchainError
		if !errors.As(err, &te) || te.Missing != tc.missing || te.Install == "" {
			t.Errorf("%s: err = %v, want %s missing with advice", tc.toolchain, err, tc.missing)
		}
	}
}

// writePack writes files into a fresh pack folder named name.
func writePack(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const execSkill = "---\nname: gitpack\ndescription: Shows the branch. Use it when asked which branch is checked out.\n---\n\nUse `branch`.\n"

// TestPackTestStubsCommands: a stub command answers an exec tool, and only
// after the grant allowed the command's name: without the grant the call
// is denied, the denial recorded, and the stub never runs.
func TestPackTestStubsCommands(t *testing.T) {
	dir := writePack(t, "gitpack", map[string]string{
		"SKILL.md":   execSkill,
		"skill.toml": "[skill]\nid = \"t.gitpack\"\n[capabilities]\nterminal_exec = { commands = [\"git\"] }\n",
		"tools.json": `[{"name": "branch", "description": "Show the branch.\nSee the skill.", "input_schema": {"type": "object"}, "run": {"exec": ["git", "branch", "--show-current"]}}]`,
		"tests/branch.yaml": `cases:
  - name: stubbed
    tool: branch
    fakes:
      commands: [{command: git, stdout: "main\n"}]
    expect:
      output_contains: [main]
      exercises: [{capability: terminal_exec, resource: git, allowed: true}]
      exhaustive: true
  - name: not granted
    tool: branch
    grant: none
    fakes:
      commands: [{command: git, stdout: "main\n"}]
    expect:
      error: denied
      exercises: [{capability: terminal_exec, allowed: false}]
  - name: the command fails
    tool: branch
    fakes:
      commands: [{command: git, stderr: "fatal: not a git repository\n", exit_code: 128}]
    expect:
      error: tool_error
      error_contains: not a git repository
`,
	})
	results, fs, err := Test(context.Background(), dir, TestOptions{})
	if err != nil || len(fs) > 0 {
		t.Fatalf("Test = %v, %v; results:\n%s", err, fs, dumpResults(results))
	}
}

// TestPackTestFakesHTTP runs web-reader's real module: a fake answer for a
// granted host comes back through http_request after the grant allowed the
// URL and the address; a host the pack was not granted is denied and never
// reaches the fake.
func TestPackTestFakesHTTP(t *testing.T) {
	src := filepath.Join("..", "..", "wasm-examples", "web-reader")
	if _, err := os.Stat(filepath.Join(src, "bin", "web-reader.wasm")); err != nil {
		t.Skip("web-reader is not built (make examples)")
	}
	dir := filepath.Join(t.TempDir(), "web-reader")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "tests"))
	os.Mkdir(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "fetch.yaml"), []byte(`cases:
  - name: a granted host, faked
    tool: fetch
    input: {url: "https://go.dev/doc/", format: raw}
    fakes:
      http:
        - url: https://go.dev/doc/
          headers: {content-type: text/plain}
          body: "hello from the fake"
    expect:
      output_contains: [hello from the fake]
      exercises:
        - {capability: network, resource: "https://go.dev/doc/", allowed: true}
        - {capability: network, resource: "go.dev:443 (93.184.215.14)", allowed: true}
      exhaustive: true
  - name: a host that is not granted
    tool: fetch
    input: {url: "https://evil.example/steal"}
    fakes:
      http: [{url: "https://evil.example/steal", body: "must not be read"}]
    expect:
      error: denied
      exercises: [{capability: network, resource: "https://evil.example/*", allowed: false}]
  - name: a granted name that resolves to a private address
    tool: fetch
    input: {url: "https://go.dev/"}
    fakes:
      http: [{url: "https://go.dev/", address: 10.0.0.7, body: "must not be read"}]
    expect:
      error: denied
      exercises: [{capability: network, resource: "go.dev:443 (10.0.0.7)", allowed: false}]
`), 0o644)
	results, fs, err := Test(context.Background(), dir, TestOptions{})
	if err != nil || len(fs) > 0 {
		t.Fatalf("Test = %v, %v; results:\n%s", err, fs, dumpResults(results))
	}
	for _, r := range results[1:] {
		if strings.Contains(string(r.Outcome.Output), "must not be read") {
			t.Fatalf("%s: the fake answered a denied request", r.Case.Name)
		}
	}
}

// TestPackTestReportsFailures: wrong expectations fail with reasons, and
// Test says so.
func TestPackTestReportsFailures(t *testing.T) {
	dir := writePack(t, "gitpack", map[string]string{
		"SKILL.md":   execSkill,
		"skill.toml": "[skill]\nid = \"t.gitpack\"\n[capabilities]\nterminal_exec = { commands = [\"git\"] }\n",
		"tools.json": `[{"name": "branch", "description": "Show the branch.\nSee the skill.", "input_schema": {"type": "object"}, "run": {"exec": ["git", "branch"]}}]`,
		"tests/t.yaml": `cases:
  - name: wrong output
    tool: branch
    fakes: {commands: [{command: git, stdout: "\"main\""}]}
    expect: {output: "dev"}
  - name: unlisted exercise
    tool: branch
    fakes: {commands: [{command: git, stdout: "1"}]}
    expect: {exercises: [], exhaustive: true}
  - name: missing exercise
    tool: branch
    fakes: {commands: [{command: git, stdout: "1"}]}
    expect: {exercises: [{capability: network}]}
`,
	})
	var report strings.Builder
	results, _, err := Test(context.Background(), dir, TestOptions{Report: &report})
	if !errors.Is(err, ErrTestsFailed) || len(results) != 3 {
		t.Fatalf("Test = %v with %d results, want ErrTestsFailed and 3", err, len(results))
	}
	for _, r := range results {
		if r.Passed() {
			t.Errorf("%s passed", r.Case.Name)
		}
	}
	for _, want := range []string{"FAIL  wrong output", "want \"dev\"", "unexpected exercise terminal_exec git", "no exercise matches network"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
}

func dumpResults(rs []CaseResult) string {
	var b strings.Builder
	for _, r := range rs {
		report(&b, r)
	}
	return b.String()
}
