package terminal

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/store"
)

// TestRecipeAtTheTerminal: the model runs the git-flow recipe without the
// commit message; the person approves the run, types the message when
// asked, allows the recipe's calls for the chat, and sees each call end.
// A second run where the person leaves the value empty does not start.
func TestRecipeAtTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("/usr/bin/git"); err != nil {
		t.Skip("git is not installed in /usr/bin")
	}
	ctx := context.Background()
	src, _ := filepath.Abs(filepath.Join("..", "..", "..", "wasm-examples", "git-flow"))
	e := execEnv(t, src, "git-flow")
	ws := t.TempDir()
	patch := "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world\n"
	for name, content := range map[string]string{"README": "hello\n", "good.patch": patch} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "."}, {"commit", "--quiet", "-m", "init"}} {
		cmd := exec.Command("/usr/bin/git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir, cmd.Env = ws, []string{"PATH=/usr/bin:/bin", "HOME=" + ws}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run := `{"pack_id":"git-flow","recipe":"feature-branch","parameters":{"branch":"feature/t","patch":"good.patch"}}`
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc(chat.ToolRunRecipe, run)}},
		llmtest.Turn{Text: "Branch made."},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc(chat.ToolRunRecipe, run)}},
		llmtest.Turn{Text: "Cancelled."},
	)
	defer srv.Close()
	s, err := chat.Open(ctx, e.deps, chat.Options{Attach: []string{"git-flow"}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{"make the branch", "r", "Add world", "a", "again", "r", "", "/exit"}, "\n") + "\n"
	var out bytes.Buffer
	if err := Run(ctx, s, Options{In: strings.NewReader(in), Out: &out, Provider: openAI(t, srv)}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"+-- tool call: run_recipe (pack git-flow)",
		"|   touches: asks you for message",
		"+-- recipe feature-branch (pack git-flow) needs values the model did not give",
		"|   message: the commit message\nmessage (string, matching ^[^-].{0,199}$)> ",
		"+-- tool call: git-flow__recipe_feature-branch (pack git-flow)",
		"|   touches: command_exists git",
		"  step create-branch: ok\n",
		"  verification verify-2: ok\n",
		"  -> run_recipe: approved by person at the terminal: ok (",
		"assistant> Branch made.",
		"  the run is cancelled\n",
		"  -> run_recipe: approved by person at the terminal: denied: ",
		"assistant> Cancelled.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "+-- tool call: git-flow__recipe_feature-branch"); n != 1 {
		t.Errorf("the person was asked %d times about the recipe's calls, want once (then allowed for the chat)", n)
	}
}

// execEnv is a state directory with the pack at src installed under name
// and granted terminal_exec.
func execEnv(t *testing.T, src, name string) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	home, err := dist.OpenHome(ctx, dir, dist.HomeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := home.Stage(ctx, src, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit(ctx, []capability.Name{capability.TerminalExec}); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, home.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutGrant(ctx, name, "", capability.UserGrant{Capability: capability.TerminalExec, Scope: capability.ScopePersistent}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e, err := openEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

// TestOnceYesIsNotAPersonForAlways: packs chat --message --yes approves the
// turn's calls in advance, as packs recipe run --yes approves a run: a
// recipe step marked always (or too risky for the policy) still needs a
// person looking at it, so with nobody at a terminal it is denied, and the
// steps before it ran.
func TestOnceYesIsNotAPersonForAlways(t *testing.T) {
	if _, err := exec.LookPath("/usr/bin/git"); err != nil {
		t.Skip("git is not installed in /usr/bin")
	}
	src := filepath.Join(t.TempDir(), "careful")
	files := map[string]string{
		"SKILL.md":       "---\nname: careful\ndescription: A pack with a step that always asks.\n---\n\n# careful\n",
		"skill.toml":     "[skill]\nid = \"careful\"\nname = \"careful\"\nversion = \"1.0.0\"\ndescription = \"t\"\n\n[capabilities]\nterminal_exec = { commands = [\"git\"] }\n",
		"recipes/r.yaml": "id: r\nname: R\nsteps:\n  - id: look\n    command: git --version\n  - id: careful\n    command: git --version\n    confirmation: always\n",
	}
	for rel, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := execEnv(t, src, "careful")
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc(chat.ToolRunRecipe, `{"pack_id":"careful","recipe":"r"}`)}},
		llmtest.Turn{Text: "Done."},
	)
	defer srv.Close()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{Attach: []string{"careful"}})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := Once(context.Background(), s, "run it", OnceOptions{Out: &out, Err: &errOut, Provider: openAI(t, srv), Yes: true}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "approved by --yes: tool_failed: runtime: tool failed: recipe careful r: partial at step careful") ||
		!strings.Contains(got, "denied by gate") {
		t.Errorf("the always step was not refused:\n%s", got)
	}
}
