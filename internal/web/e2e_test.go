package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// chromiumFlags are the flags that work in this environment: no sandbox
// (containers), no GPU, no network chatter of the browser's own.
var chromiumFlags = []string{"disable-quic", "disable-background-networking", "disable-component-update", "disable-sync"}

// findChromium returns the browser's path. Under CI (CI=1) a missing
// browser fails the test: the e2e test must run there. Elsewhere it skips.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("PACKS_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium found: install it (Debian: apt-get install chromium) or set PACKS_CHROMIUM to its path"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must run the end-to-end test")
	}
	t.Skip(msg)
	return ""
}

// screenshotDir is where the e2e test leaves its screenshots:
// $PACKS_E2E_ARTIFACTS, else a folder under the system's temp dir.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("PACKS_E2E_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "packs-web-e2e")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// replyMarkdown is the fake model's last reply in TestBrowser: Markdown
// with a table, and raw HTML that must show as text.
const replyMarkdown = "**Your note** is in `note.md`.\n\n| service | errors |\n|---|---|\n| nginx | 77 |\n\n<script>window.pwned = 1</script>\n"

// TestBrowser drives the app in headless Chromium: open it, attach a pack,
// send a message to the fake model, run the calls from their tool cards
// and see the result (a table for a list of records, the raw JSON one click
// away) and the artifact, see which grant allows a call, deny calls and see
// the denial, read the reply rendered from Markdown, then read and verify
// the audit trail. Its screenshots (web-*.png) are the README's.
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	e.install("terminal_exec")
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)),
		calls(call("notes__note", `{}`)),
		calls(call("notes__rows", `{}`)),
		calls(call(chat.ToolExec, `{"pack_id":"notes","command":"sh","args":["-c","uptime"]}`)),
		calls(call("notes__echo", `{"text":"do not"}`)),
		llmtest.Turn{Text: replyMarkdown},
	)
	shots := screenshotDir(t)

	b := openBrowser(t, chromium, shots)
	ctx, step, shot, poll := b.ctx, b.step, b.shot, b.poll

	// The address packs serve prints: the page trades the token for a
	// cookie and drops it from the address.
	step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	if loc := must(t, ctx, chromedp.Location()); strings.Contains(loc, "token") {
		t.Errorf("the address still holds the token: %s", loc)
	}
	poll("the empty chat list says so", `document.querySelector("#chat-list").textContent.includes("No chats yet")`)
	step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	poll("the chat opens", chatOpen)
	poll("the chat is listed", count("#chat-list .chat-item.active")+` === 1`)
	poll("notes is offered", `[...document.querySelectorAll("#attach-select option")].some(o => o.value === "notes")`)
	step("attach notes", chromedp.SetValue(chromedp.CSS("#attach-select"), "notes"), chromedp.Click(chromedp.CSS("#attach-btn")))
	poll("notes is attached", count("#attached .detach")+` === 1`)

	step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "write me a note"), chromedp.Click(chromedp.CSS("#send")))
	poll("the chat is titled by the message", `document.querySelector("#chat-list .chat-item.active").textContent.includes("write me a note")`)
	// Attaching notes was the person's consent to list its tools:
	// enable_tools runs without a card asking, and says why.
	poll("enable_tools ran, approved by the attach", count(".tool-card.done")+` === 1 && document.querySelector(".tool-card.done").textContent.includes("approved by attach, by attaching the pack to this chat")`)
	step("the note card asks", chromedp.WaitVisible(chromedp.CSS(".tool-card:not(.done) button.run")))
	caps := must(t, ctx, chromedp.Text(chromedp.CSS(".tool-card:not(.done) .caps")))
	// A pack's grants hold for each of its tools: note may run sh too.
	if !strings.Contains(caps, "terminal_exec") {
		t.Errorf("the note card does not say what is at stake: %q", caps)
	}
	// The person takes a moment: the card then says how long the call
	// waited for them, and how long it ran.
	time.Sleep(300 * time.Millisecond)
	step("run note", chromedp.Click(chromedp.CSS(".tool-card:not(.done) button.run")))
	poll("note ran and made an artifact", count(".tool-card.done")+` === 2 && `+count(".tool-card .artifact a.open")+` === 1`)
	poll("the note card says it waited for the person and ran", `[...document.querySelectorAll(".tool-card.done")].some(c => {
		const m = c.textContent.match(/waited ([\d.]+) (ms|s|min) for you, ran ([\d.]+) ms/);
		return m && (m[2] !== "ms" || Number(m[1]) >= 300);
	})`)
	step("the rows card asks", chromedp.WaitVisible(chromedp.CSS(".tool-card:not(.done) button.run")))
	step("run rows", chromedp.Click(chromedp.CSS(".tool-card:not(.done) button.run")))
	poll("the list of records is a table", `[...document.querySelectorAll(".tool-card.done table.records")].some(t => t.rows.length === 4 && t.textContent.includes("checkout-api"))`)
	poll("show the raw JSON", `(() => { [...document.querySelectorAll(".tool-card.done")].find(c => c.textContent.includes("checkout-api")).querySelector(".raw-toggle").click(); return true; })()`)
	poll("the raw JSON shows", `[...document.querySelectorAll(".tool-card pre.raw")].some(p => !p.hidden && p.textContent.includes("checkout-api"))`)

	poll("back to the readable view", `(() => { [...document.querySelectorAll(".tool-card.done")].find(c => c.textContent.includes("checkout-api")).querySelector(".raw-toggle").click(); return true; })()`)

	// The exec card says plainly what will happen and which grant allows it.
	step("the exec card asks", chromedp.WaitVisible(chromedp.CSS(".tool-card.pending button.deny")))
	stake := must(t, ctx, chromedp.Text(chromedp.CSS(".tool-card.pending .caps")))
	for _, want := range []string{"notes asks to", "terminal_exec", "run a command on this machine", "sh", "allowed by your grant"} {
		if !strings.Contains(stake, want) {
			t.Errorf("the approval card lacks %q: %q", want, stake)
		}
	}
	shot("web-approval")
	step("deny exec", chromedp.Click(chromedp.CSS(".tool-card.pending button.deny")))
	poll("exec was denied", count(".tool-card.denied")+` === 1`)

	step("the echo card asks", chromedp.WaitVisible(chromedp.CSS(".tool-card.pending button.deny")))
	step("deny echo", chromedp.Click(chromedp.CSS(".tool-card.pending button.deny")))
	poll("echo was denied", count(".tool-card.denied")+` === 2`)
	denied := must(t, ctx, chromedp.Text(chromedp.CSS(".tool-card.denied")))
	if !strings.Contains(denied, "Denied") || !strings.Contains(denied, "denied by web") {
		t.Errorf("the denied card says %q", denied)
	}

	// The reply is Markdown, rendered; its raw HTML shows as text.
	poll("the reply arrives", `!!document.querySelector(".msg.assistant.md strong")`)
	md := must(t, ctx, chromedp.Evaluate[map[string]any](`(() => { const m = [...document.querySelectorAll(".msg.assistant.md")].pop();
		return {strong: m.querySelector("strong")?.textContent, table: m.querySelectorAll("table td").length, scripts: m.querySelectorAll("script").length,
			text: m.textContent, pwned: window.pwned === 1}; })()`))
	if md["strong"] != "Your note" || md["table"] != float64(2) || md["scripts"] != float64(0) || md["pwned"] == true ||
		!strings.Contains(md["text"].(string), "<script>window.pwned = 1</script>") {
		t.Errorf("the reply as rendered: %v", md)
	}
	poll("Send works again", `!document.querySelector("#send").disabled`)
	step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	shot("web-chat")

	note := must(t, ctx, chromedp.Evaluate[string](`fetch(document.querySelector(".tool-card .artifact a.open").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if note != "# Note\n" {
		t.Errorf("opening the artifact gave %q", note)
	}
	poll("the note is among the chat's files", `document.querySelector("#files").textContent.includes("note.md")`)

	// A reload draws the same chat from packs.db, once.
	step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	poll("the chat is drawn again", count(".tool-card")+` === 5 && `+count(".msg.assistant.md table")+` === 1`)

	step("open the audit page", chromedp.Click(chromedp.CSS("#nav-audit")))
	// Five tool calls, and opening the artifact: a read of the workspace,
	// audited like any call.
	poll("the audit rows show", count(`#audit-table tbody tr[data-kind="invocation"]`)+` === 6`)
	step("filter by kind", chromedp.SetValue(chromedp.CSS("#audit-kind"), "invocation"), chromedp.Click(chromedp.CSS("#audit-form button[type=submit]")))
	poll("only invocations", count(`#audit-table tbody tr`)+` === 6`)
	step("verify the chain", chromedp.Click(chromedp.CSS("#verify")))
	poll("the chain holds", `(document.querySelector("#verify-result .ok") || {}).textContent?.includes("The chain holds")`)
	rows := must(t, ctx, chromedp.Text(chromedp.CSS("#audit-table tbody")))
	for _, want := range []string{"echo", "denied by web", "note", "enable_tools", "approved by web (run once); ok"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the audit page lacks %q:\n%s", want, rows)
		}
	}
	shot("web-audit")

	b.openPack("notes")
	step("the notes pack shows", chromedp.WaitVisible(chromedp.CSS(`.pack[data-pack="notes"] .caps-table`)))
	pack := must(t, ctx, chromedp.Text(chromedp.CSS(`.pack[data-pack="notes"] .caps-table`)))
	if !strings.Contains(pack, "terminal_exec") || !strings.Contains(pack, "sh") {
		t.Errorf("the pack's page does not show what notes asks for: %q", pack)
	}

	// The server saw the browser's requests as its own origin: nothing
	// was refused on the way.
	if got := e.do("GET", "/v1/invocations", nil, nil); got != http.StatusOK {
		t.Fatalf("invocations: got %d", got)
	}
}

