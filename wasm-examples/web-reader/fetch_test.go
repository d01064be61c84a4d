package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// nativeGet is the getter the plugin gets from the host, played here by an
// ordinary HTTP client against a real loopback server.
func nativeGet(t *testing.T) getter {
	return func(u string, headers map[string]string) (response, error) {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return response{}, err
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return response{}, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		out := response{Status: resp.StatusCode, Headers: map[string]string{}, Body: body}
		for k, v := range resp.Header {
			out.Headers[strings.ToLower(k)] = strings.Join(v, ",")
		}
		return out, err
	}
}

func site(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != userAgent {
			http.Error(w, "who are you", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><head><title>Docs</title></head><body><nav><a href="/">Home</a></nav>
			<main><h1>Install</h1><p>Run <code>make</code>, then read <a href="/next">the next page</a>.</p></main></body></html>`)
	})
	mux.HandleFunc("/notes.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "<b>not html</b>\nline 2\n")
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
		w.Write([]byte("<p>caf\xe9 \x93quoted\x94</p>"))
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		io.WriteString(w, "<!DOCTYPE html><p>sniffed</p>")
	})
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for i := range 50 {
			io.WriteString(w, "<p>paragraph "+strings.Repeat("word ", 20)+string(rune('A'+i%26))+"</p>")
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func runFetch(t *testing.T, args map[string]any) (fetchResult, error) {
	t.Helper()
	in, _ := json.Marshal(args)
	out, err := fetch(in, nativeGet(t))
	var res fetchResult
	if err == nil {
		if uerr := json.Unmarshal(out, &res); uerr != nil {
			t.Fatalf("result is not JSON: %s", out)
		}
	}
	return res, err
}

func TestFetchPages(t *testing.T) {
	srv := site(t)
	tests := []struct {
		name    string
		args    map[string]any
		title   string
		content string
	}{
		{"html as markdown, main content", map[string]any{"url": srv.URL + "/page#frag"}, "Docs",
			"# Install\n\nRun `make`, then read [the next page](" + srv.URL + "/next)."},
		{"whole page", map[string]any{"url": srv.URL + "/page", "main_content": false}, "Docs",
			"[Home](" + srv.URL + "/)\n\n# Install\n\nRun `make`, then read [the next page](" + srv.URL + "/next)."},
		{"raw html", map[string]any{"url": srv.URL + "/untyped", "format": "raw"}, "", "<!DOCTYPE html><p>sniffed</p>"},
		{"plain text stays text", map[string]any{"url": srv.URL + "/notes.txt"}, "", "<b>not html</b>\nline 2\n"},
		{"json stays text", map[string]any{"url": srv.URL + "/data.json"}, "", `{"ok":true}`},
		{"latin-1 is decoded", map[string]any{"url": srv.URL + "/latin1"}, "", "café \u201cquoted\u201d"},
		{"untyped html is sniffed", map[string]any{"url": srv.URL + "/untyped"}, "", "sniffed"},
	}
	for _, tt := range tests {
		res, err := runFetch(t, tt.args)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if res.Status != 200 || res.Title != tt.title || res.Content != tt.content || res.Truncated {
			t.Errorf("%s:\n got %+v\nwant title %q content %q", tt.name, res, tt.title, tt.content)
		}
	}
}

func TestFetchLinksAndTruncation(t *testing.T) {
	srv := site(t)
	res, err := runFetch(t, map[string]any{"url": srv.URL + "/page", "links": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 1 || res.Links[0] != (Link{Text: "the next page", URL: srv.URL + "/next"}) {
		t.Errorf("links %+v", res.Links)
	}
	res, err = runFetch(t, map[string]any{"url": srv.URL + "/long", "max_chars": 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Chars > 1000 || res.Chars < 800 || res.TotalChars <= 1000 || strings.HasSuffix(res.Content, "\n") {
		t.Errorf("truncation: chars %d of %d, truncated %v, ends %q", res.Chars, res.TotalChars, res.Truncated, res.Content[len(res.Content)-10:])
	}
	if !strings.HasSuffix(res.Content, "word word H") { // 113 characters a paragraph: cut after the 8th
		t.Errorf("cut mid-paragraph: ...%q", res.Content[len(res.Content)-20:])
	}
}

func TestFetchErrors(t *testing.T) {
	srv := site(t)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": srv.URL + "/missing"}, "HTTP 404 Not Found: check the URL"},
		{map[string]any{"url": srv.URL + "/logo.png"}, "image/png, not HTML or text"},
		{map[string]any{"url": "ftp://example.com/x"}, "absolute http or https URL"},
		{map[string]any{"url": "/relative"}, "absolute http or https URL"},
		{map[string]any{"url": srv.URL, "format": "pdf"}, "want markdown"},
		{map[string]any{"url": srv.URL, "max_chars": 0}, "max_chars must be from 1"},
		{map[string]any{"url": srv.URL, "unknown": 1}, "unknown field"},
		{map[string]any{"url": "http://127.0.0.1:1/closed"}, "GET http://127.0.0.1:1/closed"},
	}
	for _, tt := range tests {
		_, err := runFetch(t, tt.args)
		if err == nil || !strings.HasPrefix(err.Error(), "web-reader: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}

func TestHTMLToMarkdownTool(t *testing.T) {
	out, err := htmlToMarkdown([]byte(`{"html": "<title>T</title><p>Hi <a href=\"x\">x</a> &lt;3</p>", "base_url": "https://a.org/b/", "links": true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"title":"T","markdown":"Hi [x](https://a.org/b/x) <3","total_chars":28,"truncated":false,"links":[{"text":"x","url":"https://a.org/b/x"}]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	for _, in := range []string{`{"html": " "}`, `{"html": "<p>x</p>", "base_url": "nope"}`, `{"html": 1}`} {
		if _, err := htmlToMarkdown([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), "web-reader: ") {
			t.Errorf("%s: error %v", in, err)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		want  string
		cut   bool
	}{
		{"short", 10, "short", false},
		{"ééééé", 3, "ééé", true},
		{"aaaaaaaaa\nbb", 11, "aaaaaaaaa", true},
		{"a\nbbbbbbbbbbbb", 10, "a\nbbbbbbbb", true},
	}
	for _, tt := range tests {
		got, total, cut := truncate(tt.s, tt.limit)
		if got != tt.want || cut != tt.cut || total != len([]rune(tt.s)) {
			t.Errorf("truncate(%q, %d) = %q, %d, %v", tt.s, tt.limit, got, total, cut)
		}
	}
}
