package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/secrets"
)

// fakeKey is the API key the fake provider takes in the settings tests.
const fakeKey = "sk-settings-test-9f8e7d6c5b4a"

// raw sends a request and returns its status and body, unread.
func (e *env) raw(method, path string, body any, hdr ...string) (int, []byte) {
	e.t.Helper()
	var out json.RawMessage
	got := e.do(method, path, body, &out, hdr...)
	return got, out
}

// noKeyIn fails the test if the key shows in b.
func noKeyIn(t *testing.T, where string, b []byte) {
	t.Helper()
	if bytes.Contains(b, []byte(fakeKey)) {
		t.Errorf("the API key shows in %s", where)
	}
}

// TestSettingsAPI: on a home with no model, the model is set through the
// API: Test connection makes a real request (a right key: the model's
// answer; a wrong one: the provider's real 401), Save applies at once
// (the next message reaches the new model with the key), the key is never
// in a response, in packs.db or in model.json, a save without a key keeps
// it, new agents get the configured max tokens, and an empty key removes
// it.
func TestSettingsAPI(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.RequireKey(fakeKey)
	fake.Respond(func(r llmtest.Request) llmtest.Turn { return llmtest.Turn{Text: "OK from " + r.Model} })

	var st settingsJSON
	e.must(http.StatusOK, "GET", "/v1/settings/model", nil, &st)
	if st.Saved != nil || st.Effective != nil || st.Defaults["anthropic"].BaseURL != llm.DefaultAnthropicBaseURL {
		t.Fatalf("a new home's settings: %+v", st)
	}
	form := func(key *string, model string) map[string]any {
		b := map[string]any{"provider": "openai", "base_url": fake.OpenAIURL(), "model": model, "max_tokens": 777}
		if key != nil {
			b["api_key"] = *key
		}
		return b
	}
	right, wrong := fakeKey, "sk-wrong"

	// Test connection: one real request, the real answer or error.
	var res struct {
		OK       bool   `json:"ok"`
		Reply    string `json:"reply"`
		Error    string `json:"error"`
		Describe string `json:"describe"`
	}
	got, body := e.raw("POST", "/v1/settings/model/test", form(&right, "fake-model"))
	if err := json.Unmarshal(body, &res); err != nil || got != http.StatusOK || !res.OK || res.Reply != "OK from fake-model" {
		t.Fatalf("test with the right key: %d %s", got, body)
	}
	noKeyIn(t, "the test's answer", body)
	got, body = e.raw("POST", "/v1/settings/model/test", form(&wrong, "fake-model"))
	res = struct {
		OK       bool   `json:"ok"`
		Reply    string `json:"reply"`
		Error    string `json:"error"`
		Describe string `json:"describe"`
	}{}
	if err := json.Unmarshal(body, &res); err != nil || got != http.StatusOK || res.OK || !strings.Contains(res.Error, "401") || !strings.Contains(res.Error, "Incorrect API key") {
		t.Fatalf("test with a wrong key: %d %s", got, body)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("two tests made %d requests to the provider, want 2", n)
	}
	var status struct {
		Model struct{ Configured bool } `json:"model"`
	}
	e.must(http.StatusOK, "GET", "/v1/status", nil, &status)
	if status.Model.Configured {
		t.Fatal("a test saved the model")
	}

	// Save: at once, no restart.
	got, body = e.raw("PUT", "/v1/settings/model", form(&right, "fake-model"))
	if got != http.StatusOK {
		t.Fatalf("save: %d %s", got, body)
	}
	noKeyIn(t, "the save's answer", body)
	if err := json.Unmarshal(body, &st); err != nil || st.Saved == nil || !st.Saved.APIKeySet || st.Effective == nil || st.Effective.Model != "fake-model" || st.Effective.MaxTokens != 777 {
		t.Fatalf("saved: %s", body)
	}
	for _, path := range []string{"/v1/settings/model", "/v1/status"} {
		got, body = e.raw("GET", path, nil)
		noKeyIn(t, "GET "+path, body)
		if got != http.StatusOK || path == "/v1/status" && !bytes.Contains(body, []byte(`"configured":true`)) {
			t.Fatalf("after the save, GET %s: %d %s", path, got, body)
		}
	}
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "hello"}, nil)
	if done := ev.next("turn_done"); done.Data["text"] != "OK from fake-model" {
		t.Fatalf("the chat's reply: %v", done.Data)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	if last.Header.Get("Authorization") != "Bearer "+fakeKey || last.Model != "fake-model" || last.MaxTokens != 777 {
		t.Errorf("the chat's request: model %q, max tokens %d, authorization %q", last.Model, last.MaxTokens, last.Header.Get("Authorization"))
	}

	// A save without a key keeps the stored one.
	e.must(http.StatusOK, "PUT", "/v1/settings/model", form(nil, "fake-model-2"), nil)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "again"}, nil)
	if done := ev.next("turn_done"); done.Data["text"] != "OK from fake-model-2" {
		t.Fatalf("after a save without a key: %v", done.Data)
	}

	// New agents start with the configured max tokens.
	var ag agentJSON
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"name": "helper"}, &ag)
	if ag.MaxTokens != 777 {
		t.Errorf("a new agent's max tokens: got %d, want the configured 777", ag.MaxTokens)
	}

	// The key is in the secret store, sealed, and nowhere else.
	home := e.app.Home.Dir()
	if v, err := secrets.Open(home).Get(ModelKeySecret); err != nil || string(v) != fakeKey {
		t.Errorf("the secret store holds %q, %v", v, err)
	}
	for _, name := range []string{filepath.Base(e.app.Home.DBPath()), filepath.Base(e.app.Home.DBPath()) + "-wal", ModelFile, secrets.StoreFile} {
		b, err := os.ReadFile(filepath.Join(home, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		noKeyIn(t, name, b)
	}
	if fi, err := os.Stat(filepath.Join(home, ModelFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v", ModelFile, fi, err)
	}

	// An empty key removes it.
	empty := ""
	e.must(http.StatusOK, "PUT", "/v1/settings/model", form(&empty, "fake-model-2"), &st)
	if st.Saved.APIKeySet || st.Effective.APIKeySet {
		t.Errorf("after removing the key: %+v %+v", st.Saved, st.Effective)
	}
	if _, err := secrets.Open(home).Get(ModelKeySecret); err == nil {
		t.Error("the key is still in the secret store")
	}
}

// TestSettingsBadInput: settings that make no model are refused, each
// with what to do, and nothing is saved.
func TestSettingsBadInput(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	for _, tt := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"unknown provider", map[string]any{"provider": "gemini", "base_url": "http://127.0.0.1:1/v1", "model": "m", "max_tokens": 10}, "openai"},
		{"no model", map[string]any{"provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": " ", "max_tokens": 10}, "required"},
		{"bad URL", map[string]any{"provider": "openai", "base_url": "localhost:11434", "model": "m", "max_tokens": 10}, "http://"},
		{"no max tokens", map[string]any{"provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m", "max_tokens": 0}, "max tokens"},
		{"hosted without a key", map[string]any{"provider": "anthropic", "base_url": llm.DefaultAnthropicBaseURL, "model": "m", "max_tokens": 10}, "API key"},
		{"a key with a line break", map[string]any{"provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m", "max_tokens": 10, "api_key": "sk-a\nsk-b"}, "line breaks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/v1/settings/model", "/v1/settings/model/test"} {
				method := "PUT"
				if strings.HasSuffix(path, "/test") {
					method = "POST"
				}
				var eb errorBody
				if got := e.do(method, path, tt.body, &eb); got != http.StatusBadRequest || !strings.Contains(eb.Error.Message, tt.want) {
					t.Errorf("%s %s: got %d %q, want 400 saying %q", method, path, got, eb.Error.Message, tt.want)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.app.Home.Dir(), ModelFile)); !os.IsNotExist(err) {
		t.Errorf("refused settings were saved: %v", err)
	}
}

// TestSettingsInFlight: a save changes the next turn, never one in flight:
// a reply under way finishes with the model it started with.
func TestSettingsInFlight(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.model.Push(llmtest.Turn{Text: "the old model, slowly", Delay: 500 * time.Millisecond})
	next := llmtest.NewServer(llmtest.Turn{Text: "the new model"})
	t.Cleanup(next.Close)
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "one"}, nil)
	e.must(http.StatusOK, "PUT", "/v1/settings/model", map[string]any{"provider": "openai", "base_url": next.OpenAIURL(), "model": "new", "max_tokens": 100}, nil)
	if done := ev.next("turn_done"); done.Data["text"] != "the old model, slowly" {
		t.Fatalf("the turn in flight: %v", done.Data)
	}
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "two"}, nil)
	if done := ev.next("turn_done"); done.Data["text"] != "the new model" {
		t.Fatalf("the next turn: %v", done.Data)
	}
	if n := len(next.Requests()); n != 1 {
		t.Errorf("the new model got %d requests, want 1", n)
	}
}

