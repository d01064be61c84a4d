package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestWebAttachIsConsent: in the web app, attaching a pack (Attach, or an
// agent's capabilities) approves reading it and listing its tools, with no
// card; the pack's own tool still asks, and its card says how long it
// waited for the person and how long it ran.
func TestWebAttachIsConsent(t *testing.T) {
	e := newEnv(t, envOptions{})
	capabilityPacks(e)
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)),
		calls(call("notes__echo", `{"text":"hi"}`)),
		llmtest.Turn{Text: "Echoed."},
	)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "echo hi"}, nil)
	done := ev.next("tool_done")
	if done.Data["name"] != chat.ToolEnableTools || done.Data["approved"] != true || done.Data["approver"] != "attach" || done.Data["by_attach"] != true {
		t.Errorf("enable_tools: got %v, want approved by attach", done.Data)
	}
	p := ev.next("pending")
	if p.Data["tool"] != "echo" {
		t.Fatalf("pending: got %v, want the echo card", p.Data)
	}
	const delay = 300 * time.Millisecond
	time.Sleep(delay)
	e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/approve", nil, nil)
	done = ev.next("tool_done")
	waited, _ := done.Data["waited_ms"].(float64)
	ran, _ := done.Data["ran_ms"].(float64)
	timing, _ := done.Data["timing"].(string)
	if done.Data["approved"] != true || done.Data["by_attach"] == true || waited < float64(delay.Milliseconds()) || ran <= 0 || ran >= waited ||
		!strings.HasPrefix(timing, "waited ") || !strings.Contains(timing, " for you, ran ") {
		t.Errorf("echo: got %v; want approved by the person, waited ≥ %v, 0 < ran < waited, and the timing said", done.Data, delay)
	}
	ev.next("turn_done")

	// An agent's capabilities are attached by the person's choice of agent.
	var ag map[string]any
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"name": "Note taker", "capabilities": []string{"notes"}}, &ag)
	var ac chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"agent": ag["id"]}, &ac)
	e.model.Push(calls(call(chat.ToolOpenDocs, `{"pack_id":"notes"}`)), llmtest.Turn{Text: "Read."})
	aev := e.stream(ac.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+ac.ID+"/messages", map[string]any{"text": "read the notes docs"}, nil)
	if done := aev.next("tool_done"); done.Data["approved"] != true || done.Data["by_attach"] != true {
		t.Errorf("open_docs in the agent's chat: got %v, want approved by attach", done.Data)
	}
	aev.next("turn_done")
}
