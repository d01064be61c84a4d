package web

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/packs"
)

func TestInstallAndGrants(t *testing.T) {
	e := newEnv(t, envOptions{})
	p := e.install()
	if p.Name != "notes" || p.Version != "1.0.0" || p.Status != "ok" || len(p.Tools) != 5 {
		t.Fatalf("installed: got %+v", p)
	}
	if len(p.Capabilities) != 1 || p.Capabilities[0].Capability != capability.TerminalExec || p.Capabilities[0].Granted ||
		p.Capabilities[0].Held == nil || *p.Capabilities[0].Held || p.Capabilities[0].Reason == "" {
		t.Errorf("installed without grants: got capabilities %+v", p.Capabilities)
	}
	var list struct {
		Items []packJSON `json:"items"`
	}
	e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "notes" || !slices.ContainsFunc(list.Items[0].Tools, func(t toolJSON) bool { return t.Name == "note" }) {
		t.Fatalf("list: got %+v", list.Items)
	}

	// Granted / revoked pair.
	e.must(http.StatusOK, "POST", "/v1/packs/notes/grants", map[string]any{"capability": "terminal_exec"}, &p)
	if c := p.Capabilities[0]; !c.Granted || c.Held == nil || !*c.Held || !slices.Contains(c.Effective, "sh") {
		t.Errorf("after grant: got %+v", c)
	}
	e.must(http.StatusOK, "DELETE", "/v1/packs/notes/grants/terminal_exec", nil, &p)
	if c := p.Capabilities[0]; c.Granted || *c.Held {
		t.Errorf("after revoke: got %+v", c)
	}
	// A grant cannot widen the request.
	var eb errorBody
	if got := e.do("POST", "/v1/packs/notes/grants", map[string]any{"capability": "network"}, &eb); got != http.StatusBadRequest {
		t.Errorf("grant of an unrequested capability: got %d %+v", got, eb)
	}

	// Reinstall with a grant at install.
	p = e.install("all")
	if !p.Capabilities[0].Granted || !*p.Capabilities[0].Held {
		t.Errorf("install with grant all: got %+v", p.Capabilities[0])
	}
}

func TestInstallRejects(t *testing.T) {
	e := newEnv(t, envOptions{})
	bad := filepath.Join(t.TempDir(), "broken")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\nname: Not Valid!\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		body       any
		wantStatus int
		wantCode   string
	}{
		{"relative path", map[string]any{"path": "testdata/notes"}, 400, codeBadRequest},
		{"missing path", map[string]any{"path": filepath.Join(t.TempDir(), "nope")}, 400, codeBadRequest},
		{"not a pack source", map[string]any{"path": filepath.Join(notesPack, "SKILL.md")}, 400, codeBadRequest},
		{"pack with errors", map[string]any{"path": bad}, 422, codeInvalidPack},
		{"unrequested grant", map[string]any{"path": notesPack, "grant": []string{"network"}}, 400, codeBadRequest},
		{"unknown field", map[string]any{"pth": notesPack}, 400, codeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var eb errorBody
			got := e.do("POST", "/v1/packs", tt.body, &eb)
			if got != tt.wantStatus || eb.Error.Code != tt.wantCode || eb.Error.Message == "" {
				t.Errorf("got %d %+v, want %d %s", got, eb.Error, tt.wantStatus, tt.wantCode)
			}
			if tt.wantCode == codeInvalidPack && !slices.ContainsFunc(eb.Error.Findings, func(f packs.Finding) bool { return f.Severity == "error" && f.Line > 0 }) {
				t.Errorf("pack with errors: no finding with a line: %+v", eb.Error.Findings)
			}
		})
	}
	var list struct{ Total int }
	e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
	if list.Total != 0 {
		t.Errorf("a refused install left %d packs installed", list.Total)
	}
}

