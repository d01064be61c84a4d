package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestServerToken: the token of packs serve and packs mcp --http comes
// from --token-file, else the environment, else <home>/token, else it is
// made fresh; a configured token must be long, and a token file that
// others can read is refused.
func TestServerToken(t *testing.T) {
	const good = "0123456789abcdef0123456789abcdef-good"
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name, tokenFileName)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("private", good+"-file\n", 0o600)
	write("shared", good, 0o644)
	write("short", "0123", 0o600)
	tests := []struct {
		name, env, file, home string
		want, wantErr         string
	}{
		{"environment", good + "-env", "", "private", good + "-env", ""},
		{"--token-file wins", good + "-env", write("flag", good+"-flag", 0o600), "private", good + "-flag", ""},
		{"state directory", "", "", "private", good + "-file", ""},
		{"state directory, readable by others", "", "", "shared", "", "chmod 600"},
		{"too short", "", "", "short", "", "too weak"},
		{"too short, environment", "tok", "", "none", "", "too weak"},
		{"fresh", "", "", "none", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tokenEnv, tt.env)
			c := &cli{getenv: os.Getenv}
			got, err := c.serverToken(filepath.Join(dir, tt.home), tt.file, tokenEnv)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %q, %v; want error containing %q", got, err, tt.wantErr)
			}
			if v, set := os.LookupEnv(tokenEnv); set {
				t.Errorf("$%s is still set (%q): commands a tool runs would inherit it", tokenEnv, v)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.name == "fresh" {
				again, _ := c.serverToken(filepath.Join(dir, tt.home), "", tokenEnv)
				if len(got) != 43 || again == got {
					t.Errorf("fresh tokens %q and %q: want 32 random bytes, new each time", got, again)
				}
			}
		})
	}
}

// servedURL matches the address packs serve prints.
var servedURL = regexp.MustCompile(`serving the web app at (http://\S+)`)

// served is a packs serve process: its printed address split into the base
// URL (with a trailing slash) and the token it carries.
type served struct {
	base, token string
}

// startServe runs packs serve on 127.0.0.1:0 as a child process (this test
// binary standing in for packs) with extra environment variables, and
// returns the address it prints.
func startServe(t *testing.T, home string, env ...string) served {
	t.Helper()
	s, _ := startServeAt(t, home, "127.0.0.1:0", env...)
	return s
}

// startServeAt is startServe listening on addr; stderr returns what the
// process printed on stderr so far.
func startServeAt(t *testing.T, home, addr string, env ...string) (s served, stderr func() string) {
	t.Helper()
	return startServeArgs(t, home, []string{"--addr", addr}, env...)
}

// startServeArgs is startServe with these flags.
func startServeArgs(t *testing.T, home string, flags []string, env ...string) (s served, stderr func() string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"--home", home, "serve"}, flags...)...)
	cmd.Env = append(append(os.Environ(), "PACKS_CLI_CHILD=1"), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewScanner(pipe)
	found := make(chan string, 1)
	var (
		mu      sync.Mutex
		printed strings.Builder
	)
	go func() {
		for lines.Scan() {
			mu.Lock()
			printed.WriteString(lines.Text() + "\n")
			mu.Unlock()
			if m := servedURL.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	stderr = func() string {
		mu.Lock()
		defer mu.Unlock()
		return printed.String()
	}
	var page string
	select {
	case page = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("packs serve printed no address within 30s")
	}
	if page == "" {
		t.Fatal("packs serve exited without serving")
	}
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get("token")
	u.RawQuery = ""
	return served{base: u.String(), token: tok}, stderr
}

// call sends method path with a JSON body (unless "") and authz as the
// Authorization header (unless ""), and decodes the JSON answer.
func (s served) call(t *testing.T, authz, method, path, body string) (int, map[string]any) {
	t.Helper()
	// An event stream never ends: the deadline cuts its body short.
	return s.callWithin(t, 5*time.Second, authz, method, path, body)
}

// callWithin is call with its own deadline: longer for a call that may
// compile a module first on a loaded machine.
func (s served) callWithin(t *testing.T, d time.Duration, authz, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	json.Unmarshal(b, &out)
	return res.StatusCode, out
}

// must is call with the token, failing unless the status is below 300.
func (s served) must(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	code, out := s.call(t, s.bearer(), method, path, body)
	if code >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, code, out)
	}
	return out
}

func (s served) bearer() string {
	if s.token == "" {
		return ""
	}
	return "Bearer " + s.token
}