// chatOpen is a JavaScript expression: a chat is open in the page.
const chatOpen = `(document.body.dataset.chat || "").startsWith("chat_")`

// browser is one headless Chromium with helpers for the steps of a test.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

func openBrowser(t *testing.T, chromium, shots string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900)}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	// Chromium itself sometimes fails at launch on a loaded machine (CI
	// saw "browser process exited: signal: segmentation fault", and a
	// loaded run "chrome failed to start: ... Zygote could not fork",
	// before any page was opened). That is the browser's start, not the
	// app: it is started again, at most twice, and each failure is
	// logged. A failure after the start fails the test as before.
	for attempt := 1; ; attempt++ {
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
		err := chromedp.Do(ctx) // no actions: only starts the browser
		if err == nil {
			t.Cleanup(cancelAlloc)
			t.Cleanup(cancelBrowser)
			t.Cleanup(cancel)
			b := &browser{t: t, ctx: ctx, shots: shots}
			b.watchConsole()
			return b
		}
		cancel()
		cancelBrowser()
		cancelAlloc()
		if attempt == 3 {
			t.Fatalf("start Chromium (attempt %d): %v", attempt, err)
		}
		t.Logf("Chromium failed at launch (attempt %d), starting it again: %v", attempt, err)
		time.Sleep(500 * time.Millisecond) // let a moment of fork pressure pass
	}
}