// TestSettingsDenied: without the token the settings can be neither read
// nor changed nor tested, and a cross-origin request with the token is
// refused too; nothing is saved.
func TestSettingsDenied(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	body := map[string]any{"provider": "openai", "base_url": fake.OpenAIURL(), "model": "m", "max_tokens": 10, "api_key": fakeKey}
	for _, rq := range []struct{ method, path string }{
		{"GET", "/v1/settings/model"}, {"PUT", "/v1/settings/model"}, {"POST", "/v1/settings/model/test"},
	} {
		var b any
		if rq.method != "GET" {
			b = body
		}
		var eb errorBody
		if got := e.doAuth("", rq.method, rq.path, b, &eb); got != http.StatusUnauthorized || eb.Error.Code != codeUnauthorized {
			t.Errorf("%s %s without the token: got %d %+v, want 401", rq.method, rq.path, got, eb)
		}
		if rq.method == "GET" {
			continue
		}
		for _, hdr := range [][]string{{"Origin", "http://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
			if got := e.do(rq.method, rq.path, b, &eb, hdr...); got != http.StatusForbidden || eb.Error.Code != codeForbidden {
				t.Errorf("%s %s with %s: got %d %+v, want 403", rq.method, rq.path, hdr, got, eb)
			}
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("refused requests reached the provider %d times", n)
	}
	if _, err := os.Stat(filepath.Join(e.app.Home.Dir(), ModelFile)); !os.IsNotExist(err) {
		t.Errorf("a refused request saved the settings: %v", err)
	}
	if _, err := secrets.Open(e.app.Home.Dir()).Get(ModelKeySecret); err == nil {
		t.Error("a refused request stored the key")
	}
}

// TestSettingsOverrides: what packs serve was started with (here
// PACKS_MODEL) wins over a saved setting, the chat uses it, and the
// settings say which setting is fixed and by what.
func TestSettingsOverrides(t *testing.T) {
	pinned := func(k string) string {
		if k == "PACKS_MODEL" {
			return "pinned-model"
		}
		return ""
	}
	e := newEnv(t, envOptions{noModel: true, resolveModel: func(saved llm.Config) (llm.Config, []llm.Override, error) {
		return llm.ResolveSaved("", saved, pinned, llm.Config{})
	}})
	e.model.Push(llmtest.Turn{Text: "pinned"})
	var st settingsJSON
	e.must(http.StatusOK, "PUT", "/v1/settings/model", map[string]any{"provider": "openai", "base_url": e.model.OpenAIURL(), "model": "mine", "max_tokens": 100}, &st)
	if st.Saved.Model != "mine" || st.Effective.Model != "pinned-model" || len(st.Overrides) != 1 || st.Overrides[0] != (llm.Override{Setting: "model", From: "PACKS_MODEL"}) {
		t.Fatalf("saved %+v, effective %+v, overrides %v", st.Saved, st.Effective, st.Overrides)
	}
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "which model?"}, nil)
	ev.next("turn_done")
	if reqs := e.model.Requests(); len(reqs) != 1 || reqs[0].Model != "pinned-model" {
		t.Errorf("the chat asked %+v, want pinned-model", reqs)
	}
}

