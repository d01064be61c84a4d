package fetch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMarkdownAndText(t *testing.T) {
	tests := []struct {
		html, md, text string
	}{
		{"<h2>Title</h2><p>a <em>b</em> <code>c</code></p>", "## Title\n\na *b* `c`", "Title\n\na b c"},
		{"<ol><li>x</li><li>y<ul><li>z</li></ul></li></ol>", "1. x\n2. y\n   - z", "1. x\n2. y\n   • z"},
		{"<pre><code class=\"language-go\">if a {\n}</code></pre>", "```go\nif a {\n}\n```", "if a {\n}"},
		{"<blockquote><p>q</p></blockquote><script>x()</script><style>p{}</style>", "> q", "q"},
		{"<table><tr><td>a</td><td>b</td></tr></table>", "a | b", "a\tb"},
		{"<p>1<br>2</p><p hidden>no</p>", "1\n\n2", "1\n\n2"},
	}
	for _, tt := range tests {
		if got := Markdown(tt.html); got != tt.md {
			t.Errorf("Markdown(%q) = %q, want %q", tt.html, got, tt.md)
		}
		if got := Text(tt.html); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.html, got, tt.text)
		}
	}
}

func TestFetchArguments(t *testing.T) {
	never := func(Request) (Response, error) { t.Fatal("a request was sent"); return Response{}, nil }
	for _, in := range []string{
		`{"url":"file:///etc/passwd"}`, `{"url":"example.com"}`, `{"url":"http://"}`,
		`{"url":"https://example.com","method":"POST"}`, `{"url":"https://example.com","x":1}`, `[]`,
	} {
		if _, err := WebFetch([]byte(in), never); !errors.Is(err, ErrInvalid) {
			t.Errorf("WebFetch(%s) = %v, want ErrInvalid", in, err)
		}
	}
}

func TestFetchResult(t *testing.T) {
	var sent Request
	do := func(r Request) (Response, error) {
		sent = r
		return Response{Status: 200, Headers: map[string]string{"content-type": "application/pdf", "content-disposition": `attachment; filename="../r.pdf"`}, Body: []byte("%PDF-1.7")}, nil
	}
	out, err := WebFetch([]byte(`{"url":"https://example.com/get?id=1"}`), do)
	if err != nil {
		t.Fatal(err)
	}
	if sent.FirstByteTimeoutMS != 1000 || sent.BodyTimeoutMS != 30000 || sent.Method != "GET" {
		t.Errorf("request %+v, want GET with 1000 and 30000 ms", sent)
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != BinaryError || r.Content != nil || r.Filename != "r.pdf" || r.Size != 8 || r.Format != "raw" {
		t.Errorf("got %+v", r)
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<ul><li><ol><li>x", "<pre>```</pre>", "<a href=javascript:x>y</a>", "\xff<b>\x00</b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Markdown(s), Text(s)} {
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Errorf("invalid UTF-8 out of valid input %q", s)
			}
		}
	})
}

func FuzzWebFetch(f *testing.F) {
	f.Add(`{"url":"https://example.com/a.txt","as_text":true}`, "text/html; charset=latin1", "<p>\xe9</p>", false)
	f.Add(`{"url":"http://x/","method":"HEAD"}`, "", "", true)
	f.Fuzz(func(t *testing.T, args, ctype, body string, truncated bool) {
		do := func(r Request) (Response, error) {
			if !strings.HasPrefix(strings.ToLower(r.URL), "http") {
				t.Fatalf("sent %q", r.URL)
			}
			return Response{Status: 200, Headers: map[string]string{"content-type": ctype, "content-disposition": ctype}, Body: []byte(body), Truncated: truncated}, nil
		}
		out, err := WebFetch([]byte(args), do)
		if err != nil {
			return
		}
		var r Result
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("result %s: %v", out, err)
		}
		if r.Content != nil && len(*r.Content) > MaxContent+len(TooLongSuffix)+len(TimedOutSuffix)+2 {
			t.Errorf("content of %d bytes", len(*r.Content))
		}
	})
}
