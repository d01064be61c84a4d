package chat

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/recipe"
)

var gitFlowPack = filepath.Join("..", "..", "wasm-examples", "git-flow")

const (
	goodPatch = "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world\n"
	badPatch  = "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world \n"
)

// gitWorkspace makes a git repository with one commit of README and the
// two patches, for a chat to work in.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("/usr/bin/git"); err != nil {
		t.Skip("git is not installed in /usr/bin")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"README": "hello\n", "good.patch": goodPatch, "bad.patch": badPatch} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "."}, {"commit", "--quiet", "-m", "init"}} {
		gitIn(t, dir, args...)
	}
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("/usr/bin/git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// asker is a person who also answers parameter questions and watches the
// run: the terminal and the web app are both.
type asker struct {
	person
	answer  map[string]string // nil: declines
	mu      sync.Mutex
	asked   []ParamQuestion
	started []RecipeRun
	calls   []recipe.Call
}

func (a *asker) AskParams(_ context.Context, q ParamQuestion) (map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if a.answer == nil {
		return nil, errors.New("the person closed the form")
	}
	return a.answer, nil
}

func (a *asker) RecipeStarted(r RecipeRun) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started = append(a.started, r)
}

func (a *asker) RecipeCall(_ string, c recipe.Call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, c)
}

