package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAPI sends arbitrary JSON bodies to the endpoints that parse one. No
// body may crash the server or make it fail inside (500): each is answered,
// or refused with a structured error.
func FuzzAPI(f *testing.F) {
	e := newEnv(f, envOptions{noModel: true})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	h, err := e.srv.Handler("127.0.0.1:7777")
	if err != nil {
		f.Fatal(err)
	}
	paths := []string{
		"/v1/chats",
		"/v1/chats/" + c.ID + "/packs",
		"/v1/chats/" + c.ID + "/messages",
		"/v1/chats/" + c.ID + "/calls",
		"/v1/packs/notes/grants",
		"/v1/invocations/inv_x/approve",
		"/v1/packs/notes/update",
	}
	for i, body := range []string{`{}`, `{"attach":["notes"]}`, `{"pack":"notes"}`, `{"text":"hi"}`,
		`{"name":"read_file","arguments":{"pack_id":"notes","path":"SKILL.md"}}`, `{"capability":"terminal_exec","resources":["sh"]}`,
		`{"always":true}`, `[`, `null`, `{"name":"open_docs","arguments":"x"}`, `{"capability":"terminal_exec","scope":"chat"}`,
		`{"preview":true}`, `{"grant":["network"],"integrity":"sha256:00"}`, `{"grant":"all"}`} {
		f.Add(uint8(i), body)
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Host = "127.0.0.1:7777"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: got %d %s", path, body, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("POST %s %q: got Content-Type %q", path, body, ct)
		}
	})
}
