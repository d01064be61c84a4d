package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/recipe"
)

// gitRepo makes a repository in a temporary folder with one commit of
// README and the patch files given, and returns it.
func gitRepo(t *testing.T, patches map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("/usr/bin/git"); err != nil {
		t.Skip("git is not installed in /usr/bin")
	}
	dir := t.TempDir()
	g := func(args ...string) string {
		cmd := exec.Command("/usr/bin/git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	files := map[string]string{"README": "hello\n"}
	for k, v := range patches {
		files[k] = v
	}
	writeFiles(t, dir, files)
	g("init", "--quiet")
	g("add", ".")
	g("commit", "--quiet", "-m", "init")
	return dir
}

// TestRecipeCLI runs the example recipe from the command line: list, show,
// a run that succeeds with --yes, one that rolls back, and the exit codes
// of a denied run and of bad parameters.
func TestRecipeCLI(t *testing.T) {
	home := t.TempDir()
	pack := filepath.Join("..", "..", "wasm-examples", "git-flow")
	withHome(t, home, "add", pack, "--grant", "terminal_exec", "--yes").mustCode(t, exitOK)
	ws := gitRepo(t, map[string]string{
		"good.patch": "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world\n",
		"bad.patch":  "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world \n",
	})

	r := withHome(t, home, "recipe", "list", "git-flow").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "feature-branch  5      Feature branch") {
		t.Errorf("list:\n%s", r.stdout)
	}
	r = withHome(t, home, "recipe", "show", "git-flow", "feature-branch").mustCode(t, exitOK)
	for _, want := range []string{"branch (string, required) matching", "2. create-branch: git checkout --quiet -b {{branch}} [confirmation prompt, risk low]", "undoes create-branch"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}

	run := func(code int, args ...string) (recipe.Result, result) {
		t.Helper()
		r := withHome(t, home, append([]string{"recipe", "run", "git-flow", "feature-branch", "--workspace", ws, "--json"}, args...)...).mustCode(t, code)
		var res recipe.Result
		if code == exitOK || code == exitFailure || code == exitDenied {
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("stdout is not one result: %v\n%s", err, r.stdout)
			}
		}
		return res, r
	}
	res, _ := run(exitOK, "--yes", "--param", "branch=feature/a", "--param", "patch=good.patch", "--param", "message=Add world")
	if res.Status != recipe.StatusSuccess || res.StepsCompleted != 5 {
		t.Errorf("good run: %+v", res)
	}
	head, err := os.ReadFile(filepath.Join(ws, ".git", "HEAD"))
	if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/feature/a" {
		t.Errorf("HEAD: %q, %v", head, err)
	}
	// Back to main for the next run, with git through the recipe's own
	// rollback path is not possible here: check out directly.
	if out, err := exec.Command("/usr/bin/git", "-C", ws, "checkout", "--quiet", "main").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	res, r = run(exitFailure, "--yes", "--param", "branch=feature/b", "--param", "patch=bad.patch", "--param", "message=Bad")
	if res.Status != recipe.StatusPartial || res.FailedStep != "check" || !res.RolledBack {
		t.Errorf("bad patch: %+v", res)
	}
	if !strings.Contains(r.stderr, "rollback delete-branch: ok") {
		t.Errorf("progress:\n%s", r.stderr)
	}

	res, r = run(exitDenied, "--param", "branch=feature/c", "--param", "patch=good.patch", "--param", "message=m")
	if res.Status != recipe.StatusFailure || !strings.Contains(r.oneLineError(t), "pass --yes") {
		t.Errorf("without --yes: %+v\n%s", res, r.stderr)
	}
	run(exitInvalid, "--yes", "--param", "branch=--upload-pack=x", "--param", "patch=good.patch", "--param", "message=m")
	run(exitUsage, "--yes", "--param", "patch=good.patch")
	run(exitUsage, "--yes", "--param", "nope=1", "--param", "branch=b", "--param", "patch=good.patch", "--param", "message=m")
	withHome(t, home, "recipe", "show", "git-flow", "nope").mustCode(t, exitUsage)
}

// TestRecipeTestCommand runs the example pack's recipe tests, and a case
// that fails.
func TestRecipeTestCommand(t *testing.T) {
	home := t.TempDir()
	pack := filepath.Join("..", "..", "wasm-examples", "git-flow")
	r := withHome(t, home, "recipe", "test", pack).mustCode(t, exitOK)
	if strings.Count(r.stdout, "ok    ") != 4 {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	dir := filepath.Join(t.TempDir(), "git-flow")
	if err := os.CopyFS(dir, os.DirFS(pack)); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"tests/recipe_test.yaml": "test_cases:\n  - name: wrong\n    recipe: feature-branch\n    parameters: {branch: b, patch: p, message: m}\n    expected_result: success\n"})
	r = withHome(t, home, "recipe", "test", dir, "--json").mustCode(t, exitFailure)
	var got recipeTestResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &got); err != nil || got.Pass || !strings.Contains(got.Error, "precondition_failed, expected success") {
		t.Errorf("a failing case: %+v, %v\n%s", got, err, r.stdout)
	}
	writeFiles(t, dir, map[string]string{"tests/recipe_test.yaml": "test_cases:\n  - name: wrong\n    recipe: nope\n    expected_result: success\n"})
	r = withHome(t, home, "recipe", "test", dir).mustCode(t, exitFailure)
	if !strings.Contains(r.stderr, "recipe_test.yaml:3: error: recipe-tool") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// TestRecipeRunAsksParams: at a terminal, packs recipe run asks for a
// required parameter not given with --param; an empty answer stops with a
// usage error, and nothing runs.
func TestRecipeRunAsksParams(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", filepath.Join("..", "..", "wasm-examples", "git-flow"), "--grant", "terminal_exec", "--yes").mustCode(t, exitOK)
	ws := gitRepo(t, map[string]string{"good.patch": "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world\n"})
	for _, tt := range []struct {
		name, input string
		code        int
		branch      string
	}{
		{"answered", "Add world\n", exitOK, "feature/asked"},
		{"left empty", "\n", exitUsage, "main"},
		{"end of input", "", exitUsage, "main"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			c := &cli{stdin: bufio.NewReader(strings.NewReader(tt.input)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
			code := c.run(context.Background(), []string{"--home", home, "recipe", "run", "git-flow", "feature-branch", "--workspace", ws, "--yes",
				"--param", "branch=feature/asked", "--param", "patch=good.patch"})
			if code != tt.code || !strings.Contains(errb.String(), "message (string, matching ^[^-].{0,199}$)> ") {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out.String(), errb.String())
			}
			head, err := os.ReadFile(filepath.Join(ws, ".git", "HEAD"))
			if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/"+tt.branch {
				t.Errorf("HEAD: %q, %v", head, err)
			}
			if tt.code == exitOK {
				if out, err := exec.Command("/usr/bin/git", "-C", ws, "checkout", "--quiet", "main").CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}