// watchConsole makes every browser test fail on an error in the page's
// console: a console.error call, an uncaught exception or a rejected
// promise nobody handled, and the browser's own error entries (a CSP
// violation, a script that did not load). A failed request's status is
// the app's to show, not an error: the browser's network entries are
// left out.
func (b *browser) watchConsole() {
	b.t.Helper()
	var mu sync.Mutex
	var errs []string
	add := func(s string) {
		mu.Lock()
		errs = append(errs, s)
		mu.Unlock()
	}
	err := chromedp.Listen(b.ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
				}
				add("console.error: " + strings.Join(parts, " "))
			}
		case *cdpruntime.EventExceptionThrown:
			d := ev.ExceptionDetails
			what := d.Text
			if d.Exception != nil {
				what += " " + d.Exception.Description
			}
			add(fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, what))
		case *cdplog.EventEntryAdded:
			if e := ev.Entry; e.Level == cdplog.EntryLevelError && e.Source != cdplog.EntrySourceNetwork {
				add(fmt.Sprintf("%s error at %s: %s", e.Source, e.URL, e.Text))
			}
		}
	})
	if err == nil {
		_, err = chromedp.Call(b.ctx, cdplog.Enable, struct{}{})
	}
	if err != nil {
		b.t.Fatalf("watch the page's console: %v", err)
	}
	b.t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			b.t.Errorf("the page's console has an error: %s", e)
		}
	})
}

