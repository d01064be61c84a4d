package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/testpg"
)

// turn sends text to chat id on s and waits for the turn to end; it
// returns the turn_done (or turn_error) event.
func (s served) turn(t *testing.T, id, text string) string {
	t.Helper()
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
	s.must(t, "POST", "/v1/chats/"+id+"/messages", `{"text":`+strconvQuote(text)+`}`)
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
		return got
	case <-time.After(30 * time.Second):
		t.Fatal("no turn_done within 30s")
		return ""
	}
}

// TestReplicas runs two packs serve processes, each with its own state
// directory, on one PostgreSQL store (--store through PACKS_STORE), with
// the same audit key: a chat started on one continues on the other with
// its whole history, an agent made on one is listed by the other, a grant
// made on one holds on the other and survives a third replica's first
// start and the same pack's install on another replica, and the calls of
// all make one audit chain that verifies.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two packs serve processes")
	}
	url := testpg.URL(t)
	homeA, homeB := t.TempDir(), t.TempDir()
	// The key is made once and copied to every replica (docs/deploy.md).
	withHome(t, homeA, "--store", url, "audit", "export", "--output", filepath.Join(t.TempDir(), "x.jsonl")).mustCode(t, 0)
	key, err := os.ReadFile(filepath.Join(homeA, audit.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(homeB, audit.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewServer(llmtest.Turn{Text: "Noted on A."}, llmtest.Turn{Text: "Still here, on B."})
	defer model.Close()
	env := []string{"PACKS_STORE=" + url, "PACKS_PROVIDER=openai", "PACKS_BASE_URL=" + model.OpenAIURL(), "PACKS_MODEL=fake", "OPENAI_API_KEY=sk-test"}
	a, b := startServe(t, homeA, env...), startServe(t, homeB, env...)

	id := a.must(t, "POST", "/v1/chats", `{}`)["id"].(string)
	if got := a.turn(t, id, "remember the colour teal"); !strings.HasPrefix(got, "turn_done") {
		t.Fatalf("turn on A: %s", got)
	}
	if got := b.turn(t, id, "which colour?"); !strings.HasPrefix(got, "turn_done") || !strings.Contains(got, "Still here, on B.") {
		t.Fatalf("turn on B: %s", got)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	var history []string
	for _, m := range reqs[1].Messages {
		history = append(history, m.Content)
	}
	if h := strings.Join(history, "|"); !strings.Contains(h, "remember the colour teal") || !strings.Contains(h, "Noted on A.") {
		t.Errorf("B's request lacks the history made on A: %q", h)
	}
	chat := a.must(t, "GET", "/v1/chats/"+id, "")
	if msgs, _ := chat["messages"].([]any); len(msgs) < 4 {
		t.Errorf("A reads %d messages of the chat, want the 4 of both replicas", len(msgs))
	}

	a.must(t, "POST", "/v1/agents", `{"name":"Release-Captain","system_prompt":"Ship it."}`)
	listed := b.must(t, "GET", "/v1/agents", "")
	if s, _ := json.Marshal(listed); !strings.Contains(string(s), "Release-Captain") {
		t.Errorf("B lists agents %s, want the one made on A", s)
	}
	code, _ := b.call(t, b.bearer(), "POST", "/v1/agents", `{"name":"release-captain","system_prompt":"Again."}`)
	if code < 400 {
		t.Errorf("an agent named as A's but for case was made on B (%d): names are unique whatever their case", code)
	}

	// A grant made on A is B's at once; so is its revocation.
	networkOf := func(s served, pack string) bool {
		t.Helper()
		p := s.must(t, "GET", "/v1/packs/"+pack, "")
		caps, _ := p["capabilities"].([]any)
		for _, c := range caps {
			if c, _ := c.(map[string]any); c["capability"] == "network" {
				granted, _ := c["granted"].(bool)
				return granted
			}
		}
		t.Fatalf("%s lists no network capability: %v", pack, p)
		return false
	}
	network := func(s served) bool { t.Helper(); return networkOf(s, "web-fetch") }
	if network(b) {
		t.Fatal("web-fetch holds network before any grant")
	}
	a.must(t, "POST", "/v1/packs/web-fetch/grants", `{"capability":"network","resources":["example.com"]}`)
	if !network(b) {
		t.Error("a grant made on A is not seen on B")
	}

	// A fresh replica, which installs the built-ins into its own state
	// directory as it starts, leaves the grant made on A as it is.
	homeC := t.TempDir()
	if err := os.WriteFile(filepath.Join(homeC, audit.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	c := startServe(t, homeC, env...)
	for name, s := range map[string]served{"A": a, "B": b, "C": c} {
		if !network(s) {
			t.Errorf("after a fresh replica started, %s sees web-fetch without the grant made on A", name)
		}
	}

	// A pack installed on A with a grant, then installed (the same
	// content) on B with none, keeps A's grant on both.
	weather := docPack(t, "weather", "\n[capabilities]\nnetwork = [\"api.example.com\"]\n")
	withHome(t, homeA, "--store", url, "add", weather, "--grant", "network", "--yes").mustCode(t, exitOK)
	withHome(t, homeB, "--store", url, "add", weather, "--grant", "none", "--yes").mustCode(t, exitOK)
	for name, s := range map[string]served{"A": a, "B": b} {
		if !networkOf(s, "weather") {
			t.Errorf("after B installed weather too, %s sees it without the grant made on A", name)
		}
	}

	a.must(t, "DELETE", "/v1/packs/web-fetch/grants/network", "")
	if network(b) {
		t.Error("a grant revoked on A is still held on B")
	}

	for _, s := range []served{a, b} {
		rep := s.must(t, "GET", "/v1/audit/verify", "")
		if ok, _ := rep["ok"].(bool); !ok {
			t.Errorf("audit verify on a replica: %v", rep)
		}
	}
	// Both replicas installed the built-in packs into the one chain.
	r := withHome(t, homeB, "--store", url, "audit", "verify", "--json").mustCode(t, 0)
	var rep audit.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.OK() || rep.Rows < 2 {
		t.Errorf("audit verify from B's state directory: %s %v", r.stdout, err)
	}
}

// TestStoreFlagNeedsURL: --store takes a postgres:// URL and nothing else.
func TestStoreFlagNeedsURL(t *testing.T) {
	r := withHome(t, t.TempDir(), "--store", "/tmp/other.db", "list")
	if r.code == 0 || !strings.Contains(r.stderr, "postgres://") {
		t.Fatalf("exit %d, stderr %q: want a refusal that names the URL form", r.code, r.stderr)
	}
}

// TestReplicaStaleCopyRefused: after replica B installs another version
// of a pack, replica A's older copy does not run (exit 3, with what to
// install) and lists as stale, until A installs the store's content.
func TestReplicaStaleCopyRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	url := testpg.URL(t)
	homeA, homeB := t.TempDir(), t.TempDir()
	v1 := toolPack(t, "echo", "wasi_echo.wasm", "", "")
	v2 := toolPack(t, "echo", "wasi_echo.wasm", "", "[skill]\nid = \"test.echo\"\nversion = \"2.0.0\"\n")
	withHome(t, homeA, "--store", url, "add", v1, "--grant", "none", "--yes").mustCode(t, exitOK)
	key, err := os.ReadFile(filepath.Join(homeA, audit.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(homeB, audit.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	withHome(t, homeB, "--store", url, "add", v2, "--grant", "none", "--yes").mustCode(t, exitOK)
	run := func(home string) result {
		return withHome(t, home, "--store", url, "run", "echo", "t", "--yes", "--input", `{"text":"hi"}`)
	}
	run(homeB).mustCode(t, exitOK)
	r := run(homeA).mustCode(t, 3)
	if !strings.Contains(r.stderr, "packs add") {
		t.Errorf("the refusal does not say what to install:\n%s", r.stderr)
	}
	if l := withHome(t, homeA, "--store", url, "list").mustCode(t, exitOK); !strings.Contains(l.stdout, "stale") {
		t.Errorf("A lists its older echo as:\n%s", l.stdout)
	}
	withHome(t, homeA, "--store", url, "add", v2, "--grant", "none", "--yes").mustCode(t, exitOK)
	run(homeA).mustCode(t, exitOK)
}
