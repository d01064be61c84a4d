package web

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/store"
)

// reviewEnv is a server under a policy whose [review] lapses grants of
// more than 90 days, with notes installed and granted 100 days ago.
func reviewEnv(t *testing.T) *env {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("[review]\nafter = \"90d\"\nlapse = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{policy: pol, noModel: true})
	e.install("all")
	old := time.Now().Add(-100 * 24 * time.Hour).UTC().Format(store.TimeFormat)
	if _, err := e.app.DB.SQL().Exec(`UPDATE grants SET granted_at = ?`, old); err != nil {
		t.Fatal(err)
	}
	return e
}

type dueList struct {
	Items []app.DueGrant `json:"items"`
}

// TestReviewAPI: GET /v1/review lists the grants due; keeping one takes it
// off the list and makes it hold again; keeping a grant there is not is
// 404.
func TestReviewAPI(t *testing.T) {
	e := reviewEnv(t)
	var due dueList
	e.must(http.StatusOK, "GET", "/v1/review", nil, &due)
	if len(due.Items) != 1 || due.Items[0].Pack != "notes" || due.Items[0].Capability != "terminal_exec" || !due.Items[0].Lapsed {
		t.Fatalf("due: %+v", due.Items)
	}
	p := e.install() // reinstalling replaces the grants: nothing due
	e.must(http.StatusOK, "GET", "/v1/review", nil, &due)
	if len(due.Items) != 0 || p.Capabilities[0].Granted {
		t.Fatalf("after a reinstall granting nothing: due %+v, %+v", due.Items, p.Capabilities)
	}
	e = reviewEnv(t)
	var pk packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &pk)
	if c := pk.Capabilities[0]; c.Held == nil || *c.Held || c.Granted {
		t.Errorf("a lapsed grant holds: %+v", c)
	}
	e.must(http.StatusOK, "POST", "/v1/packs/notes/grants/terminal_exec/keep", nil, &due)
	if len(due.Items) != 0 {
		t.Errorf("after keep: due %+v", due.Items)
	}
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &pk)
	if c := pk.Capabilities[0]; c.Held == nil || !*c.Held {
		t.Errorf("a kept grant does not hold: %+v", c)
	}
	var eb errorBody
	if got := e.do("POST", "/v1/packs/notes/grants/network/keep", nil, &eb); got != http.StatusNotFound {
		t.Errorf("keep of no grant: got %d %+v", got, eb)
	}
}

// TestBrowserReview: the Packs page shows a grant due for review with Keep
// and Revoke; Revoke withdraws it.
func TestBrowserReview(t *testing.T) {
	chromium := findChromium(t)
	e := reviewEnv(t)
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#banner")))
	b.step("open the packs page", chromedp.Click(chromedp.CSS("#nav-packs")))
	b.step("the grant due shows", chromedp.WaitVisible(chromedp.CSS(`#review tr[data-review="notes:terminal_exec"] button.review-revoke`)))
	b.shot("web-review")
	b.step("revoke it", chromedp.Click(chromedp.CSS(`#review tr[data-review="notes:terminal_exec"] button.review-revoke`)))
	b.poll("the review box empties", count(`#review tr[data-review]`)+` === 0`)
	var pk packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &pk)
	if pk.Capabilities[0].Granted {
		t.Errorf("revoked from the review box, yet granted: %+v", pk.Capabilities[0])
	}
}
