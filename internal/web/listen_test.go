package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserShowsBeyondLoopback: a server listening on every interface
// says so in the app's header; on loopback the header says nothing of it.
func TestBrowserShowsBeyondLoopback(t *testing.T) {
	chromium := findChromium(t)
	for _, tt := range []struct {
		addr   string
		beyond bool
	}{{"0.0.0.0:0", true}, {"127.0.0.1:0", false}} {
		t.Run(tt.addr, func(t *testing.T) {
			e := newEnv(t, envOptions{addr: tt.addr})
			e.url = "http://127.0.0.1:" + e.url[strings.LastIndex(e.url, ":")+1:]
			b := openBrowser(t, chromium, screenshotDir(t))
			b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
			b.poll("the status is shown", `document.querySelector("#model").textContent !== ""`)
			shown := must(t, b.ctx, chromedp.Evaluate[bool](`!document.querySelector("#exposed").hidden`))
			if shown != tt.beyond {
				t.Errorf("the header shows the exposure: %v, want %v", shown, tt.beyond)
			}
		})
	}
}