// tarPack archives the folder dir as name/... in a .tar.gz.
func tarPack(t *testing.T, dir, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(filepath.Join(name, rel))
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func upload(t *testing.T, e *env, filename string, archive []byte, grant string) (int, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if grant != "" {
		mw.WriteField("grant", grant)
	}
	fw, err := mw.CreateFormFile("archive", filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(archive)
	mw.Close()
	req, _ := http.NewRequest("POST", e.url+"/v1/packs", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func TestInstallUpload(t *testing.T) {
	e := newEnv(t, envOptions{})
	archive := tarPack(t, notesPack, "notes")
	if got, body := upload(t, e, "notes.txt", archive, ""); got != http.StatusBadRequest {
		t.Errorf("upload named .txt: got %d %s, want 400", got, body)
	}
	got, body := upload(t, e, "../../notes-1.0.tar.gz", archive, "terminal_exec")
	if got != http.StatusCreated || !strings.Contains(string(body), `"name":"notes"`) || !strings.Contains(string(body), `"granted":true`) {
		t.Fatalf("upload: got %d %s", got, body)
	}
	if _, err := os.Stat(filepath.Join(e.app.Home.Dir(), "..", "notes-1.0.tar.gz")); err == nil {
		t.Error("the upload's ../ file name was followed")
	}
}

// TestChatTurn drives one turn through the API against the fake model:
// the tool cards arrive as events, the person runs two calls (one makes an
// artifact) and denies the third, and the audit log has each decision.
func TestChatTurn(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	if len(c.Packs) != 1 || c.Packs[0].Name != "notes" || !slices.Contains(c.Tools, chat.ToolEnableTools) {
		t.Fatalf("created chat: got %+v", c)
	}
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)),
		calls(call("notes__note", `{}`)),
		calls(call("notes__echo", `{"text":"secret"}`)),
		llmtest.Turn{Text: "Wrote note.md; the echo was denied."},
	)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "write a note"}, nil)

	approve := func(tool, verb string, body any) map[string]any {
		t.Helper()
		start := ev.next("tool_start")
		p := ev.next("pending")
		if p.Data["tool"] != tool || p.Data["call_id"] != start.Data["call_id"] || p.Data["chat"] != c.ID {
			t.Fatalf("pending: got %v after tool_start %v, want tool %s", p.Data, start.Data, tool)
		}
		var pend struct{ Items []pendingJSON }
		e.must(http.StatusOK, "GET", "/v1/invocations?chat="+c.ID, nil, &pend)
		if len(pend.Items) != 1 || pend.Items[0].Invocation != p.Data["invocation"] {
			t.Fatalf("pending list: got %+v", pend.Items)
		}
		e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/"+verb, body, nil)
		d := ev.next("decided")
		if d.Data["invocation"] != p.Data["invocation"] {
			t.Fatalf("decided: got %v", d.Data)
		}
		done := ev.next("tool_done")
		if done.Data["invocation"] != p.Data["invocation"] || done.Data["call_id"] != start.Data["call_id"] {
			t.Fatalf("tool_done: got %v", done.Data)
		}
		return done.Data
	}
	// enable_tools of the attached pack: approved by the attach, no card.
	done := ev.next("tool_done").Data
	if done["name"] != chat.ToolEnableTools || done["approver"] != "attach" || done["is_error"] != false || !strings.Contains(done["content"].(string), `"enabled":true`) {
		t.Errorf("enable_tools: got %v", done)
	}
	done = approve("note", "approve", map[string]any{"always": false})
	arts, _ := done["artifacts"].([]any)
	if done["approved"] != true || done["is_error"] != false || len(arts) != 1 || arts[0].(map[string]any)["path"] != "note.md" {
		t.Errorf("note: got %v", done)
	}
	done = approve("echo", "deny", nil)
	if done["approved"] != false || done["is_error"] != true || done["error_kind"] != chat.ErrKindDenied {
		t.Errorf("echo denied: got %v", done)
	}
	end := ev.next("turn_done")
	if end.Data["text"] != "Wrote note.md; the echo was denied." || end.Data["calls"] != float64(3) {
		t.Errorf("turn_done: got %v", end.Data)
	}
	if reqs := e.model.Requests(); len(reqs) != 4 || !strings.Contains(reqs[3].Messages[len(reqs[3].Messages)-1].Content, "denied") {
		t.Errorf("the model was not told of the denial: %d requests", len(reqs))
	}

	// The artifact is listed and served, sandboxed.
	var al struct{ Items []chat.Artifact }
	e.must(http.StatusOK, "GET", "/v1/chats/"+c.ID+"/artifacts", nil, &al)
	if len(al.Items) != 1 || al.Items[0].Path != "note.md" || al.Items[0].Size != int64(len("# Note\n")) {
		t.Fatalf("artifacts: got %+v", al.Items)
	}
	req, _ := http.NewRequest("GET", e.url+"/v1/chats/"+c.ID+"/files/note.md?download=1", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "# Note\n" || !strings.HasPrefix(res.Header.Get("Content-Security-Policy"), "sandbox") ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("file: got %q, headers %v", b, res.Header)
	}
	for _, p := range []string{"../../packs.lock", "..%2f..%2fpacks.lock", "nope.md"} {
		if got := e.do("GET", "/v1/chats/"+c.ID+"/files/"+p, nil, nil); got == http.StatusOK {
			t.Errorf("file %s: served", p)
		}
	}

	// The chat keeps the conversation.
	e.must(http.StatusOK, "GET", "/v1/chats/"+c.ID, nil, &c)
	if len(c.Messages) != 8 || c.Messages[0].Content != "write a note" || c.Running {
		t.Errorf("chat: got %d messages, running %v", len(c.Messages), c.Running)
	}

	// The audit log has each call with its decision, the person's reads of
	// the workspace among them (the two paths with ".." never got that far),
	// and the chain holds.
	var au struct{ Items []audit.Entry }
	e.must(http.StatusOK, "GET", "/v1/audit?kind=invocation", nil, &au)
	var got []string
	for _, en := range au.Items {
		got = append(got, en.Tool+":"+statusOf(t, en))
	}
	want := []string{"enable_tools:ok", "note:ok", "echo:denied", "read_workspace_file:ok", "read_workspace_file:error"}
	if !slices.Equal(got, want) {
		t.Errorf("audit: got %v, want %v", got, want)
	}
	e.must(http.StatusOK, "GET", "/v1/audit?pack=notes&kind=invocation&limit=1", nil, &au)
	if len(au.Items) != 1 || au.Items[0].Tool != "echo" {
		t.Errorf("audit filter: got %+v", au.Items)
	}
	var v struct {
		OK   bool  `json:"ok"`
		Rows int64 `json:"rows"`
	}
	e.must(http.StatusOK, "GET", "/v1/audit/verify", nil, &v)
	if !v.OK || v.Rows < 3 {
		t.Errorf("verify: got %+v", v)
	}
}

