package web

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/builtin"
)

// staleWebFetch installs an older web-fetch, one that asked only for
// docs.example.com, granted that, as the built-in of an older packs binary
// left it: the version this binary carries is newer.
func staleWebFetch(e *env) {
	e.t.Helper()
	dir, err := builtin.Write("web-fetch", e.t.TempDir())
	if err != nil {
		e.t.Fatal(err)
	}
	toml := filepath.Join(dir, "skill.toml")
	b, err := os.ReadFile(toml)
	if err != nil {
		e.t.Fatal(err)
	}
	old := strings.Replace(string(b), `network = ["*"]`, `network = ["docs.example.com"]`, 1)
	if old == string(b) {
		e.t.Fatal(`skill.toml of web-fetch no longer asks for network = ["*"]`)
	}
	if err := os.WriteFile(toml, []byte(old), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": dir, "grant": []string{"all"}}, nil)
	e.markBuiltin("web-fetch")
}

// TestUpdateBuiltinFromApp: the app's Update of a built-in does what
// packs update does (App.EnsureBuiltins): it brings the pack to the
// version this binary carries, keeping the person's grant no wider than
// before; a preview changes nothing; once current it is up to date.
func TestUpdateBuiltinFromApp(t *testing.T) {
	e := newEnv(t, envOptions{})
	staleWebFetch(e)
	want, _ := builtin.Digest("web-fetch")
	var res struct {
		Status  string
		BuiltIn bool `json:"built_in"`
		Pack    *packJSON
	}
	e.must(http.StatusOK, "POST", "/v1/packs/web-fetch/update", map[string]any{"preview": true}, &res)
	if res.Status != "available" || !res.BuiltIn {
		t.Errorf("preview of an older built-in: got %+v, want available, built in", res)
	}
	if en, err := e.app.Home.Entry("web-fetch"); err != nil || en.Integrity == want {
		t.Fatalf("a preview updated the built-in: %+v %v", en, err)
	}
	e.must(http.StatusOK, "POST", "/v1/packs/web-fetch/update", map[string]any{}, &res)
	if res.Status != "updated" || !res.BuiltIn || res.Pack == nil || res.Pack.Integrity != want {
		t.Fatalf("update of an older built-in: got %+v, want updated to %s", res, want)
	}
	grants, err := e.app.Grants().PeekGrants(t.Context(), capability.PackRef{Name: "web-fetch", Digest: want}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 1 || !slices.Equal(grants[0].Resources, []string{"docs.example.com"}) {
		t.Errorf("grants after the update: %+v, want network pinned to docs.example.com", grants)
	}
	// A pack recorded as a built-in this binary does not carry: nothing
	// can update it, and the answer says what to do.
	e.install()
	e.markBuiltin("notes")
	var eb errorBody
	if st := e.do("POST", "/v1/packs/notes/update", map[string]any{}, &eb); st != http.StatusConflict || !strings.Contains(eb.Error.Message, "remove it") {
		t.Errorf("update of a built-in this binary lacks: got %d %+v, want 409 saying what to do", st, eb.Error)
	}
	for _, body := range []map[string]any{{"preview": true}, {}} {
		e.must(http.StatusOK, "POST", "/v1/packs/web-fetch/update", body, &res)
		if res.Status != "up_to_date" || !res.BuiltIn {
			t.Errorf("update %v of a current built-in: got %+v, want up_to_date", body, res)
		}
	}
}

// TestBrowserUpdateBuiltin: a built-in's page offers Update, says what it
// does, and brings an older built-in to this binary's version; asked
// again, it says the pack is up to date. No console errors.
func TestBrowserUpdateBuiltin(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	staleWebFetch(e)
	b := openBrowser(t, chromium, "")
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.openPack("web-fetch")
	b.poll("the page says what Update does for a built-in", `(document.querySelector(".pack .builtin-note")?.textContent || "").includes("this packs binary carries")`)
	b.step("update it", chromedp.Click(chromedp.CSS("#pack-update")))
	b.poll("it is updated", `(document.querySelector("#pack-action-result")?.textContent || "").includes("Updated web-fetch")`)
	want, _ := builtin.Digest("web-fetch")
	if en, err := e.app.Home.Entry("web-fetch"); err != nil || en.Integrity != want {
		t.Fatalf("after Update in the page: %+v %v, want %s", en, err, want)
	}
	b.step("check again", chromedp.Click(chromedp.CSS("#pack-update")))
	b.poll("it is up to date", `(document.querySelector("#pack-action-result")?.textContent || "").includes("is up to date")`)
}

// TestUpdateBuiltinApplyPolicy: a policy that blocks the version of a
// built-in this binary carries refuses the app's Update of it (403), and
// the older version stays.
func TestUpdateBuiltinApplyPolicy(t *testing.T) {
	want, _ := builtin.Digest("web-fetch")
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte("[packs]\nblocked_digests = [\""+want+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{policy: policy})
	staleWebFetch(e)
	before, err := e.app.Home.Entry("web-fetch")
	if err != nil {
		t.Fatal(err)
	}
	var eb errorBody
	if st := e.do("POST", "/v1/packs/web-fetch/update", map[string]any{}, &eb); st != http.StatusForbidden {
		t.Errorf("update to a blocked built-in: got %d %+v, want 403", st, eb.Error)
	}
	if after, err := e.app.Home.Entry("web-fetch"); err != nil || after.Integrity != before.Integrity {
		t.Errorf("after a refused update: %+v %v, want %s", after, err, before.Integrity)
	}
}