// TestRunRecipeChat runs the git-flow example from a chat with the fake
// model: it calls open_docs, sees the recipe, then run_recipe; the person
// approves the run and each step; the steps run real git in the chat's
// workspace, each its own audited invocation under the run id.
func TestRunRecipeChat(t *testing.T) {
	type tc struct {
		name       string
		params     string
		who        func() capability.Approver
		wantStatus recipe.Status
		wantKind   string // the tool result's error kind; "" for success
		wantBranch string // the branch HEAD is on afterwards
		wantAsked  []string
	}
	yes := func() capability.Approver { return &person{} }
	cases := []tc{
		{name: "success", params: `{"branch":"feature/a","patch":"good.patch","message":"Add world"}`, who: yes,
			wantStatus: recipe.StatusSuccess, wantBranch: "feature/a"},
		{name: "failing check rolls back", params: `{"branch":"feature/b","patch":"bad.patch","message":"Bad"}`, who: yes,
			wantStatus: recipe.StatusPartial, wantKind: ErrKindToolFailed, wantBranch: "main"},
		{name: "denied step mid-recipe", params: `{"branch":"feature/c","patch":"good.patch","message":"m"}`,
			who: func() capability.Approver {
				return &person{decide: func(p capability.Pending) capability.Verdict {
					if strings.HasSuffix(p.Invocation, ".step.commit") {
						return capability.Deny
					}
					return capability.RunOnce
				}}
			},
			wantStatus: recipe.StatusPartial, wantKind: ErrKindToolFailed, wantBranch: "main"},
		{name: "missing parameter asked of the person", params: `{"branch":"feature/d","patch":"good.patch"}`,
			who:        func() capability.Approver { return &asker{answer: map[string]string{"message": "From the person"}} },
			wantStatus: recipe.StatusSuccess, wantBranch: "feature/d", wantAsked: []string{"message"}},
		{name: "missing parameter declined", params: `{"branch":"feature/e"}`,
			who:      func() capability.Approver { return &asker{} },
			wantKind: ErrKindDenied, wantBranch: "main", wantAsked: []string{"patch", "message"}},
		{name: "missing parameter, nobody to ask", params: `{"branch":"feature/f"}`, who: yes,
			wantKind: ErrKindArguments, wantBranch: "main"},
		{name: "bad parameter", params: `{"branch":"--upload-pack=x","patch":"good.patch","message":"m"}`, who: yes,
			wantKind: ErrKindArguments, wantBranch: "main"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, install{gitFlowPack: {capability.TerminalExec}})
			ws := gitWorkspace(t)
			srv := llmtest.NewServer(
				calls(call(ToolOpenDocs, `{"pack_id":"git-flow"}`)),
				calls(call(ToolRunRecipe, `{"pack_id":"git-flow","recipe":"feature-branch","parameters":`+c.params+`}`)),
				llmtest.Turn{Text: "Done."},
			)
			defer srv.Close()
			s := h.open(Options{Attach: []string{"git-flow"}, Workspace: ws})
			who := c.who()
			reply, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "make a feature branch", TurnOptions{Approver: who})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if !reqs[0].HasTool(ToolRunRecipe) {
				t.Errorf("run_recipe is not offered: %v", reqs[0].ToolNames())
			}
			docs := toolResult(t, reqs[1].Messages, reqs[1].Messages[len(reqs[1].Messages)-2].ToolCalls[0].ID).Content
			if !strings.Contains(docs, "### feature-branch: Feature branch with a checked patch") || !strings.Contains(docs, "run_recipe") {
				t.Errorf("open_docs does not show the recipes: %s", docs)
			}
			if len(reply.Calls) != 2 {
				t.Fatalf("got %d calls", len(reply.Calls))
			}
			run := reply.Calls[1]
			if got := run.ErrorKind; got != c.wantKind {
				t.Fatalf("run_recipe: kind %q, want %q: %s", got, c.wantKind, run.Content)
			}
			if branch := gitIn(t, ws, "rev-parse", "--abbrev-ref", "HEAD"); branch != c.wantBranch {
				t.Errorf("HEAD is on %s, want %s", branch, c.wantBranch)
			}
			if a, ok := who.(*asker); ok {
				var got []string
				for _, q := range a.asked {
					for _, p := range q.Params {
						got = append(got, p.Name)
					}
				}
				if !slices.Equal(got, c.wantAsked) {
					t.Errorf("the person was asked for %v, want %v", got, c.wantAsked)
				}
			}
			if c.wantStatus == "" {
				if strings.Contains(run.Content, `"run":"rcp_`) {
					t.Errorf("a run started: %s", run.Content)
				}
				return
			}
			// The model gets spec 001's RecipeResult: as the result, or
			// as the output of the failure.
			var body struct {
				Output recipe.Result `json:"output"`
			}
			res := body.Output
			if c.wantKind == "" {
				err = json.Unmarshal([]byte(run.Content), &res)
			} else {
				err = json.Unmarshal([]byte(run.Content), &body)
				res = body.Output
			}
			if err != nil || res.Status != c.wantStatus || !strings.HasPrefix(res.Run, "rcp_") {
				t.Fatalf("result %+v (%v): %s", res, err, run.Content)
			}
			if c.wantStatus == recipe.StatusPartial && (!res.RolledBack || res.FailedPhase != recipe.PhaseStep) {
				t.Errorf("not rolled back: %+v", res)
			}
			// Every call of the run is its own audited invocation under the
			// run id, beside the run_recipe call itself.
			var rows []string
			for _, e := range h.invocations() {
				if strings.HasPrefix(e.Invocation, res.Run+".") {
					rows = append(rows, e.Invocation)
					if !strings.Contains(string(e.Body), `"chat":"`+s.ID()+`"`) {
						t.Errorf("audit row %s is not tied to the chat: %s", e.Invocation, e.Body)
					}
				}
			}
			var want []string
			for _, call := range res.Calls {
				if !call.Skipped {
					want = append(want, call.Invocation)
				}
			}
			if len(want) == 0 || !slices.Equal(rows, want) {
				t.Errorf("audited %v, want %v", rows, want)
			}
			if p, ok := who.(*person); ok {
				var steps int
				for _, pd := range p.asked() {
					if strings.HasPrefix(pd.Invocation, res.Run+".step.") {
						steps++
					}
				}
				if steps == 0 {
					t.Error("the person was never asked about a step")
				}
			}
			if a, ok := who.(*asker); ok && (len(a.started) != 1 || a.started[0].Run != res.Run || len(a.calls) != len(res.Calls)) {
				t.Errorf("the watcher saw %d starts, %d calls; the run made %d", len(a.started), len(a.calls), len(res.Calls))
			}
		})
	}
}
