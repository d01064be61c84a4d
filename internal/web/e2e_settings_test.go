package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestBrowserSettings: on a home with no model, the banner leads to
// Settings; the person fills in the fake provider's address, tests the
// connection (a wrong key: the provider's real error; the right one: the
// model answers), saves, and the chat works at once, no restart: a message
// gets the fake model's reply. The key is never shown again, only "a key
// is set". Its screenshot (web-settings.png) is the README's.
func TestBrowserSettings(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{noModel: true})
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.RequireKey(fakeKey)
	fake.Respond(func(r llmtest.Request) llmtest.Turn {
		if r.Last().Content == "hello from the app" {
			return llmtest.Turn{Text: "Hello! I am " + r.Model + ", set up in Settings."}
		}
		return llmtest.Turn{Text: "OK"}
	})
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS(`#banner a[href="#/settings"]`)))
	b.poll("send is disabled", `document.querySelector("#send").disabled`)
	b.step("follow the banner to Settings", chromedp.Click(chromedp.CSS(`#banner a[href="#/settings"]`)))
	b.poll("the form shows the defaults", `!document.querySelector("#view-settings").hidden && document.querySelector("#set-base-url").value === "http://localhost:11434/v1"`)
	b.poll("no key is set", `document.querySelector("#set-key-state").textContent === "No key is set."`)
	b.step("fill in the fake provider",
		chromedp.SetValue(chromedp.CSS("#set-provider"), "openai"),
		chromedp.SetValue(chromedp.CSS("#set-base-url"), fake.OpenAIURL()),
		chromedp.SetValue(chromedp.CSS("#set-model"), "fake-model"),
		chromedp.SetValue(chromedp.CSS("#set-max-tokens"), "2048"),
		chromedp.SendKeys(chromedp.CSS("#set-api-key"), "sk-wrong-key"))
	b.step("test the connection with a wrong key", chromedp.Click(chromedp.CSS("#set-test")))
	b.poll("the provider's real error shows", `(document.querySelector("#settings-result .test-error") || {}).textContent?.includes("status 401: Incorrect API key")`)
	b.step("type the right key", chromedp.Evaluate[chromedp.Void](`document.querySelector("#set-api-key").value = ""`), chromedp.SendKeys(chromedp.CSS("#set-api-key"), fakeKey))
	b.step("test the connection", chromedp.Click(chromedp.CSS("#set-test")))
	b.poll("the model answered", `(document.querySelector("#settings-result .test-ok") || {}).textContent?.includes("answered")`)
	b.step("save", chromedp.Click(chromedp.CSS("#set-save")))
	b.poll("saved", `(document.querySelector("#settings-result .saved") || {}).textContent?.includes("openai fake-model at")`)
	b.poll("a key is set, and not shown", `document.querySelector("#set-key-state").textContent === "A key is set." && document.querySelector("#set-api-key").value === ""`)
	b.poll("the banner is gone and the header names the model", `document.querySelector("#banner").hidden && document.querySelector("#model").textContent.includes("fake-model")`)
	if html := must(t, b.ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); strings.Contains(html, fakeKey) {
		t.Error("the page shows the key after saving")
	}
	b.step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	b.shot("web-settings")

	b.step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#set-save")))
	b.poll("the saved settings come back", `document.querySelector("#set-model").value === "fake-model" && document.querySelector("#set-max-tokens").value === "2048" && document.querySelector("#set-key-state").textContent === "A key is set."`)
	b.step("open the chat", chromedp.Click(chromedp.CSS("#nav-chat")))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	b.poll("send works", `!document.querySelector("#send").disabled`)
	b.step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "hello from the app"), chromedp.Click(chromedp.CSS("#send")))
	b.poll("the fake model replies", `[...document.querySelectorAll(".msg.assistant")].some(m => m.textContent.includes("I am fake-model, set up in Settings"))`)
	b.step("open the agents page", chromedp.Click(chromedp.CSS("#nav-agents")))
	b.poll("a new agent starts with the configured max tokens", `document.querySelector("#agent-max-tokens").value === "2048"`)
	if got := e.do("GET", "/v1/invocations", nil, nil); got != http.StatusOK {
		t.Fatalf("invocations: got %d", got)
	}
}