// TestServeProcess starts packs serve as a process with a model set through
// the environment, and runs one turn through its API.
func TestServeProcess(t *testing.T) {
	model := llmtest.NewServer(llmtest.Turn{Text: "Hello from the fake model."})
	defer model.Close()
	s := startServe(t, t.TempDir(), "PACKS_PROVIDER=openai", "PACKS_BASE_URL="+model.OpenAIURL(), "PACKS_MODEL=fake", "OPENAI_API_KEY=sk-test")
	c := s.must(t, "POST", "/v1/chats", `{}`)
	id := c["id"].(string)
	req, err := http.NewRequest("GET", s.base+"v1/chats/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.token != "" {
		req.Header.Set("Authorization", s.bearer())
	}
	ev, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Body.Close()
	s.must(t, "POST", "/v1/chats/"+id+"/messages", `{"text":"hi"}`)
	done := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(ev.Body)
		kind := ""
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && (kind == "turn_done" || kind == "turn_error"):
				done <- kind + " " + strings.TrimPrefix(line, "data: ")
				return
			}
		}
		io.Copy(io.Discard, ev.Body)
	}()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "turn_done") || !strings.Contains(got, "Hello from the fake model.") {
			t.Errorf("got %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no turn_done within 30s")
	}
	if reqs := model.Requests(); len(reqs) != 1 || reqs[0].Model != "fake" {
		t.Errorf("the model got %d requests", len(reqs))
	}
}

// TestServeAPINeedsTokenOnLoopback is the attack of issue 11, defect 3: a
// tool granted network to 127.0.0.1 plays an HTTP client of packs serve,
// on loopback and with no token configured, and tries to change grants,
// decide a pending call, run a tool by hand, install a pack and read the
// audit log. Each request without the token packs serve printed is refused
// and changes nothing; with the token (bearer or cookie) the same requests
// work.
func TestServeAPINeedsTokenOnLoopback(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", notesPack, "--grant", "none", "--yes").mustCode(t, exitOK)
	// enable_tools is approved by the attach; the echo waits for a person.
	model := llmtest.NewServer(llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "enable_tools", Arguments: `{"pack_id":"notes"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"hi"}`}}}, llmtest.Turn{Text: "done"})
	defer model.Close()
	s := startServe(t, home, "PACKS_TOKEN=", "PACKS_PROVIDER=openai", "PACKS_BASE_URL="+model.OpenAIURL(), "PACKS_MODEL=fake", "OPENAI_API_KEY=sk-test")
	if len(s.token) < 40 {
		t.Errorf("packs serve printed %q: want a token of 32 random bytes in its address", s.base+"?token="+s.token)
	}

	// A chat whose model asked for a call that waits for approval.
	chatID := s.must(t, "POST", "/v1/chats", `{}`)["id"].(string)
	s.must(t, "POST", "/v1/chats/"+chatID+"/packs", `{"pack":"notes"}`)
	s.must(t, "POST", "/v1/chats/"+chatID+"/messages", `{"text":"go"}`)
	var inv string
	for deadline := time.Now().Add(20 * time.Second); inv == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if items, _ := s.must(t, "GET", "/v1/invocations", "")["items"].([]any); len(items) == 1 {
			inv = items[0].(map[string]any)["invocation"].(string)
		}
	}
	if inv == "" {
		t.Fatal("no call waited for approval within 20s")
	}

	granted := func() bool {
		p := s.must(t, "GET", "/v1/packs/notes", "")
		return p["capabilities"].([]any)[0].(map[string]any)["granted"].(bool)
	}
	abs, err := filepath.Abs(notesPack)
	if err != nil {
		t.Fatal(err)
	}
	attacks := []struct{ method, path, body string }{
		{"POST", "/v1/packs/notes/grants", `{"capability":"terminal_exec"}`},
		{"DELETE", "/v1/packs/notes/grants/terminal_exec", ""},
		{"POST", "/v1/invocations/" + inv + "/approve", `{"always":true}`},
		{"POST", "/v1/invocations/" + inv + "/deny", ""},
		{"POST", "/v1/chats/" + chatID + "/calls", `{"name":"enable_tools","arguments":{"pack_id":"notes"}}`},
		{"POST", "/v1/chats/" + chatID + "/stop", ""},
		{"POST", "/v1/packs", `{"path":` + strconvQuote(abs) + `,"grant":["terminal_exec"]}`},
		{"POST", "/v1/chats", `{}`},
		{"GET", "/v1/invocations", ""},
		{"GET", "/v1/audit", ""},
		{"GET", "/v1/chats/" + chatID, ""},
		{"GET", "/v1/chats/" + chatID + "/events", ""},
	}
	for _, a := range attacks {
		for _, authz := range []string{"", "Bearer wrong-token", "Bearer ", "Basic " + s.token} {
			if code, _ := s.call(t, authz, a.method, a.path, a.body); code != http.StatusUnauthorized {
				t.Errorf("%s %s with Authorization %q: got %d, want 401", a.method, a.path, authz, code)
			}
		}
	}
	if granted() {
		t.Fatal("a request without the token granted terminal_exec")
	}
	if items := s.must(t, "GET", "/v1/invocations", "")["items"].([]any); len(items) != 1 {
		t.Fatalf("a request without the token decided the pending call: %v", items)
	}

	// Public without the token: the page and GET /v1/status, which names
	// no secret and no path.
	for _, path := range []string{"/", "/app.js", "/v1/status"} {
		if code, _ := s.call(t, "", "GET", path, ""); code != http.StatusOK {
			t.Errorf("GET %s without the token: got %d, want 200", path, code)
		}
	}
	if _, st := s.call(t, "", "GET", "/v1/status", ""); st["home"] != nil {
		t.Errorf("GET /v1/status without the token names the state directory: %v", st)
	}

	// With the bearer token the call is decided.
	if code, out := s.call(t, s.bearer(), "POST", "/v1/invocations/"+inv+"/approve", ""); code != http.StatusOK {
		t.Errorf("approve with the token: got %d %v", code, out)
	}
	// Opening the printed address sets the cookie the page's requests carry.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(s.base + "?token=" + s.token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" || len(res.Cookies()) != 1 {
		t.Fatalf("opening the printed address: got %d %v", res.StatusCode, res.Header)
	}
	req, _ := http.NewRequest("POST", s.base+"v1/packs/notes/grants", strings.NewReader(`{"capability":"terminal_exec"}`))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(res.Cookies()[0])
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !granted() {
		t.Errorf("grant with the cookie: got %d, granted %v", res.StatusCode, granted())
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestServeBeyondLoopback: packs serve bound to every interface says so
// when it starts, prints an address that opens the app (not the
// unspecified address, which the Host guard refuses), and tells the web
// app, which shows it in its header; on loopback it says nothing of it.
func TestServeBeyondLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		beyond bool
	}{{"0.0.0.0:0", true}, {"127.0.0.1:0", false}} {
		t.Run(tt.addr, func(t *testing.T) {
			s, stderr := startServeAt(t, t.TempDir(), tt.addr)
			code, status := s.call(t, s.bearer(), "GET", "/v1/status", "")
			if code != http.StatusOK {
				t.Fatalf("the printed address %s does not open the app: GET /v1/status answered %d %v", s.base, code, status)
			}
			listen, _ := status["listen"].(map[string]any)
			if got, _ := listen["beyond_loopback"].(bool); got != tt.beyond {
				t.Errorf("the web app is told beyond_loopback = %v, want %v (%v)", listen["beyond_loopback"], tt.beyond, status["listen"])
			}
			warned := strings.Contains(strings.ToLower(stderr()), "warning")
			if warned != tt.beyond {
				t.Errorf("warned on start = %v, want %v:\n%s", warned, tt.beyond, stderr())
			}
		})
	}
}