func (b *browser) step(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// shot saves a full-page screenshot as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
}

// shotScreen saves what the screen shows (not the whole page) as
// name.png: on a phone, the first screen.
func (b *browser) shotScreen(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
}

// poll waits until the JavaScript expression is truthy.
func (b *browser) poll(what, expr string) {
	b.t.Helper()
	b.step(what, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second)))
}

// openPack opens the Packs page, then the page of the pack name from its
// row in the list.
func (b *browser) openPack(name string) {
	b.t.Helper()
	b.step("open the packs page", chromedp.Click(chromedp.CSS("#nav-packs")))
	// The list may render again while it loads (a node chromedp found can
	// be gone when it clicks): find and click the link in one evaluation.
	row := `.pack-row[data-pack="` + name + `"] a.pack-link`
	b.poll("open the page of "+name, `(() => { const a = document.querySelector(`+jsString(row)+`); if (!a || !a.offsetParent) return false; a.click(); return true })()`)
	b.poll("the page of "+name+" shows", `document.querySelector("#pack-page").dataset.pack === `+jsString(name)+` && !document.querySelector("#pack-page").hidden`)
}

// count is a JavaScript expression: how many elements match sel.
func count(sel string) string { return `document.querySelectorAll(` + jsString(sel) + `).length` }

// TestBrowserNoModel: without a model the app says how to set one, and a
// pack tool runs by hand from the packs page.
func TestBrowserNoModel(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#banner")))
	// The banner leads to the Settings page; the flags of packs serve are
	// one click further.
	b.step("the banner links to Settings", chromedp.WaitVisible(chromedp.CSS(`#banner a[href="#/settings"]`)))
	b.step("open the other way", chromedp.Click(chromedp.CSS("#banner details.serve-flags summary")))
	banner := must(t, b.ctx, chromedp.Text(chromedp.CSS("#banner")))
	if !strings.Contains(banner, "No model is configured") || !strings.Contains(banner, "Set one up in Settings") || !strings.Contains(banner, "--provider") {
		t.Errorf("the banner says %q", banner)
	}
	// The exact command, for this home: not "<home>", not a bare "packs
	// serve" that would use another home (issue 12, defect 8).
	if want := "PACKS_HOME=" + e.app.Home.Dir() + " "; !strings.Contains(banner, want) || strings.Contains(banner, "<home>") {
		t.Errorf("the banner does not name this home (%s): %q", want, banner)
	}
	b.poll("send is disabled", `document.querySelector("#send").disabled`)
	b.openPack("notes")
	b.step("the notes tools show", chromedp.WaitVisible(chromedp.CSS(`.pack[data-pack="notes"] details.tool`)))
	b.poll("bad JSON is refused in the page", `(() => { const d = [...document.querySelectorAll(".pack[data-pack=notes] details.tool")].find(d => d.textContent.includes("echo")); d.open = true; d.querySelector(".tool-args").value = '{"text":'; d.querySelector(".run-by-hand").click(); return true; })()`)
	b.poll("the page says the JSON is bad", `[...document.querySelectorAll(".tool-out .error")].some(p => p.textContent.includes("not JSON"))`)
	var chats struct{ Total int }
	e.must(http.StatusOK, "GET", "/v1/chats", nil, &chats)
	if chats.Total != 0 {
		t.Errorf("bad JSON by hand started %d chats", chats.Total)
	}
	b.poll("open echo", `(() => { const d = [...document.querySelectorAll(".pack[data-pack=notes] details.tool")].find(d => d.textContent.includes("echo")); d.open = true; d.querySelector(".tool-args").value = '{"text":"by hand"}'; d.querySelector(".run-by-hand").click(); return true; })()`)
	b.poll("the result shows", `[...document.querySelectorAll(".tool-out pre")].some(p => p.textContent.includes('"by hand"'))`)
	b.shot("web-no-model")
}

