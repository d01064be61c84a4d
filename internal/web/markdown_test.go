package web

import (
	"regexp"
	"strings"
	"testing"
)

// TestMarkdown: a reply is rendered as Markdown, and nothing in it can run
// or act as the app: raw HTML is shown as text, dangerous links are
// dropped.
func TestMarkdown(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // substrings of the HTML
		not      []string
	}{
		{"emphasis and code", "**bold** and `x<y`", []string{"<strong>bold</strong>", "<code>x&lt;y</code>"}, nil},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |\n", []string{"<table>", "<td>1</td>"}, nil},
		{"fenced code", "```go\nfmt.Println(\"<b>\")\n```\n", []string{"<pre><code class=\"language-go\">", "&lt;b&gt;"}, []string{"<b>"}},
		{"raw HTML block is text", "<script>alert(1)</script>\n", []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}, []string{"<script"}},
		{"inline raw HTML is text", "hi <img src=x onerror=alert(1)> there", []string{"&lt;img src=x onerror=alert(1)&gt;"}, []string{"<img"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"click"}, []string{"javascript:"}},
		{"autolink gets rel", "see https://example.com/x", []string{`href="https://example.com/x"`, `rel="noopener noreferrer nofollow"`}, nil},
		{"data URL image", "![x](data:text/html;base64,PHNjcmlwdD4=)", nil, []string{"data:text/html"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderMarkdown(tt.in)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q in\n%s", n, got)
				}
			}
		})
	}
}

// unsafeHTML matches what must never come out of renderMarkdown: a tag
// other than the Markdown ones, an event handler, a script URL.
var (
	tagRE      = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)`)
	allowedTag = map[string]bool{"p": true, "em": true, "strong": true, "code": true, "pre": true, "a": true, "ul": true, "ol": true, "li": true,
		"blockquote": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "hr": true, "br": true, "img": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "del": true, "input": true}
	handlerRE = regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`)
	schemeRE  = regexp.MustCompile(`(?i)(href|src)="\s*((javascript|vbscript):|data:text)`)
)

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"**x**", "<script>x</script>", "[a](javascript:x)", "<a href=x onclick=y>", "| a |\n|-|\n| <b> |", "![i](x \"t\")", "<!-- c -->", "&lt;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := renderMarkdown(in)
		for _, m := range tagRE.FindAllStringSubmatch(out, -1) {
			if !allowedTag[strings.ToLower(m[2])] {
				t.Fatalf("tag %q from %q:\n%s", m[2], in, out)
			}
		}
		if handlerRE.MatchString(out) || schemeRE.MatchString(out) {
			t.Fatalf("unsafe output from %q:\n%s", in, out)
		}
	})
}
