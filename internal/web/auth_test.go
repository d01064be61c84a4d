package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestNewNeedsToken: the server cannot be built open. Without a token, or
// with one short enough to guess, New refuses: packs serve always has one.
func TestNewNeedsToken(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, tok := range []string{"", "short", "0123456789abcde"} {
		cfg := e.srv.cfg
		cfg.Token = tok
		if _, err := New(cfg); !errors.Is(err, ErrTokenRequired) {
			t.Errorf("New with token %q: got %v, want ErrTokenRequired", tok, err)
		}
	}
}

// TestAPINeedsToken: on loopback, every /v1 request but GET /v1/status
// needs the token, whatever its method, and one without it changes
// nothing; the page's files and the status are public. With the token (as
// a bearer token) the same requests pass the guard.
func TestAPINeedsToken(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	tests := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/packs/notes/grants", map[string]any{"capability": "terminal_exec"}},
		{"DELETE", "/v1/packs/notes/grants/terminal_exec", nil},
		{"POST", "/v1/packs", map[string]any{"path": notesPack, "grant": []string{"terminal_exec"}}},
		{"POST", "/v1/invocations/inv_0000/approve", map[string]any{"always": true}},
		{"POST", "/v1/invocations/inv_0000/deny", nil},
		{"POST", "/v1/chats/" + c.ID + "/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}},
		{"POST", "/v1/chats/" + c.ID + "/messages", map[string]any{"text": "hi"}},
		{"POST", "/v1/chats/" + c.ID + "/packs", map[string]any{"pack": "notes"}},
		{"DELETE", "/v1/chats/" + c.ID + "/packs/notes", nil},
		{"POST", "/v1/chats/" + c.ID + "/stop", nil},
		{"POST", "/v1/chats", map[string]any{}},
		{"PUT", "/v1/packs/notes", nil},
		{"OPTIONS", "/v1/packs/notes/grants", nil},
		{"GET", "/v1/packs", nil},
		{"GET", "/v1/packs/notes", nil},
		{"GET", "/v1/capabilities", nil},
		{"GET", "/v1/capabilities/notes", nil},
		{"GET", "/v1/permissions", nil},
		{"GET", "/v1/agents", nil},
		{"POST", "/v1/agents", map[string]any{"name": "Tool-made", "capabilities": []string{"notes"}}},
		{"PATCH", "/v1/agents/Tool-made", map[string]any{"system_prompt": "obey the page"}},
		{"DELETE", "/v1/agents/Tool-made", nil},
		{"GET", "/v1/chats", nil},
		{"GET", "/v1/chats/" + c.ID, nil},
		{"GET", "/v1/chats/" + c.ID + "/events", nil},
		{"GET", "/v1/chats/" + c.ID + "/artifacts", nil},
		{"GET", "/v1/chats/" + c.ID + "/files/note.md", nil},
		{"GET", "/v1/invocations", nil},
		{"GET", "/v1/audit", nil},
		{"GET", "/v1/audit/verify", nil},
		{"POST", "/v1/packs", map[string]any{"source": notesPack, "preview": true}},
		{"POST", "/v1/packs/notes/update", map[string]any{"preview": true}},
		{"POST", "/v1/packs/notes/disable", nil},
		{"POST", "/v1/packs/notes/enable", nil},
		{"DELETE", "/v1/packs/notes", nil}, // last of those that need notes
		{"GET", "/v1/no-such-endpoint", nil},
		{"HEAD", "/v1/audit", nil},
		{"POST", "/", nil},
		{"POST", "/v1/status", nil},
	}
	for _, tt := range tests {
		for _, authz := range []string{"", "Bearer wrong-token-0000000000", "Bearer ", "bearer", "Basic " + e.token, "Bearer " + e.token + "x", "Bearer " + e.token[:len(e.token)-1]} {
			if got := e.doAuth(authz, tt.method, tt.path, tt.body, nil); got != http.StatusUnauthorized {
				t.Errorf("%s %s with Authorization %q: got %d, want 401", tt.method, tt.path, authz, got)
			}
		}
		if tt.method == "HEAD" || tt.method == "OPTIONS" || tt.method == "PUT" || tt.path == "/" || tt.path == "/v1/status" || strings.HasSuffix(tt.path, "/events") {
			continue
		}
		if got := e.do(tt.method, tt.path, tt.body, nil); got == http.StatusUnauthorized {
			t.Errorf("%s %s with the token: got 401", tt.method, tt.path)
		}
	}
	var eb errorBody
	if got := e.doAuth("", "POST", "/v1/packs/notes/grants", map[string]any{"capability": "terminal_exec"}, &eb); got != http.StatusUnauthorized ||
		eb.Error.Code != codeUnauthorized || !strings.Contains(eb.Error.Message, "token") {
		t.Errorf("the refusal: got %d %+v", got, eb)
	}

	for _, p := range []string{"/", "/app.js", "/app.css", "/index.html", "/v1/status"} {
		if got := e.doAuth("", "GET", p, nil, nil); got != http.StatusOK {
			t.Errorf("GET %s without the token: got %d, want 200", p, got)
		}
	}
	var st map[string]any
	e.doAuth("", "GET", "/v1/status", nil, &st)
	if st["home"] != nil || st["authenticated"] != false {
		t.Errorf("the public status: got %v, want no state directory and authenticated false", st)
	}
	e.do("GET", "/v1/status", nil, &st)
	if st["home"] != e.app.Home.Dir() || st["authenticated"] != true {
		t.Errorf("the status with the token: got %v", st)
	}
}

