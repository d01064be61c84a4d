package web

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestFavicon: the page names its icon, and the icon is served, like the
// page's other files, without the token, as SVG.
func TestFavicon(t *testing.T) {
	e := newEnv(t, envOptions{})
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, string(b)
	}
	_, page := get("/")
	if !strings.Contains(page, `<link rel="icon" href="/favicon.svg" type="image/svg+xml">`) {
		t.Error("index.html does not link /favicon.svg")
	}
	res, icon := get("/favicon.svg")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("GET /favicon.svg: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var svg struct {
		XMLName xml.Name
		ViewBox string `xml:"viewBox,attr"`
	}
	if err := xml.Unmarshal([]byte(icon), &svg); err != nil || svg.XMLName.Local != "svg" || svg.ViewBox == "" {
		t.Errorf("the icon is not an SVG with a viewBox: %+v %v", svg, err)
	}
}