// TestSettingsAnthropic: the same for the Anthropic protocol: a wrong key
// gets Anthropic's own error, the right one an answer, and after the save
// the chat speaks Anthropic's Messages API with the key in x-api-key.
func TestSettingsAnthropic(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.RequireKey(fakeKey)
	fake.Respond(func(r llmtest.Request) llmtest.Turn { return llmtest.Turn{Text: "hi from " + r.Protocol} })
	form := func(key string) map[string]any {
		return map[string]any{"provider": "anthropic", "base_url": fake.AnthropicURL(), "model": "claude-fake", "max_tokens": 200, "api_key": key}
	}
	var res map[string]any
	e.must(http.StatusOK, "POST", "/v1/settings/model/test", form("sk-wrong"), &res)
	if msg, _ := res["error"].(string); res["ok"] != false || !strings.Contains(msg, "401") || !strings.Contains(msg, "invalid x-api-key") {
		t.Errorf("a wrong key: %v", res)
	}
	e.must(http.StatusOK, "POST", "/v1/settings/model/test", form(fakeKey), &res)
	if res["ok"] != true || res["reply"] != "hi from anthropic" {
		t.Errorf("the right key: %v", res)
	}
	e.must(http.StatusOK, "PUT", "/v1/settings/model", form(fakeKey), nil)
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "hello"}, nil)
	if done := ev.next("turn_done"); done.Data["text"] != "hi from anthropic" {
		t.Fatalf("the chat's reply: %v", done.Data)
	}
	reqs := fake.Requests()
	if last := reqs[len(reqs)-1]; last.Protocol != "anthropic" || last.Header.Get("X-Api-Key") != fakeKey || last.MaxTokens != 200 {
		t.Errorf("the chat's request: %s, max tokens %d", last.Protocol, last.MaxTokens)
	}
}
