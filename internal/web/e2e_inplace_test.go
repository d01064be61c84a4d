package web

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserInPlace: in the app a pack used in place is offered for
// attaching (marked "in place"), attaches, and its card on the packs page
// says where it lives; the person grants its python3 there.
func TestBrowserInPlace(t *testing.T) {
	chromium := findChromium(t)
	user := t.TempDir()
	dir := filepath.Join(user, ".claude", "skills", "webapp-testing")
	copySkill(t, "webapp-testing", dir)
	e := newEnv(t, envOptions{userHome: user})
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	b.poll("the chat opens", chatOpen)
	b.poll("webapp-testing is offered, in place", `[...document.querySelectorAll("#attach-select option")].some(o => o.value === "webapp-testing" && o.textContent.includes("in place"))`)
	b.step("attach it", chromedp.Evaluate[chromedp.Void](`document.querySelector("details.fold:has(#attached)").open = true`),
		chromedp.SetValue(chromedp.CSS("#attach-select"), "webapp-testing"), chromedp.Click(chromedp.CSS("#attach-btn")))
	b.poll("it is attached", count("#attached .detach")+` === 1`)
	b.openPack("webapp-testing")
	b.poll("its card says where it lives", `[...document.querySelectorAll(".pack[data-pack='webapp-testing'] .in-place")].some(n => n.textContent.includes(`+jsString(dir)+`) && n.textContent.includes("user folder"))`)
	b.step("grant python3", chromedp.Click(chromedp.CSS(".pack[data-pack='webapp-testing'] .caps-table button.small-btn")))
	b.poll("it is granted", `[...document.querySelectorAll(".pack[data-pack='webapp-testing'] .caps-table td.ok")].length === 1`)
	b.shot("web-in-place")
	b.step("revoke it", chromedp.Click(chromedp.CSS(".pack[data-pack='webapp-testing'] .caps-table button.small-btn")))
	b.poll("it is revoked", `[...document.querySelectorAll(".pack[data-pack='webapp-testing'] .caps-table td.bad")].length === 1`)
}
