package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/store"
)

// gitFlowChat installs the git-flow example with its terminal_exec grant,
// opens a chat with it attached, and makes the chat's workspace a git
// repository holding README and two patches. It returns the chat's id and
// workspace.
func gitFlowChat(t *testing.T, e *env) (string, string) {
	t.Helper()
	git, err := exec.LookPath("/usr/bin/git")
	if err != nil {
		t.Skip("git is not installed in /usr/bin")
	}
	src, _ := filepath.Abs(filepath.Join("..", "..", "wasm-examples", "git-flow"))
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": src, "grant": []string{"terminal_exec"}}, nil)
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"git-flow"}}, &c)
	ws := filepath.Join(e.app.Home.WorkspacesDir(), c.ID)
	files := map[string]string{
		"README":     "hello\n",
		"good.patch": "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world\n",
		"bad.patch":  "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world \n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "."}, {"commit", "--quiet", "-m", "init"}} {
		gitRun(t, git, ws, args...)
	}
	return c.ID, ws
}

func gitRun(t *testing.T, git, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRecipeParamsAPI: a run_recipe call without a required parameter asks
// the person through the chat's events (params); the answer is POSTed to
// /v1/invocations/{id}/parameters; a second answer, or one to a run that
// does not wait, is a 404, and an empty answer a 400.
func TestRecipeParamsAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	id, ws := gitFlowChat(t, e)
	e.model.Push(
		calls(call(chat.ToolRunRecipe, `{"pack_id":"git-flow","recipe":"feature-branch","parameters":{"branch":"feature/api"}}`)),
		llmtest.Turn{Text: "Cancelled."},
	)
	ev := e.stream(id)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+id+"/messages", map[string]string{"text": "branch"}, nil)
	p := ev.next("pending")
	e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/approve", nil, nil)
	q := ev.next("params")
	inv := q.Data["invocation"].(string)
	var names []string
	for _, pi := range q.Data["params"].([]any) {
		names = append(names, pi.(map[string]any)["name"].(string))
	}
	if inv != p.Data["invocation"] || strings.Join(names, ",") != "patch,message" {
		t.Fatalf("params event %v", q.Data)
	}
	if code := e.do("POST", "/v1/invocations/"+inv+"/parameters", map[string]any{}, nil); code != http.StatusBadRequest {
		t.Errorf("an empty answer: %d, want 400", code)
	}
	e.must(http.StatusOK, "POST", "/v1/invocations/"+inv+"/parameters", map[string]any{"cancel": true}, nil)
	if code := e.do("POST", "/v1/invocations/"+inv+"/parameters", map[string]any{"cancel": true}, nil); code != http.StatusNotFound {
		t.Errorf("answering twice: %d, want 404", code)
	}
	done := ev.next("tool_done")
	if done.Data["error_kind"] != chat.ErrKindDenied || !strings.Contains(done.Data["content"].(string), "did not give") {
		t.Errorf("the cancelled run: %v", done.Data)
	}
	ev.next("turn_done")
	if code := e.doAuth("", "POST", "/v1/invocations/"+inv+"/parameters", map[string]any{"cancel": true}, nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if b := gitRun(t, "/usr/bin/git", ws, "rev-parse", "--abbrev-ref", "HEAD"); b != "main" {
		t.Errorf("HEAD on %s after a run that never started", b)
	}
}

