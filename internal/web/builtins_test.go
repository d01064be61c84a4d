package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

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
	decide(chat.ToolEnableTools, "approve")
	decide(chat.ToolEnableTools, "approve")
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