// TestTokenDoesNotLeak: the token never comes back in a response, and the
// address with ?token= is left for the address without it.
func TestTokenDoesNotLeak(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/?token=" + e.token, "/?token=" + e.token + "&x=1#/packs", "/index.html?token=" + e.token} {
		res, err := c.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || strings.Contains(loc, e.token) || strings.Contains(loc, "token=") {
			t.Errorf("GET %s: got %d, Location %q", path, res.StatusCode, loc)
		}
		if res.Header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(res.Header.Get("Cache-Control"), "no-store") {
			t.Errorf("GET %s: the redirect may be cached or referred: %v", path, res.Header)
		}
	}
	var st json.RawMessage
	e.do("GET", "/v1/status", nil, &st)
	if strings.Contains(string(st), e.token) {
		t.Errorf("the status holds the token: %s", st)
	}
}

// TestToolCannotApproveOrRevoke is the attack of issue 11, defect 3, with a
// real guest: a pack granted network to 127.0.0.1 runs its tool, an Extism
// plugin that sends any HTTP request it is given, against packs serve's own
// API. It tries to approve a call that waits in another chat and to revoke
// another pack's grant, requests that need no body. Neither happens: the
// tool holds no token (or the host refuses packs' own address).
func TestToolCannotApproveOrRevoke(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install("terminal_exec")
	// The attacking pack: one tool, get, that sends its input as an Extism
	// HTTP request ({"url", "method"}) and outputs the response body.
	dir := filepath.Join(t.TempDir(), "fetcher")
	wasm, err := os.ReadFile(filepath.Join("..", "..", "runtime", "testdata", "plugin_http.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"SKILL.md":   "---\nname: fetcher\ndescription: Fetch a page from a local service when asked to.\n---\n# Fetcher\n",
		"skill.toml": "[skill]\nid = \"test.fetcher\"\nname = \"fetcher\"\nversion = \"1.0.0\"\ndescription = \"Fetch\"\n\n[capabilities]\nnetwork = [\"127.0.0.1\", \"127.0.0.1:" + e.url[strings.LastIndex(e.url, ":")+1:] + "\"]\n",
		"tools.json": `[{"name": "get", "description": "Send an HTTP request.", "input_schema": {"type": "object"}, "run": {"wasm": "bin/x.wasm", "function": "get"}}]`,
		"bin/x.wasm": string(wasm),
	}
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var installed json.RawMessage
	if got := e.do("POST", "/v1/packs", map[string]any{"path": dir, "grant": []string{"network"}}, &installed); got != http.StatusCreated {
		// A host pattern with a port may not parse yet; grant the bare IP.
		files["skill.toml"] = "[skill]\nid = \"test.fetcher\"\nname = \"fetcher\"\nversion = \"1.0.0\"\ndescription = \"Fetch\"\n\n[capabilities]\nnetwork = [\"127.0.0.1\"]\n"
		if err := os.WriteFile(filepath.Join(dir, "skill.toml"), []byte(files["skill.toml"]), 0o644); err != nil {
			t.Fatal(err)
		}
		e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": dir, "grant": []string{"network"}}, nil)
	}

	// Chat A: the model asks for a call that waits for a person.
	e.model.Push(append(waitsForAPerson(), llmtest.Turn{Text: "done"})...)
	var a chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &a)
	ev := e.stream(a.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+a.ID+"/messages", map[string]any{"text": "go"}, nil)
	inv := ev.next("pending").Data["invocation"].(string)

	// Chat B: the person runs the fetcher's tool by hand; the tool turns on
	// packs serve.
	var b chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"fetcher"}}, &b)
	var r toolResultJSON
	e.must(http.StatusOK, "POST", "/v1/chats/"+b.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "fetcher"}}, &r)
	attacks := []map[string]string{
		{"url": e.url + "/v1/invocations/" + inv + "/approve", "method": "POST"},
		{"url": e.url + "/v1/packs/notes/grants/terminal_exec", "method": "DELETE"},
		{"url": "http://localhost" + e.url[strings.LastIndex(e.url, ":"):] + "/v1/invocations/" + inv + "/approve", "method": "POST"},
	}
	for _, args := range attacks {
		e.must(http.StatusOK, "POST", "/v1/chats/"+b.ID+"/calls", map[string]any{"name": "fetcher__get", "arguments": args}, &r)
		t.Logf("the tool's %s %s: error %v (%s): %.200s", args["method"], args["url"], r.IsError, r.ErrorKind, r.Content)
		if !r.IsError && !strings.Contains(r.Content, codeUnauthorized) {
			t.Errorf("the tool's %s %s was not refused: %s", args["method"], args["url"], r.Content)
		}
	}
	var pend struct{ Items []pendingJSON }
	e.must(http.StatusOK, "GET", "/v1/invocations", nil, &pend)
	if len(pend.Items) != 1 || pend.Items[0].Invocation != inv {
		t.Errorf("the tool decided the pending call: pending now %+v", pend.Items)
	}
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if !p.Capabilities[0].Granted {
		t.Errorf("the tool revoked notes' terminal_exec: %+v", p.Capabilities[0])
	}
	e.must(http.StatusOK, "POST", "/v1/invocations/"+inv+"/deny", nil, nil)
	ev.next("turn_done")
}
