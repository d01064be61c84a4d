package web

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

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
			for range 2 {
				p := ev.next("pending")
				e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/approve", nil, nil)
			}
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
