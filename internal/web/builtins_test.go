package web

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// A first chat in the web app with nothing installed by hand: the
// built-ins are there, the person attaches current-time and
// session-file-system, approves the time and a file write, and denies a
// delete.
func TestBuiltinsInWebChat(t *testing.T) {
	e := newEnv(t, envOptions{builtins: true})
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"current-time", "session-file-system"}}, &c)
	if len(c.Packs) != 2 {
		t.Fatalf("created chat: got %+v", c)
	}
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"current-time"}`)),
		calls(call(chat.ToolEnableTools, `{"pack_id":"session-file-system"}`)),
		calls(call("current-time__get_current_time", `{"timezone":"UTC","format":"iso8601"}`)),
		calls(call("session-file-system__write_file", `{"path":"/notes/today.md","content":"# Today\n"}`)),
		calls(call("session-file-system__delete_file", `{"path":"/notes/today.md"}`)),
		llmtest.Turn{Text: "Wrote /notes/today.md; the delete was denied."},
	)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "what time is it? note it"}, nil)
	decide := func(tool, verb string) map[string]any {
		t.Helper()
		p := ev.next("pending")
		if p.Data["tool"] != tool {
			t.Fatalf("pending: got %v, want %s", p.Data, tool)
		}
		e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/"+verb, nil, nil)
		return ev.next("tool_done").Data
	}
	// The person attached both packs: listing their tools asks nobody.
	for range 2 {
		if d := ev.next("tool_done").Data; d["name"] != chat.ToolEnableTools || d["by_attach"] != true {
			t.Errorf("enable_tools: %v, want approved by attach", d)
		}
	}
	if d := decide("get_current_time", "approve"); d["is_error"] != false || !strings.Contains(d["content"].(string), `"timezone":"UTC"`) {
		t.Errorf("get_current_time: %v", d)
	}
	if d := decide("write_file", "approve"); d["is_error"] != false || !strings.Contains(d["content"].(string), `"created":true`) {
		t.Errorf("write_file: %v", d)
	}
	if d := decide("delete_file", "deny"); d["approved"] != false || d["error_kind"] != chat.ErrKindDenied {
		t.Errorf("delete_file: %v", d)
	}
	if end := ev.next("turn_done"); end.Data["calls"] != float64(5) {
		t.Errorf("turn_done: %v", end.Data)
	}
	if sys := e.model.Requests()[0].System; !strings.Contains(sys, `<pack_instructions pack_id="session-file-system">`) {
		t.Errorf("the system prompt lacks session-file-system's instructions:\n%s", sys)
	}
	// The file the tool wrote is the chat's, and still there.
	req, _ := http.NewRequest("GET", e.url+"/v1/chats/"+c.ID+"/files/notes/today.md?download=1", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(b) != "# Today\n" {
		t.Errorf("notes/today.md: %d %q", res.StatusCode, b)
	}
}

// TestBrowserBuiltins: in headless Chromium, a fresh home offers the
// built-ins; the person attaches current-time and session-file-system,
// runs the model's calls from their tool cards, and sees the file the
// model wrote as the chat's artifact. Its screenshot is web-builtins.png.
func TestBrowserBuiltins(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{builtins: true})
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"current-time"}`)),
		calls(call(chat.ToolEnableTools, `{"pack_id":"session-file-system"}`)),
		calls(call("current-time__get_current_time", `{"timezone":"Europe/Paris","format":"human"}`)),
		calls(call("session-file-system__write_file", `{"path":"/notes/today.md","content":"# Today\n\nMet Ada.\n"}`)),
		llmtest.Turn{Text: "Noted in `/notes/today.md`."},
	)
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	// One after the other, each seen attached before the next: quick
	// successive attaches are TestBrowserAttachAnswersInOrder's subject.
	for i, p := range []string{"current-time", "session-file-system"} {
		b.poll(p+" is offered", `[...document.querySelectorAll("#attach-select option")].some(o => o.value === `+jsString(p)+`)`)
		b.step("attach "+p, chromedp.SetValue(chromedp.CSS("#attach-select"), p), chromedp.Click(chromedp.CSS("#attach-btn")))
		b.poll(p+" is attached", count("#attached .detach")+fmt.Sprintf(` === %d`, i+1))
	}
	b.step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "note that I met Ada, with the time"), chromedp.Click(chromedp.CSS("#send")))
	// Both packs were attached: listing their tools asks nobody.
	b.poll("enable_tools ran twice, approved by the attach", count(".tool-card.done")+" === 2")
	for i := 3; i <= 4; i++ {
		b.step(fmt.Sprintf("card %d asks", i), chromedp.WaitVisible(chromedp.CSS(".tool-card:not(.done) button.run")))
		b.step(fmt.Sprintf("run card %d", i), chromedp.Click(chromedp.CSS(".tool-card:not(.done) button.run")))
		b.poll(fmt.Sprintf("card %d ran", i), count(".tool-card.done")+fmt.Sprintf(" === %d", i))
	}
	b.poll("the time is shown", `[...document.querySelectorAll(".tool-card.done")].some(c => c.textContent.includes("Europe/Paris"))`)
	b.poll("the file is the chat's artifact", `[...document.querySelectorAll(".tool-card .artifact")].some(a => a.textContent.includes("notes/today.md") && a.querySelector("a.open"))`)
	b.poll("the reply", `document.body.textContent.includes("Noted in")`)
	b.shot("web-builtins")
}