// TestBrowserRecipe drives the git-flow example from the web app in
// headless Chromium: the model opens the pack's docs and runs the recipe
// without the commit message; the person approves the run, gives the
// message in the card's form, and approves each call on its own row, one
// by one; the branch holds the commit. Then a run whose check fails: its
// row fails, the rollback's rows appear and run, and the repository is
// back on main.
func TestBrowserRecipe(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	id, ws := gitFlowChat(t, e)
	e.model.Push(
		calls(call(chat.ToolOpenDocs, `{"pack_id":"git-flow"}`)),
		calls(call(chat.ToolRunRecipe, `{"pack_id":"git-flow","recipe":"feature-branch","parameters":{"branch":"feature/web","patch":"good.patch"}}`)),
		llmtest.Turn{Text: "The branch is made."},
		calls(call(chat.ToolRunRecipe, `{"pack_id":"git-flow","recipe":"feature-branch","parameters":{"branch":"feature/bad","patch":"bad.patch","message":"Bad"}}`)),
		llmtest.Turn{Text: "The check failed; it was rolled back."},
	)
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", `document.body.dataset.chat === `+jsString(id))
	b.step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "make a feature branch with good.patch"), chromedp.Click(chromedp.CSS("#send")))
	// open_docs of the attached pack is approved by the attach: no card.
	b.poll("run_recipe asks", `!!document.querySelector(".tool-card.pending") && document.querySelector(".tool-card.pending").textContent.includes("run_recipe")`)
	b.step("start the run", chromedp.Click(chromedp.CSS(".tool-card.pending button.run")))
	b.step("the form asks for the message", chromedp.WaitVisible(chromedp.CSS(`form.recipe-params input[name="message"]`)))
	b.step("give the message", chromedp.SendKeys(chromedp.CSS(`form.recipe-params input[name="message"]`), "Add world"),
		chromedp.Click(chromedp.CSS(`form.recipe-params button[type="submit"]`)))
	b.poll("the card lists the run's calls", count(".recipe-card .recipe-steps .recipe-step")+` === 9`)
	plan := must(t, b.ctx, chromedp.Text(chromedp.CSS(".recipe-card .recipe-steps")))
	for _, want := range []string{"git checkout --quiet -b feature/web", "git -c user.name=packs -c user.email=packs@localhost commit --quiet --no-verify -m Add world", "risk moderate", "confirmation auto"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the card lacks %q:\n%s", want, plan)
		}
	}
	// One row asks at a time; each is approved on its own.
	for i := 1; i <= 9; i++ {
		b.step("a row asks", chromedp.WaitVisible(chromedp.CSS(".recipe-step.pending button.run")))
		if i == 4 {
			b.shot("web-recipe-step")
		}
		if n := must(t, b.ctx, chromedp.Evaluate[int](count(".recipe-step.pending"))); n != 1 {
			t.Fatalf("%d rows ask at once", n)
		}
		b.step("run the row", chromedp.Click(chromedp.CSS(".recipe-step.pending button.run")))
		b.poll("the row ran", count(".recipe-step.ok")+" >= "+jsInt(i))
	}
	b.poll("the run succeeded", count(".recipe-card.done")+` === 1`)
	if br := gitRun(t, "/usr/bin/git", ws, "rev-parse", "--abbrev-ref", "HEAD"); br != "feature/web" {
		t.Errorf("HEAD is on %s, want feature/web", br)
	}
	b.poll("the reply arrives", `document.querySelector("#log").textContent.includes("The branch is made.")`)
	b.poll("Send works again", `!document.querySelector("#send").disabled`)
	gitRun(t, "/usr/bin/git", ws, "checkout", "--quiet", "main")

	b.step("send another", chromedp.SendKeys(chromedp.CSS("#composer"), "now bad.patch"), chromedp.Click(chromedp.CSS("#send")))
	b.poll("run_recipe asks again", count(".tool-card.pending")+` === 1`)
	b.step("start it", chromedp.Click(chromedp.CSS(".tool-card.pending button.run")))
	// Approve every row as it asks until the run ends.
	b.poll("approve row by row until the run fails", `(() => {
		const r = document.querySelector(".recipe-step.pending .actions button.run:not([disabled])");
		if (r) r.click();
		return document.querySelectorAll(".recipe-card.failed").length === 1; })()`)
	card := `[...document.querySelectorAll(".recipe-card")].pop()`
	b.poll("the check's row failed", card+`.querySelector('.recipe-step.failed[data-invocation$=".step.check"]') !== null`)
	b.poll("the rollback ran", `!`+card+`.querySelector(".recipe-rollback").hidden && `+card+`.querySelectorAll(".recipe-rollback .recipe-step.ok").length === 3`)
	rb := must(t, b.ctx, chromedp.Evaluate[string](card+`.querySelector(".recipe-rollback").textContent`))
	if !strings.Contains(rb, "discard-change") || !strings.Contains(rb, "delete-branch") {
		t.Errorf("the rollback rows: %q", rb)
	}
	b.poll("the result says rolled back", card+`.querySelector(".result").textContent.includes("rolled_back")`)
	b.step("scroll to the card", chromedp.Evaluate[chromedp.Void](card+`.scrollIntoView()`))
	b.shot("recipe-rollback")
	if br := gitRun(t, "/usr/bin/git", ws, "rev-parse", "--abbrev-ref", "HEAD"); br != "main" {
		t.Errorf("HEAD is on %s after the rollback, want main", br)
	}
	// A reload draws both runs again from the chat's history.
	b.poll("the second reply arrives", `document.querySelector("#log").textContent.includes("it was rolled back.")`)
	b.step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.poll("both runs are drawn again", count(".recipe-card")+` === 2 && `+count(".recipe-card .recipe-rollback:not([hidden]) .recipe-step.ok")+` === 3 && `+
		count(".recipe-step.ok")+` === 9 + 6 + 3`)
	if out := gitRun(t, "/usr/bin/git", ws, "branch", "--list", "feature/bad"); out != "" {
		t.Errorf("the branch is still there: %q", out)
	}
}

func jsInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestBrowserQueue: a call of packs mcp waits in the queue; the web app
// shows it under the header, the person opts in to desktop notifications
// with a click (the browser's Notification API, stubbed: headless Chromium
// has no desktop), a second call raises one, and Approve and Deny decide
// the waiting calls.
func TestBrowserQueue(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{noModel: true})
	other, err := store.Open(context.Background(), e.app.Home.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	q := approve.New(other, approve.Options{Client: "mcp:claude-desktop", Timeout: 60 * time.Second, Poll: 10 * time.Millisecond})
	wait := func(inv, tool string) <-chan capability.Verdict {
		got := make(chan capability.Verdict, 1)
		w := q.Waiter() // one per call
		go func() {
			v, err := w.Approve(context.Background(), capability.Pending{Invocation: inv, Pack: "notes", Tool: tool, Arguments: json.RawMessage(`{"text":"hi"}`)})
			if err != nil {
				t.Errorf("Approve %s: %v", inv, err)
			}
			got <- v
		}()
		return got
	}
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#banner")))
	b.step("a browser that can notify", chromedp.Evaluate[chromedp.Void](`window.shown = []; window.Notification = class {
		static permission = "default";
		static requestPermission() { this.permission = "granted"; return Promise.resolve("granted"); }
		constructor(title, opt) { window.shown.push(title + ": " + opt.body); }
	};`))
	first := wait("inv_queue_1", "echo")
	b.poll("the queue shows the call", `document.querySelector("#queue-panel:not([hidden]) [data-queue=inv_queue_1]") !== null`)
	if shown := must(t, b.ctx, chromedp.Evaluate[int](`window.shown.length`)); shown != 0 {
		t.Errorf("%d notifications before the person opted in", shown)
	}
	b.step("opt in to notifications", chromedp.Click(chromedp.CSS("#queue-panel button.notify")))
	b.poll("the button is gone", `document.querySelector("#queue-panel button.notify") === null`)
	second := wait("inv_queue_2", "note")
	b.poll("the second call raises a notification", `window.shown.length === 1 && window.shown[0].includes("notes__note from mcp:claude-desktop")`)
	b.poll("both calls show", count("#queue-panel .queue-item")+` === 2`)
	b.shot("web-queue")
	b.step("approve the first", chromedp.Click(chromedp.CSS(`[data-queue=inv_queue_1] button.run`)))
	b.step("deny the second", chromedp.Click(chromedp.CSS(`[data-queue=inv_queue_2] button.deny`)))
	for _, c := range []struct {
		got  <-chan capability.Verdict
		want capability.Verdict
	}{{first, capability.RunOnce}, {second, capability.Deny}} {
		select {
		case v := <-c.got:
			if v != c.want {
				t.Errorf("verdict %v, want %v", v, c.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a waiting call never saw the decision")
		}
	}
	b.poll("the panel empties", `document.querySelector("#queue-panel").hidden`)
}