func statusOf(t *testing.T, en audit.Entry) string {
	t.Helper()
	var b struct{ Status string }
	if err := json.Unmarshal(en.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Status
}

// TestAlwaysForChat: "Always for this chat" answers the next call of the
// same class without asking; another chat asks again.
func TestAlwaysForChat(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	e.model.Push(
		calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)),
		calls(call("notes__echo", `{"text":"one"}`)),
		calls(call("notes__echo", `{"text":"two"}`)),
		llmtest.Turn{Text: "ok"},
	)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "echo"}, nil)
	if done := ev.next("tool_done"); done.Data["by_attach"] != true {
		t.Errorf("enable_tools: got %v, want approved by attach", done.Data)
	}
	p := ev.next("pending")
	e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/approve", map[string]any{"always": true}, nil)
	if d := ev.next("decided"); d.Data["verdict"] != "allow_chat" {
		t.Errorf("decided: got %v", d.Data)
	}
	first := ev.next("tool_done")
	second := ev.next("tool_done")
	if first.Data["remembered"] != false || second.Data["remembered"] != true || second.Data["approved"] != true {
		t.Errorf("got first %v, second %v", first.Data, second.Data)
	}
	ev.next("turn_done")
}

// TestStopDenies: stopping a turn while a call waits denies it.
func TestStopDenies(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	e.model.Push(append(waitsForAPerson(), llmtest.Turn{Text: "never"})...)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "go"}, nil)
	p := ev.next("pending")
	var eb errorBody
	if got := e.do("POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "again"}, &eb); got != http.StatusConflict {
		t.Errorf("second send during a turn: got %d %+v", got, eb)
	}
	var st map[string]bool
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/stop", nil, &st)
	if !st["stopped"] {
		t.Error("stop: nothing was running")
	}
	if d := ev.next("decided"); d.Data["invocation"] != p.Data["invocation"] || d.Data["verdict"] != "deny" {
		t.Errorf("decided: got %v", d.Data)
	}
	if got := e.do("POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/approve", nil, &eb); got != http.StatusNotFound {
		t.Errorf("approve after the turn ended: got %d", got)
	}
	if te := ev.next("turn_error"); te.Data["kind"] != "stopped" {
		t.Errorf("turn_error: got %v", te.Data)
	}
}

