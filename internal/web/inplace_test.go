package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// copySkill copies a public skill of packs/testdata/public-skills to dst.
func copySkill(t *testing.T, name, dst string) {
	t.Helper()
	src := filepath.Join("..", "..", "packs", "testdata", "public-skills", "anthropic-skills", "skills", name)
	// os.CopyFS makes the folders and copies the files, modes kept.
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// results approves every call of the turn that waits for a person (before
// is called with the index of each just before it is approved) and
// returns each call's tool_done content, in order, once the turn is done.
func (e *env) results(s *sse, before func(i int)) []string {
	s.t.Helper()
	var out []string
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatal("the event stream ended before turn_done")
			}
			switch ev.Kind {
			case "pending":
				if before != nil {
					before(len(out))
				}
				e.must(http.StatusOK, "POST", "/v1/invocations/"+ev.Data["invocation"].(string)+"/approve", nil, nil)
			case "tool_done":
				c, _ := ev.Data["content"].(string)
				out = append(out, c)
			case "turn_done":
				return out
			case "turn_error":
				s.t.Fatalf("turn_error %v", ev.Data)
			}
		case <-deadline:
			s.t.Fatal("no turn_done within 30s")
		}
	}
}

// TestInPlaceApp: the web app lists a public script skill kept in
// ~/.claude/skills beside the installed packs, with where it lives and
// that it can be attached; a chat attaches it and reads its docs at once;
// its script is denied until the person grants python3 in the app, then
// runs; after an edit of the folder the next call is refused and says
// what changed, the listing says so, and the one after asks for a grant.
func TestInPlaceApp(t *testing.T) {
	user := t.TempDir()
	dir := filepath.Join(user, ".claude", "skills", "webapp-testing")
	copySkill(t, "webapp-testing", dir)
	e := newEnv(t, envOptions{userHome: user})

	find := func() packJSON {
		t.Helper()
		var list struct{ Items []packJSON }
		e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
		for _, p := range list.Items {
			if p.Name == "webapp-testing" {
				return p
			}
		}
		t.Fatalf("webapp-testing is not listed: %+v", list.Items)
		return packJSON{}
	}
	p := find()
	if p.Status != statusInPlace || p.InPlace == nil || p.InPlace.Dir != dir || p.InPlace.Location != "user" || !p.InPlace.Attachable ||
		len(p.Capabilities) != 1 || p.Capabilities[0].Granted {
		t.Fatalf("listed: %+v %+v", p, p.InPlace)
	}

	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"webapp-testing"}}, &c)
	help := call(chat.ToolExec, `{"pack_id":"webapp-testing","command":"python3","args":["scripts/with_server.py","--help"],"cwd_policy":"pack_root"}`)
	e.model.Push(calls(call(chat.ToolOpenDocs, `{"pack_id":"webapp-testing"}`)), calls(help), llmtest.Turn{Text: "ok"})
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "go"}, nil)
	got := e.results(ev, nil)
	if len(got) != 2 || !strings.Contains(got[0], "Web Application Testing") || strings.Contains(got[1], "usage:") || !strings.Contains(got[1], "denied") {
		t.Fatalf("before a grant: %q", got)
	}

	var d packJSON
	e.must(http.StatusOK, "POST", "/v1/packs/webapp-testing/grants", map[string]any{"capability": "terminal_exec"}, &d)
	if d.InPlace == nil || len(d.Capabilities) != 1 || !d.Capabilities[0].Granted {
		t.Fatalf("after the grant: %+v", d)
	}
	script := filepath.Join(dir, "scripts", "with_server.py")
	e.model.Push(calls(help), calls(help), calls(help), llmtest.Turn{Text: "ok"})
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "again"}, nil)
	got = e.results(ev, func(i int) {
		if i == 1 {
			if err := os.WriteFile(script, []byte("print('replaced')\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	if len(got) != 3 || !strings.Contains(got[0], "usage: with_server.py") {
		t.Fatalf("granted: %q", got)
	}
	if strings.Contains(got[1], "replaced") || !strings.Contains(got[1], "changed scripts/with_server.py") {
		t.Errorf("the call after the edit: %s", got[1])
	}
	if strings.Contains(got[2], "replaced") || !strings.Contains(got[2], "grant it again") {
		t.Errorf("the next call: %s", got[2])
	}
	if p := find(); p.InPlace == nil || !strings.Contains(p.InPlace.ChangedSinceGrant, "scripts/with_server.py") || p.Capabilities[0].Granted {
		t.Errorf("listed after the edit: %+v", p.InPlace)
	}
	var one packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/webapp-testing", nil, &one)
	if one.Status != statusInPlace || one.InPlace == nil || one.InPlace.Dir != dir {
		t.Errorf("GET the pack: %+v", one)
	}
}