func must[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// jsString quotes s as a JavaScript string literal (s is a test constant).
func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// TestBrowserWithoutToken: opened at the bare address (no token, no
// cookie), the page says how to get in, and its API requests are refused;
// a wrong token in the address is refused too.
func TestBrowserWithoutToken(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the bare address", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(chromedp.CSS("#banner")))
	banner := must(t, b.ctx, chromedp.Text(chromedp.CSS("#banner")))
	if !strings.Contains(banner, "needs the server's token") || !strings.Contains(banner, "?token=") {
		t.Errorf("the banner says %q", banner)
	}
	status := must(t, b.ctx, chromedp.Evaluate[int](`fetch("/v1/chats", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if status != http.StatusUnauthorized {
		t.Errorf("the page's POST /v1/chats without the token: got %d, want 401", status)
	}
	b.shot("no-token")
	b.step("open a wrong token", chromedp.Navigate(e.url+"/?token=not-the-token"))
	body := must(t, b.ctx, chromedp.Text(chromedp.CSS("body")))
	if !strings.Contains(body, "unauthorized") {
		t.Errorf("a wrong token in the address: the page says %q", body)
	}
}

// TestBrowserFailedTurn: a turn that fails at once (the model's port is
// dead) ends in the page: the error shows, Send works again and Stop is
// gone, every time (issue 12, defect 3: the failure event arrived before
// the send request returned, and the page stayed "running").
func TestBrowserFailedTurn(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{modelURL: deadURL(t)})
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	for i := 1; i <= 5; i++ {
		b.step(fmt.Sprintf("send message %d", i), chromedp.SendKeys(chromedp.CSS("#composer"), fmt.Sprintf("hello %d", i)), chromedp.Click(chromedp.CSS("#send")))
		b.poll(fmt.Sprintf("turn %d fails and the page says so", i), count("#log .error")+fmt.Sprintf(" >= %d", i))
		b.poll(fmt.Sprintf("after turn %d Send works again and Stop is gone", i),
			`!document.querySelector("#send").disabled && document.querySelector("#stop").hidden`)
	}
	b.shot("failed-turn")
}

// TestBrowserFiles: the incident-triage sample logs go into a chat's
// workspace from the page, are listed, and come back (issue 12, defect 5).
func TestBrowserFiles(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	samples, err := filepath.Glob(filepath.Join("..", "..", "wasm-examples", "incident-triage", "samples", "*.log"))
	if err != nil || len(samples) == 0 {
		t.Fatalf("no sample logs: %v", err)
	}
	for i, p := range samples {
		if samples[i], err = filepath.Abs(p); err != nil {
			t.Fatal(err)
		}
	}
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the empty workspace says so", `document.querySelector("#files").textContent.includes("No files yet")`)
	b.step("upload the sample logs", chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), samples))
	b.poll("the logs are listed", count("#files li.file")+fmt.Sprintf(" === %d", len(samples)))
	got := must(t, b.ctx, chromedp.Evaluate[string](`fetch(document.querySelector("#files li.file a.open").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	want, err := os.ReadFile(samples[0])
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the first file came back with %d bytes, want %d", len(got), len(want))
	}
	b.shot("web-files")
}

// TestBrowserPhone: at phone width (375 px) the composer is on the first
// screen, with and without a conversation above it; the chat's attached
// packs and files are a drawer, closed until asked for; tables scroll
// inside their card; and on every page (the chat, its drawer, agents, the
// packs list, a pack's page, the Add a pack dialog, audit, settings) no
// page is wider than the screen and no visible control lies beyond its
// edges (one in a table that scrolls inside its card counts where the card
// is).
func TestBrowserPhone(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	e.install("terminal_exec")
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)),
		calls(call("notes__rows", `{}`)),
		llmtest.Turn{Text: replyMarkdown},
	)
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("a phone's screen", chromedp.EmulateViewport(375, 812, chromedp.EmulateScale(2)))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	inView := func(where string) {
		t.Helper()
		b.poll(where+": the page fits", `document.documentElement.scrollWidth <= window.innerWidth`)
		if off := must(t, b.ctx, chromedp.Evaluate[string](offScreen)); off != "" {
			t.Errorf("%s: controls beyond the screen's edges: %s", where, off)
		}
	}
	composerShows := `(() => { const w = window.innerHeight; return [document.querySelector("#composer"), document.querySelector("#send")].every(e => {
		const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= w; }); })()`
	b.poll("the composer is on the first screen", composerShows)
	b.poll("the chat's packs and files are closed", `document.querySelector("#attached").offsetParent === null && document.querySelector("#files").offsetParent === null`)
	inView("the empty chat")
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	b.poll("notes is offered", `[...document.querySelectorAll("#attach-select option")].some(o => o.value === "notes")`)
	b.step("open the drawer", chromedp.Click(chromedp.CSS("#context-open")))
	b.poll("the drawer shows the attached packs and the files", `document.querySelector("#attached").offsetParent !== null && document.querySelector("#files").offsetParent !== null`)
	inView("the drawer")
	b.step("attach notes", chromedp.SetValue(chromedp.CSS("#attach-select"), "notes"), chromedp.Click(chromedp.CSS("#attach-btn")))
	b.poll("notes is attached", count("#attached .detach")+` === 1`)
	b.shotScreen("web-phone-drawer")
	b.step("close the drawer", chromedp.Click(chromedp.CSS("#context-close")))
	b.poll("the drawer is closed, its button counts one pack", `document.querySelector("#attached").offsetParent === null && document.querySelector("#context-count").textContent === "1"`)
	b.step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "errors per service?"), chromedp.Click(chromedp.CSS("#send")))
	// enable_tools is approved by the attach; the rows card asks.
	b.poll("enable_tools ran", count(".tool-card.done")+" === 1")
	b.step("a card asks", chromedp.WaitVisible(chromedp.CSS(".tool-card.pending button.run")))
	b.step("run it", chromedp.Click(chromedp.CSS(".tool-card.pending button.run")))
	b.poll("it ran", count(".tool-card.done")+" === 2")
	b.poll("the reply arrives", `!!document.querySelector(".msg.assistant.md table")`)
	inView("the chat")
	b.step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	b.poll("above a conversation the composer is still on the first screen", composerShows)
	b.shotScreen("web-phone")
	for _, page := range []string{"agents", "packs", "audit", "settings"} {
		b.step("open "+page, chromedp.Click(chromedp.CSS("#nav-"+page)))
		b.poll(page+" shows", `!document.querySelector("#view-`+page+`").hidden && document.querySelectorAll("#view-`+page+` .pack, #view-`+page+` .pack-row, #view-`+page+` tbody tr, #view-`+page+` form").length > 0`)
		inView("the " + page + " page")
		if page == "audit" {
			b.poll("the audit table scrolls inside its card", `(() => { const w = document.querySelector("#audit-table").closest(".table-wrap"), r = w.getBoundingClientRect();
				return getComputedStyle(w).overflowX === "auto" && r.left >= 0 && r.right <= window.innerWidth; })()`)
		}
	}
	b.openPack("notes")
	b.poll("its tools show", count(`#pack-page details.tool`)+` === 5`)
	b.step("open a tool", chromedp.Evaluate[chromedp.Void](`document.querySelector("#pack-page details.tool").open = true`))
	inView("a pack's page")
	b.step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	b.shot("web-phone-pack")
	b.step("back to the list", chromedp.Click(chromedp.CSS("#pack-page a.back")))
	b.step("open Add a pack", chromedp.WaitVisible(chromedp.CSS("#add-open")), chromedp.Click(chromedp.CSS("#add-open")))
	b.step("review notes", chromedp.SendKeys(chromedp.CSS("#add-source"), notesPack), chromedp.Click(chromedp.CSS("#add-review")))
	b.poll("the consent step shows", `!document.querySelector("#add-step-consent").hidden`)
	inView("the Add a pack dialog")
	b.step("cancel", chromedp.Click(chromedp.CSS("#add-decline")))
}

// offScreen is a JavaScript expression: the visible buttons, fields,
// links and summaries that lie beyond the screen's left or right edge,
// named, or "" when none. A control in a table that scrolls inside its
// card (.table-wrap) counts where the card is.
const offScreen = `[...document.querySelectorAll("button, input, select, textarea, a[href], summary")].filter(e => {
	const r = e.getBoundingClientRect();
	if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === "hidden") return false;
	const box = (e.closest(".table-wrap") || e).getBoundingClientRect();
	return box.left < -1 || box.right > window.innerWidth + 1;
}).map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + JSON.stringify((e.textContent || e.placeholder || "").trim().slice(0, 30)) + " at " + Math.round(e.getBoundingClientRect().left) + ".." + Math.round(e.getBoundingClientRect().right)).join("; ")`