// TestBrowserAttachAnswersInOrder: a person who attaches two packs quickly
// sees both attached, however the network orders the answers. The page's
// fetch holds the first attach's answer back until 300 ms after the second
// has been answered (a slow link): an app that draws each answer as it arrives
// draws the older list last and shows one pack of two.
func TestBrowserAttachAnswersInOrder(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{builtins: true})
	b := openBrowser(t, chromium, "")
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("slow the first attach's answer", chromedp.Evaluate[chromedp.Void](`(() => {
		const real = window.fetch;
		let seen = 0, secondAnswered;
		const second = new Promise(r => { secondAnswered = r; });
		window.attachesPending = 0;
		window.fetch = async (url, opt) => {
			if (!(opt && opt.method === "POST" && String(url).endsWith("/packs"))) return real(url, opt);
			const n = ++seen;
			window.attachesSeen = seen;
			window.attachesPending++;
			try {
				const res = await real(url, opt);
				if (n === 1) await Promise.race([second.then(() => new Promise(r => setTimeout(r, 300))), new Promise(r => setTimeout(r, 3000))]);
				else secondAnswered();
				return res;
			} finally { setTimeout(() => window.attachesPending--, 0); }
		};
	})()`))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	for _, p := range []string{"current-time", "session-file-system"} {
		b.poll(p+" is offered", `[...document.querySelectorAll("#attach-select option")].some(o => o.value === `+jsString(p)+`)`)
		b.step("attach "+p, chromedp.SetValue(chromedp.CSS("#attach-select"), p), chromedp.Click(chromedp.CSS("#attach-btn")))
	}
	// Both attaches sent and answered, then the app's queue of chat-side
	// draws (sideQueue, app.js) settled: what is drawn then is final. (Only
	// answered was a flake: between the first answer and the second request
	// nothing was pending.)
	b.poll("both attaches answered", `window.attachesSeen === 2 && window.attachesPending === 0`)
	b.step("the chat side settles", chromedp.Evaluate[chromedp.Void](`sideQueue.then(() => { window.sideSettled = true; })`))
	b.poll("the chat side settled", `window.sideSettled === true`)
	got := must(t, b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#attached li > span[title]")].map(s => s.firstChild.textContent)`))
	if len(got) != 2 || got[0] != "current-time" || got[1] != "session-file-system" {
		t.Errorf("attached after two quick attaches: %q, want [current-time session-file-system]", got)
	}
}
