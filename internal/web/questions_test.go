package web

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// askPack is the mcpserver tests' pack whose ask tool puts its arguments
// to the person as a question (ask_person).
var askPack, _ = filepath.Abs(filepath.Join("..", "mcpserver", "testdata", "ask-pack"))

// TestQuestionCard: a tool's question reaches the web app as a question
// event of its chat; the person's answer, posted back, reaches the tool
// only when it follows the question's fields; an answer to no waiting
// question, or with an unknown action, is refused.
func TestQuestionCard(t *testing.T) {
	const question = `{"message": "Deploy to which region?", "schema": {"type": "object", "properties": {"region": {"type": "string", "enum": ["eu", "us"]}}, "required": ["region"]}}`
	tests := []struct {
		name   string
		answer map[string]any
		want   string // the action the tool gets
	}{
		{"accepted", map[string]any{"action": "accept", "content": map[string]any{"region": "eu"}}, "accept"},
		{"declined", map[string]any{"action": "decline"}, "decline"},
		{"an answer off the fields is refused", map[string]any{"action": "accept", "content": map[string]any{"region": "mars"}}, "cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": askPack, "grant": []string{"ask_person"}}, nil)
			var c chatJSON
			e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"ask-pack"}}, &c)
			e.model.Push(
				calls(call(chat.ToolEnableTools, `{"pack_id":"ask-pack"}`)),
				calls(call("ask-pack__ask", question)),
				llmtest.Turn{Text: "done"},
			)
			ev := e.stream(c.ID)
			e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "deploy"}, nil)
			// enable_tools is approved by the attach; the ask tool's card asks.
			p := ev.next("pending")
			if p.Data["tool"] != "ask" {
				t.Fatalf("pending: got %v, want the ask card", p.Data)
			}
			e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/approve", nil, nil)
			q := ev.next("question")
			fields, _ := json.Marshal(q.Data["fields"])
			if q.Data["message"] != "Deploy to which region?" || q.Data["pack"] != "ask-pack" || q.Data["chat"] != c.ID ||
				string(fields) != `[{"enum":["eu","us"],"name":"region","required":true,"type":"string"}]` {
				t.Fatalf("question event %v, want the tool's question and its fields", q.Data)
			}
			id := q.Data["id"].(string)
			var eb errorBody
			if got := e.do("POST", "/v1/questions/"+id+"/answer", map[string]any{"action": "yes"}, &eb); got != http.StatusBadRequest {
				t.Fatalf("an unknown action: got %d %+v, want 400", got, eb)
			}
			if got := e.do("POST", "/v1/questions/q0_none/answer", map[string]any{"action": "decline"}, &eb); got != http.StatusNotFound {
				t.Fatalf("no such question: got %d, want 404", got)
			}
			e.must(http.StatusOK, "POST", "/v1/questions/"+id+"/answer", tt.answer, nil)
			if a := ev.next("answered"); a.Data["id"] != id {
				t.Fatalf("answered event %v, want question %s", a.Data, id)
			}
			done := ev.next("tool_done")
			var res struct {
				Result struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(done.Data["content"].(string)), &res); err != nil || res.Result.Action != tt.want {
				t.Fatalf("the tool got %v, want action %q", done.Data["content"], tt.want)
			}
			if got := e.do("POST", "/v1/questions/"+id+"/answer", tt.answer, &eb); got != http.StatusNotFound {
				t.Fatalf("a second answer: got %d, want 404", got)
			}
			ev.next("turn_done")
		})
	}
}

// hostileHTML is markup and escape sequences a tool puts in a question:
// the web app shows it as text.
const hostileHTML = `<img src=x onerror=window.pwned=1><b>bold</b> \u001b]0;title\u0007`

// TestBrowserQuestion: in headless Chromium, a tool's question shows as a
// form in its tool card, as text even where it holds markup; the person
// picks an answer and the tool gets it.
func TestBrowserQuestion(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": askPack, "grant": []string{"ask_person"}}, nil)
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"ask-pack"}`)),
		calls(call("ask-pack__ask", `{"message": "Deploy to which region? `+hostileHTML+`", "schema": {"type": "object", "properties": {"region": {"type": "string", "enum": ["eu", "us"], "description": "`+hostileHTML+`"}, "replicas": {"type": "integer", "title": "`+hostileHTML+`"}}, "required": ["region"]}}`)),
		llmtest.Turn{Text: "Deployed."},
	)
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	b.poll("ask-pack is offered", `[...document.querySelectorAll("#attach-select option")].some(o => o.value === "ask-pack")`)
	b.step("attach ask-pack", chromedp.SetValue(chromedp.CSS("#attach-select"), "ask-pack"), chromedp.Click(chromedp.CSS("#attach-btn")))
	b.poll("ask-pack is attached", count("#attached .detach")+` === 1`)
	b.step("send a message", chromedp.SendKeys(chromedp.CSS("#composer"), "deploy"), chromedp.Click(chromedp.CSS("#send")))
	// enable_tools of the attached pack is approved by the attach: no card.
	b.poll("enable_tools is done", count(".tool-card:not(.pending) .result, .tool-card.done")+` >= 1`)
	b.step("run ask", chromedp.WaitVisible(chromedp.CSS(".tool-card.pending button.run")), chromedp.Click(chromedp.CSS(".tool-card.pending button.run")))
	b.step("the question shows", chromedp.WaitVisible(chromedp.CSS("form.question select[name=region]")))
	if msg := must(t, b.ctx, chromedp.Text(chromedp.CSS("form.question"))); !strings.Contains(msg, "ask-pack asks you: Deploy to which region?") {
		t.Fatalf("the question card says %q", msg)
	}
	// What the tool wrote is text: no element of its making, no script run.
	b.poll("the question's markup shows as text", `document.querySelector("form.question").textContent.includes("<img src=x")`)
	if n := must(t, b.ctx, chromedp.Evaluate[int](`document.querySelectorAll("form.question img, form.question b").length + (window.pwned ? 100 : 0)`)); n != 0 {
		t.Fatalf("the question's HTML was rendered (%d)", n)
	}
	b.shot("question")
	b.step("answer", chromedp.SetValue(chromedp.CSS("form.question select[name=region]"), "us"),
		chromedp.SendKeys(chromedp.CSS("form.question input[name=replicas]"), "3"), chromedp.Click(chromedp.CSS("form.question button.answer")))
	b.poll("the card says it was answered", `document.querySelector("form.question .status").textContent === "Answered."`)
	b.poll("the tool got the answer", `document.querySelector("#log").textContent.includes("Deployed.")`)
	calls := e.model.Requests()
	last := calls[len(calls)-1].Messages
	if got := last[len(last)-1].Content; !strings.Contains(got, `"action":"accept"`) || !strings.Contains(got, `"region":"us"`) || !strings.Contains(got, `"replicas":3`) {
		t.Fatalf("the model saw the tool's result %q, want the person's answer", got)
	}
}
