package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSignIn: with an OIDC issuer, the page offers to sign in; the
// click goes through the issuer (a real OpenID provider in the test) by
// the authorization code flow with PKCE and comes back signed in, as the
// person the issuer named, in the role the policy maps their groups to.
// The session cookie is out of the page's reach, a member is refused the
// audit, and signing out ends the session.
func TestBrowserSignIn(t *testing.T) {
	chromium := findChromium(t)
	e, op := oidcEnv(t)
	op.SignIn("mia", "mia", "engineering")
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(chromedp.CSS("#sign-in")))
	b.poll("send is disabled", `document.querySelector("#send").disabled`)
	// Following the link: Navigate waits for the page the redirects (to
	// the issuer and back) end on, where a click would race them.
	href := must(t, b.ctx, chromedp.Evaluate[string](`document.querySelector("#sign-in").href`))
	b.step("follow Sign in", chromedp.Navigate(href), chromedp.WaitVisible(chromedp.CSS("#person")))
	b.poll("signed in as mia, a member", `document.querySelector("#person").textContent === "signed in as mia (member)"`)
	b.poll("the banner is gone", `document.querySelector("#banner").hidden`)
	b.poll("a member sees no Audit page", `document.querySelector("#nav-audit").hidden && !document.querySelector("#nav-packs").hidden`)
	if loc := must(t, b.ctx, chromedp.Evaluate[string](`location.href`)); strings.Contains(loc, "code=") || strings.Contains(loc, "state=") {
		t.Errorf("the code stayed in the address: %s", loc)
	}
	if c := must(t, b.ctx, chromedp.Evaluate[string](`document.cookie`)); strings.Contains(c, "packs_session") {
		t.Errorf("the page can read the session cookie: %q", c)
	}
	b.poll("the status names mia", `fetch("/v1/status").then(r => r.json()).then(s => s.authenticated && s.person.subject === "mia" && s.person.roles.join() === "member")`)
	b.poll("a member is refused the audit", `fetch("/v1/audit").then(r => r.status === 403)`)
	b.poll("a member starts a chat of their own", `fetch("/v1/chats", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then(r => r.status === 201)`)
	b.poll("sign out", `fetch("/auth/logout", {method: "POST"}).then(r => r.ok)`)
	b.poll("the session is over", `fetch("/v1/chats").then(r => r.status === 401)`)
}
