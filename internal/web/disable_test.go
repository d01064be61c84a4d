package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/chat"
)

// TestDisabledPack: the web app lists a disabled pack as disabled, refuses
// to attach it to a chat (403) or run its tools by hand, and denies a
// tool call of a chat that had it attached. Enabled again, it runs.
func TestDisabledPack(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	var r toolResultJSON
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}, &r)

	if _, err := e.app.SetEnabled(ctx, "notes", false); err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []packJSON }
	e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
	if len(list.Items) != 1 || !list.Items[0].Disabled {
		t.Errorf("GET /v1/packs: %+v, want notes disabled", list.Items)
	}
	var one packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &one)
	if !one.Disabled {
		t.Errorf("GET /v1/packs/notes: %+v, want disabled", one)
	}

	var eb errorBody
	if got := e.do("POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &eb); got != http.StatusForbidden || !strings.Contains(eb.Error.Message, "disabled") {
		t.Errorf("new chat with a disabled pack: %d %+v", got, eb)
	}
	var c2 chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c2)
	if got := e.do("POST", "/v1/chats/"+c2.ID+"/packs", map[string]any{"pack": "notes"}, &eb); got != http.StatusForbidden {
		t.Errorf("attach a disabled pack: %d %+v", got, eb)
	}
	if got := e.do("POST", "/v1/packs/notes/calls", map[string]any{"tool": "echo", "arguments": map[string]string{"text": "hi"}}, &eb); got != http.StatusForbidden {
		t.Errorf("run a disabled pack's tool by hand: %d %+v", got, eb)
	}
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}, &r)
	if !r.IsError || r.ErrorKind != chat.ErrKindDenied || !strings.Contains(r.Content, "disabled") {
		t.Errorf("tool call of a disabled pack in a chat: %+v", r)
	}

	if _, err := e.app.SetEnabled(ctx, "notes", true); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}, &r)
	if r.IsError {
		t.Errorf("tool call after enable: %+v", r)
	}
}