// TestServeSavedModel: a model saved on the Settings page of one packs
// serve is the model of the next one started on the same home, key
// included, with no flag; a variable packs serve is started with wins
// over it, and the settings say so.
func TestServeSavedModel(t *testing.T) {
	const key = "sk-saved-in-the-app-4c1d"
	model := llmtest.NewServer()
	defer model.Close()
	model.RequireKey(key)
	model.Respond(func(r llmtest.Request) llmtest.Turn { return llmtest.Turn{Text: "hello from " + r.Model} })
	home := t.TempDir()
	first, printed := startServeAt(t, home, "127.0.0.1:0")
	if !strings.Contains(printed(), "no model configured") {
		t.Fatalf("a new home's packs serve printed %q", printed())
	}
	first.must(t, "PUT", "/v1/settings/model", `{"provider":"openai","base_url":"`+model.OpenAIURL()+`","model":"saved","max_tokens":300,"api_key":"`+key+`"}`)

	next, printed := startServeAt(t, home, "127.0.0.1:0")
	if want := "model openai saved at " + model.OpenAIURL(); !strings.Contains(printed(), want) {
		t.Errorf("the next packs serve printed %q, want %q", printed(), want)
	}
	test := next.must(t, "POST", "/v1/settings/model/test", `{"provider":"openai","base_url":"`+model.OpenAIURL()+`","model":"saved","max_tokens":300}`)
	if test["ok"] != true || test["reply"] != "hello from saved" {
		t.Errorf("the stored key did not reach the model: %v", test)
	}

	pinned, _ := startServeAt(t, home, "127.0.0.1:0", "PACKS_MODEL=pinned")
	st := pinned.must(t, "GET", "/v1/settings/model", "")
	eff, _ := st["effective"].(map[string]any)
	over, _ := st["overrides"].([]any)
	if eff["model"] != "pinned" || len(over) != 1 || over[0].(map[string]any)["from"] != "PACKS_MODEL" {
		t.Errorf("with PACKS_MODEL set: effective %v, overrides %v", eff, over)
	}
}
