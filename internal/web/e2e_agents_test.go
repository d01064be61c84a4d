package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestBrowserAgents drives the agents page at phone width (375 px): create
// an agent with two capabilities and reorder them (a coming_soon one
// cannot be picked), edit it, start a chat from it and see its packs
// attached in order and its prompt sent; no page is wider than the screen.
func TestBrowserAgents(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	capabilityPacks(e)
	e.model.Push(llmtest.Turn{Text: "Aye."})
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("a phone's screen", chromedp.EmulateViewport(375, 812, chromedp.EmulateScale(2)))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	fits := `document.documentElement.scrollWidth <= window.innerWidth`
	b.step("open the agents page", chromedp.Click(chromedp.CSS("#nav-agents")))
	b.poll("the empty list shows", `!document.querySelector("#view-agents").hidden && document.querySelector("#agents .empty") !== null`)
	b.poll("coming_soon cannot be picked", `document.querySelector('#agent-cap-select option[value="soon"]').disabled`)
	b.poll("deprecated says so", `document.querySelector('#agent-cap-select option[value="old"]').textContent.includes("deprecated")`)
	b.step("fill in the agent",
		chromedp.SendKeys(chromedp.CSS("#agent-name"), "Captain"),
		chromedp.SendKeys(chromedp.CSS("#agent-prompt"), "You are the release captain."),
		chromedp.SendKeys(chromedp.CSS("#agent-model"), "captain-model"),
		chromedp.SetValue(chromedp.CSS("#agent-cap-select"), "current_time"), chromedp.Click(chromedp.CSS("#agent-cap-add")),
		chromedp.SetValue(chromedp.CSS("#agent-cap-select"), "notes"), chromedp.Click(chromedp.CSS("#agent-cap-add")))
	b.poll("two capabilities listed", count("#agent-caps li[data-cap]")+` === 2`)
	b.step("move notes up", chromedp.Click(chromedp.CSS(`#agent-caps li[data-cap="notes"] button.up`)))
	b.poll("notes comes first", `document.querySelector("#agent-caps li[data-cap]").dataset.cap === "notes"`)
	b.poll("the form fits", fits)
	b.shot("agents-form")
	b.step("create it", chromedp.Click(chromedp.CSS("#agent-save")))
	b.poll("the agent shows", `document.querySelector('#agents .agent[data-agent="Captain"]') !== null`)
	var list struct{ Items []agentJSON }
	e.must(http.StatusOK, "GET", "/v1/agents", nil, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "Captain" || list.Items[0].Model != "captain-model" ||
		!slices.Equal(list.Items[0].Capabilities, []string{"notes", "current_time"}) {
		t.Fatalf("created from the page: %+v", list.Items)
	}

	b.step("edit it", chromedp.Click(chromedp.CSS(`.agent[data-agent="Captain"] .edit-agent`)))
	b.poll("the form holds it", `document.querySelector("#agent-name").value === "Captain" && `+count("#agent-caps li[data-cap]")+` === 2`)
	b.step("change the prompt",
		chromedp.SetValue(chromedp.CSS("#agent-prompt"), "You are the release captain. Be brief."),
		chromedp.Click(chromedp.CSS("#agent-save")))
	b.poll("saved", `document.querySelector("#agent-result .ok") !== null && document.querySelector("#agent-result .ok").textContent.includes("Saved")`)
	b.poll("the agents page fits", fits)
	b.shot("web-agents")

	b.step("start a chat from it", chromedp.Click(chromedp.CSS(`.agent[data-agent="Captain"] .start-agent`)))
	b.poll("the chat opens from the agent", `!document.querySelector("#view-chat").hidden && document.querySelector("#chat-agent").textContent === "Agent: Captain"`)
	b.poll("its packs are attached in order", `[...document.querySelectorAll("#attached li .detach")].length === 2`)
	b.step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "status?"), chromedp.Click(chromedp.CSS("#send")))
	b.poll("the reply arrives", `[...document.querySelectorAll(".msg.assistant")].some(m => m.textContent.includes("Aye."))`)
	b.poll("the chat fits", fits)
	r := e.model.Requests()[0]
	if r.Model != "captain-model" || !strings.Contains(r.System, "You are the release captain. Be brief.") ||
		strings.Index(r.System, "- pack_id: notes") > strings.Index(r.System, "- pack_id: current-time") {
		t.Errorf("the request: model %q, system:\n%s", r.Model, r.System)
	}
	var chats struct{ Items []chatJSON }
	e.must(http.StatusOK, "GET", "/v1/chats", nil, &chats)
	if len(chats.Items) != 1 {
		t.Fatalf("%d chats", len(chats.Items))
	}

	// The page re-renders the list when it opens: clear the old one so the
	// clicks below land on the new.
	b.step("back to agents", chromedp.Evaluate[chromedp.Void](`document.querySelector("#agents").replaceChildren()`), chromedp.Click(chromedp.CSS("#nav-agents")))
	b.poll("the list is back", `document.querySelector('#agents .agent[data-agent="Captain"]') !== null`)
	b.step("delete asks first", chromedp.Click(chromedp.CSS(`.agent[data-agent="Captain"] .delete-agent`)))
	b.poll("it asks", `document.querySelector(".agent .delete-agent").textContent === "Really delete?"`)
	b.step("delete", chromedp.Click(chromedp.CSS(`.agent[data-agent="Captain"] .delete-agent`)))
	b.poll("it is gone", `document.querySelector("#agents .empty") !== null`)

	b.step("open the packs page", chromedp.Click(chromedp.CSS("#nav-packs")))
	b.poll("a deprecated pack says so", `(document.querySelector('.pack-row[data-pack="old"] .badge.deprecated') || {}).textContent === "deprecated"`)
	b.poll("the packs page fits", fits)
}