// TestNoModel: without a model the status says how to set one, a message
// is refused with a clear error, and tools still run by hand.
func TestNoModel(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	var st struct {
		Model struct {
			Configured     bool   `json:"configured"`
			HowToConfigure string `json:"how_to_configure"`
		} `json:"model"`
	}
	e.must(http.StatusOK, "GET", "/v1/status", nil, &st)
	if st.Model.Configured || st.Model.HowToConfigure == "" {
		t.Errorf("status: got %+v", st)
	}
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	var eb errorBody
	if got := e.do("POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "hi"}, &eb); got != http.StatusConflict ||
		eb.Error.Code != codeNoModel || !strings.Contains(eb.Error.Message, "--provider") {
		t.Errorf("send without a model: got %d %+v", got, eb)
	}
	// By hand: a pack tool is unknown until its tools are enabled.
	var r toolResultJSON
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}, &r)
	if !r.IsError || r.ErrorKind != chat.ErrKindUnknownTool {
		t.Errorf("echo before enable_tools: got %+v", r)
	}
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}, &r)
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}, &r)
	if r.IsError || r.Content != `{"result":{"echo":{"text":"hi"}}}` || r.Approver != "web:by-hand" {
		t.Errorf("echo by hand: got %+v", r)
	}
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]int{"text": 3}}, &r)
	if !r.IsError || r.ErrorKind != chat.ErrKindArguments {
		t.Errorf("echo with bad arguments: got %+v", r)
	}
}

// prefixed matches an error message that names its package first.
var prefixed = regexp.MustCompile(`^[a-z]+: \S`)

func TestErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		name, method, path string
		body               any
		hdr                []string
		wantStatus         int
		wantCode           string
	}{
		{"unknown endpoint", "GET", "/v1/teleport", nil, nil, 404, codeNotFound},
		{"unknown chat", "GET", "/v1/chats/chat_0000", nil, nil, 404, codeNotFound},
		{"not a chat id", "GET", "/v1/chats/whatever", nil, nil, 404, codeNotFound},
		{"unknown pack", "GET", "/v1/packs/nope", nil, nil, 404, codeNotFound},
		{"unknown invocation", "POST", "/v1/invocations/inv_00/approve", nil, nil, 404, codeNotFound},
		{"attach unknown pack", "POST", "/v1/chats", map[string]any{"attach": []string{"nope"}}, nil, 404, codeNotFound},
		{"bad since", "GET", "/v1/audit?since=yesterdayish", nil, nil, 400, codeBadRequest},
		{"bad limit", "GET", "/v1/audit?limit=0", nil, nil, 400, codeBadRequest},
		{"wrong content type", "POST", "/v1/chats", "x", []string{"Content-Type", "text/plain"}, 400, codeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var eb errorBody
			got := e.do(tt.method, tt.path, tt.body, &eb, tt.hdr...)
			if got != tt.wantStatus || eb.Error.Code != tt.wantCode || eb.Error.Status != tt.wantStatus || !prefixed.MatchString(eb.Error.Message) {
				t.Errorf("got %d %+v, want %d %s", got, eb.Error, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

func TestUIServed(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, p := range []string{"/", "/app.js", "/app.css"} {
		res, err := http.Get(e.url + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || len(b) == 0 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s: got %d, %d bytes, CSP %q", p, res.StatusCode, len(b), res.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestRunByHand: the packs page runs a tool in one visible chat per pack,
// "by hand: PACK"; a call it cannot make (bad JSON, arguments that are not
// an object, an unknown tool) creates no chat and no audit row (issue 12,
// defect 7).
func TestRunByHand(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	rawPost := func(path, body string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	refused := []struct {
		name, body string
		want       int
	}{
		{"bad JSON", `{"tool": "echo", "arguments": {"text": "hi"`, http.StatusBadRequest},
		{"arguments not an object", `{"tool": "echo", "arguments": ["hi"]}`, http.StatusBadRequest},
		{"unknown tool", `{"tool": "teleport", "arguments": {}}`, http.StatusNotFound},
		{"no tool", `{"arguments": {}}`, http.StatusBadRequest},
	}
	for _, tt := range refused {
		if got := rawPost("/v1/packs/notes/calls", tt.body); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := rawPost("/v1/packs/nope/calls", `{"tool": "echo", "arguments": {}}`); got != http.StatusNotFound {
		t.Errorf("unknown pack: got %d, want 404", got)
	}
	var chats struct {
		Items []chatJSON `json:"items"`
	}
	e.must(http.StatusOK, "GET", "/v1/chats", nil, &chats)
	var au struct{ Items []auditRow }
	e.must(http.StatusOK, "GET", "/v1/audit?kind=invocation", nil, &au)
	if len(chats.Items) != 0 || len(au.Items) != 0 {
		t.Fatalf("refused calls left %d chats and %d audit rows", len(chats.Items), len(au.Items))
	}

	var r1, r2 byHandJSON
	e.must(http.StatusOK, "POST", "/v1/packs/notes/calls", map[string]any{"tool": "echo", "arguments": map[string]string{"text": "one"}}, &r1)
	e.must(http.StatusOK, "POST", "/v1/packs/notes/calls", map[string]any{"tool": "echo", "arguments": map[string]string{"text": "two"}}, &r2)
	if r1.IsError || r2.IsError || r1.Chat == "" || r1.Chat != r2.Chat || r2.Content != `{"result":{"echo":{"text":"two"}}}` || r2.Approver != "web:by-hand" {
		t.Fatalf("two calls by hand: got %+v and %+v", r1, r2)
	}
	e.must(http.StatusOK, "GET", "/v1/chats", nil, &chats)
	if len(chats.Items) != 1 || chats.Items[0].ID != r1.Chat || chats.Items[0].Title != "by hand: notes" {
		t.Fatalf("chats after two calls by hand: got %+v", chats.Items)
	}
	// A new server over the same home finds the same chat.
	e.srv.forgetByHand()
	var r3 byHandJSON
	e.must(http.StatusOK, "POST", "/v1/packs/notes/calls", map[string]any{"tool": "echo", "arguments": map[string]string{"text": "three"}}, &r3)
	if r3.Chat != r1.Chat {
		t.Errorf("after a restart: chat %s, want %s", r3.Chat, r1.Chat)
	}
}

// TestPendingGrants: a waiting call's card says what it will hold and
// which grant allows it.
func TestPendingGrants(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install("terminal_exec")
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	e.model.Push(calls(call(chat.ToolExec, `{"pack_id":"notes","command":"sh","args":["-c","echo hi"]}`)), llmtest.Turn{Text: "ok"})
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "run"}, nil)
	p := ev.next("pending")
	gs, _ := p.Data["grants"].([]any)
	if len(gs) != 1 {
		t.Fatalf("pending grants: got %v", p.Data)
	}
	g := gs[0].(map[string]any)
	res, _ := g["resources"].([]any)
	if g["capability"] != "terminal_exec" || len(res) != 1 || res[0] != "sh" || g["scope"] != "persistent" || !strings.Contains(g["by"].(string), "your grant") {
		t.Errorf("grant: got %v", g)
	}
	e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/deny", nil, nil)
	ev.next("turn_done")
}

// TestRunByHandBadInput: arguments that do not fit the tool's schema are
// checked once, by the pipeline: the person gets a bad request that says
// what is wrong with which field, and the call is the audit log's like any
// other, ended as invalid input.
func TestRunByHandBadInput(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	var eb errorBody
	got := e.do("POST", "/v1/packs/notes/calls", map[string]any{"tool": "echo", "arguments": map[string]any{"text": 3}}, &eb)
	if got != http.StatusBadRequest || eb.Error.Code != codeBadRequest ||
		!strings.Contains(eb.Error.Message, "invalid input") || !strings.Contains(eb.Error.Message, "text") {
		t.Fatalf("bad input by hand: got %d %+v, want 400 naming the field", got, eb)
	}
	var au struct{ Items []auditRow }
	e.must(http.StatusOK, "GET", "/v1/audit?kind=invocation", nil, &au)
	var rows []string
	for _, r := range au.Items {
		if r.Tool == "echo" {
			rows = append(rows, string(r.Body))
		}
	}
	if len(rows) != 1 || !strings.Contains(rows[0], `"status":"invalid_input"`) {
		t.Errorf("audit rows of the call: %q, want one ended as invalid_input", rows)
	}
}

// TestPendingGrantsInChatWorkspace: a chat started with a workspace folder
// of its own (packs chat --workspace DIR), continued in the app: the card
// of a waiting call shows the paths it holds in that folder, the same
// paths the pack's page shows for that chat, never a folder under the
// state directory named after the chat.
func TestPendingGrantsInChatWorkspace(t *testing.T) {
	e := newEnv(t, envOptions{})
	dir := notesVariant(t, "skill.toml", func(s string) string {
		return strings.Replace(s, "[capabilities]\n", "[capabilities]\nfilesystem_read = [\"./data\"]\n", 1)
	})
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": dir, "grant": []string{"all"}}, nil)
	ws := filepath.Join(t.TempDir(), "project")
	sess, err := chat.Open(t.Context(), e.srv.cfg.Chat, chat.Options{Workspace: ws, Attach: []string{"notes"}})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(ws, "data")

	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes?chat="+sess.ID(), nil, &p)
	i := slices.IndexFunc(p.Capabilities, func(c capJSON) bool { return c.Capability == capability.FilesystemRead })
	if i < 0 || strings.Join(p.Capabilities[i].Effective, ",") != want {
		t.Errorf("the pack's page in chat %s: got %+v, want filesystem_read holding %s", sess.ID(), p.Capabilities, want)
	}

	e.model.Push(calls(call(chat.ToolEnableTools, `{"pack_id":"notes"}`)), calls(call("notes__echo", `{"text":"hi"}`)), llmtest.Turn{Text: "ok"})
	ev := e.stream(sess.ID())
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+sess.ID()+"/messages", map[string]any{"text": "run"}, nil)
	pend := ev.next("pending")
	var held []string
	gs, _ := pend.Data["grants"].([]any)
	for _, g := range gs {
		g := g.(map[string]any)
		if g["capability"] == string(capability.FilesystemRead) {
			for _, r := range g["resources"].([]any) {
				held = append(held, r.(string))
			}
		}
	}
	if strings.Join(held, ",") != want {
		t.Errorf("the card's filesystem_read: got %v, want %s (all grants: %v)", held, want, gs)
	}
	e.must(http.StatusOK, "POST", "/v1/invocations/"+pend.Data["invocation"].(string)+"/deny", nil, nil)
	ev.next("turn_done")
}
