package web

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/store"
)

// widePack copies the notes pack with a terminal_exec request for sh and
// ls, so that a narrowed grant differs from the request.
func widePack(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.CopyFS(dir, os.DirFS(notesPack)); err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	wide := strings.Replace(string(toml), `commands = ["sh"]`, `commands = ["sh", "ls"]`, 1)
	if wide == string(toml) {
		t.Fatal("testdata/notes/skill.toml no longer asks for terminal_exec sh")
	}
	if err := os.WriteFile(filepath.Join(dir, "skill.toml"), []byte(wide), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGrantsMirrorLock: every grant change made through the API reaches
// packs.lock, as after the CLI's packs grant, revoke and add; the API shows
// what skill.toml requests apart from what was granted.
func TestGrantsMirrorLock(t *testing.T) {
	e := newEnv(t, envOptions{})
	src := widePack(t)
	requested := []string{"sh", "ls"}
	// step checks the lock entry, the listing and the details against the
	// granted resources (nil: not granted).
	step := func(name string, details packJSON, granted []string) {
		t.Helper()
		le, err := e.app.Home.Entry("notes")
		if err != nil {
			t.Fatal(err)
		}
		lc := le.Capabilities[capability.TerminalExec]
		if lc.Granted != (granted != nil) || !slices.Equal(lc.Resources, granted) {
			t.Errorf("%s: packs.lock terminal_exec = %+v, want granted %v", name, lc, granted)
		}
		var list struct {
			Items []packJSON `json:"items"`
		}
		e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
		for what, p := range map[string]packJSON{"listing": list.Items[0], "details": details} {
			if len(p.Capabilities) != 1 {
				t.Fatalf("%s: %s: got capabilities %+v", name, what, p.Capabilities)
			}
			c := p.Capabilities[0]
			if !slices.Equal(c.Requested, requested) || c.Granted != (granted != nil) || !slices.Equal(c.GrantedResources, orEmpty(granted)) {
				t.Errorf("%s: %s: got requested %v, granted %v %v; want %v, %v", name, what, c.Requested, c.Granted, c.GrantedResources, requested, granted)
			}
		}
	}

	var p packJSON
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": src}, &p)
	step("install without grants", p, nil)

	e.must(http.StatusOK, "POST", "/v1/packs/notes/grants", map[string]any{"capability": "terminal_exec", "resources": []string{"ls"}}, &p)
	step("grant ls", p, []string{"ls"})

	// A chat grant is not persistent: packs.lock keeps the persistent one.
	e.must(http.StatusOK, "POST", "/v1/packs/notes/grants", map[string]any{"capability": "terminal_exec", "scope": "chat", "chat": "chat_1"}, nil)
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	step("grant for one chat", p, []string{"ls"})

	e.must(http.StatusOK, "DELETE", "/v1/packs/notes/grants/terminal_exec", nil, &p)
	step("revoke", p, nil)

	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": src, "grant": []string{"all"}}, &p)
	step("reinstall with grant all", p, requested)
	rows, err := e.app.DB.PeekGrants(t.Context(), "notes", "", time.Time{})
	if err != nil || len(rows) != 1 || rows[0].Scope != capability.ScopePersistent {
		t.Errorf("packs.db after reinstall: got %+v, %v; want one persistent grant", rows, err)
	}

	// A modified pack: a grant is refused before it is recorded; a revoke
	// stands in packs.db and leaves packs.lock alone.
	dir, err := e.app.Home.PackDir("notes")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: notes\ndescription: changed\n---\nchanged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(e.app.Home.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	var eb errorBody
	if got := e.do("POST", "/v1/packs/notes/grants", map[string]any{"capability": "terminal_exec", "scope": "chat", "chat": "chat_2"}, &eb); got != http.StatusConflict || eb.Error.Code != codeConflict {
		t.Errorf("grant to a modified pack: got %d %+v, want 409 conflict", got, eb)
	}
	all, err := e.app.DB.Grants(t.Context(), "notes")
	if err != nil || slices.ContainsFunc(all, func(g store.GrantRow) bool { return g.Chat == "chat_2" }) {
		t.Errorf("grant to a modified pack was recorded: %+v, %v", all, err)
	}
	e.must(http.StatusOK, "DELETE", "/v1/packs/notes/grants/terminal_exec", nil, &p)
	if p.Status != string(app.StatusModified) || p.Capabilities[0].Granted {
		t.Errorf("revoke of a modified pack: got %+v", p)
	}
	if after, _ := os.ReadFile(e.app.Home.LockPath()); string(after) != string(before) {
		t.Errorf("packs.lock changed for a modified pack:\n%s", after)
	}
}