// TestBrowserAgentMaxTokens: the agents page never shows an agent's max
// tokens as "0". A new agent's field holds the configured limit and the
// agent is created with it; an agent that follows the configured limit
// (max_tokens 0, as older versions made them) says so on its card, and
// its edit form shows an empty field that names the configured limit.
func TestBrowserAgentMaxTokens(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	e.must(http.StatusOK, "PUT", "/v1/settings/model", map[string]any{"provider": "openai", "base_url": e.model.OpenAIURL(), "model": "mine", "max_tokens": 300}, nil)
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"name": "Follower", "max_tokens": 0}, nil)
	b := openBrowser(t, chromium, "")
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("open the agents page", chromedp.Click(chromedp.CSS("#nav-agents")))
	b.poll("the agent shows", `document.querySelector('#agents .agent[data-agent="Follower"]') !== null`)
	b.poll("its card names the configured limit, not 0",
		`(t => t.includes("the configured limit") && !/\b0 tokens/.test(t))(document.querySelector('.agent[data-agent="Follower"] h3').textContent)`)
	b.poll("a new agent's field holds the configured limit", `document.querySelector("#agent-max-tokens").value === "300"`)
	b.step("edit it", chromedp.Click(chromedp.CSS(`.agent[data-agent="Follower"] .edit-agent`)))
	b.poll("the field is empty and names the configured limit",
		`(i => i.value === "" && i.placeholder.includes("300"))(document.querySelector("#agent-max-tokens"))`)
	b.step("save it", chromedp.Click(chromedp.CSS("#agent-save")))
	b.poll("saved", `(document.querySelector("#agent-result .ok") || {}).textContent === "Saved Follower."`)
	b.poll("the form is back to a new agent's", `document.querySelector("#agent-max-tokens").value === "300"`)
	b.step("create one with a name only",
		chromedp.SendKeys(chromedp.CSS("#agent-name"), "Fresh"), chromedp.Click(chromedp.CSS("#agent-save")))
	b.poll("created", `document.querySelector('#agents .agent[data-agent="Fresh"]') !== null`)
	var list struct{ Items []agentJSON }
	e.must(http.StatusOK, "GET", "/v1/agents", nil, &list)
	got := map[string]int{}
	for _, a := range list.Items {
		got[a.Name] = a.MaxTokens
	}
	if got["Follower"] != 0 || got["Fresh"] != 300 {
		t.Errorf("max tokens after the page's saves: %v, want Follower 0 (still the configured limit) and Fresh 300", got)
	}
}
