package main

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestConvert(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	tests := []struct {
		name, html, want string
	}{
		{"headings and paragraphs",
			"<h1>Title</h1><p>One  two\n three.</p><h3>Sub <em>head</em></h3><p>Next</p>",
			"# Title\n\nOne two three.\n\n### Sub *head*\n\nNext"},
		{"links resolve against the base",
			`<p>See <a href="../api/">the API</a>, <a href="https://other.org/x?a=1">this</a> and <a href="#top">top</a>.</p>`,
			"See [the API](https://example.com/api/), [this](https://other.org/x?a=1) and top."},
		{"dangerous and empty links",
			`<p><a href="javascript:alert(1)">click</a> <a href="/x"></a> <a href="/p (1)">paren</a></p>`,
			"click [https://example.com/x](https://example.com/x) [paren](https://example.com/p%20%281%29)"},
		{"script, style and forms vanish",
			`<p>Keep</p><script>var x = "<p>no</p>";</script><style>p{}</style><noscript>js off</noscript><form><input value="x"><button>Go</button></form><p hidden>secret</p>`,
			"Keep"},
		{"emphasis keeps spaces outside marks",
			"<p>a<strong> bold </strong>b <b></b><i>it</i> <del>gone</del> <code>x := 1</code> <code>a`b</code></p>",
			"a **bold** b *it* ~~gone~~ `x := 1` `` a`b ``"},
		{"nested lists",
			"<ul><li>one</li><li>two<ul><li>two.a</li><li>two.b</li></ul></li></ul><ol start=\"3\"><li>three</li><li><p>four</p><p>more</p></li></ol>",
			"- one\n- two\n  - two.a\n  - two.b\n\n3. three\n4. four\n   more"},
		{"code blocks keep their text and language",
			"<pre><code class=\"language-go\">func main() {\n\tfmt.Println(\"&lt;hi&gt;\")\n}\n</code></pre><pre>has ``` fence</pre>",
			"```go\nfunc main() {\n\tfmt.Println(\"<hi>\")\n}\n```\n\n````\nhas ``` fence\n````"},
		{"block quotes",
			"<blockquote><p>first</p><p>second</p></blockquote>",
			"> first\n>\n> second"},
		{"tables",
			"<table><thead><tr><th>Name</th><th>Qty</th></tr></thead><tbody><tr><td>a|b</td><td>1</td></tr><tr><td>c</td></tr></tbody></table>",
			"| Name | Qty |\n| --- | --- |\n| a\\|b | 1 |\n| c |  |"},
		{"images need alt text",
			`<p><img src="/logo.png" alt="Logo"><img src="/pixel.gif"><img src="data:image/png;base64,xx" alt="inline"></p>`,
			"![Logo](https://example.com/logo.png)"},
		{"line breaks and rules",
			"<p>a<br>b</p><hr><div>c</div>",
			"a\nb\n\n---\n\nc"},
		{"text that would start a block is escaped",
			"<p># not a heading</p><p>1. not a list</p><p>- nor this</p>",
			"\\# not a heading\n\n\\1. not a list\n\n\\- nor this"},
		{"definition lists",
			"<dl><dt>Term</dt><dd>Meaning</dd></dl>",
			"**Term**\n\n  Meaning"},
		{"entities and unicode",
			"<p>caf&eacute; &amp; &lt;tag&gt; &#x1F600; &nbsp;x</p>",
			"café & <tag> 😀 \u00a0x"},
		{"broken markup still reads",
			"<p>unclosed <b>bold<p>next <a href=/x>link",
			"unclosed **bold**\n\n**next [link](https://example.com/x)**"},
	}
	for _, tt := range tests {
		got := convert(tt.html, base, false).Markdown
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

const articlePage = `<!doctype html><html><head><title> The  Page </title><base href="https://cdn.example.com/"></head>
<body><header><a href="/">Home</a></header><nav><ul><li><a href="/a">A</a></li></ul></nav>
<main><h1>Story</h1><p>Body with <a href="more">more</a>.</p><footer>by someone</footer></main>
<aside>ads</aside><footer>© 2024</footer></body></html>`

func TestMainContent(t *testing.T) {
	base, _ := url.Parse("https://example.com/")
	p := convert(articlePage, base, true)
	if p.Title != "The Page" {
		t.Errorf("title %q", p.Title)
	}
	if want := "# Story\n\nBody with [more](https://cdn.example.com/more).\n\nby someone"; p.Markdown != want {
		t.Errorf("main content:\n got %q\nwant %q", p.Markdown, want)
	}
	if len(p.Links) != 1 || p.Links[0].URL != "https://cdn.example.com/more" {
		t.Errorf("links %+v", p.Links)
	}

	// Without <main> or <article>, boilerplate regions are dropped from the body.
	noMain := strings.NewReplacer("<main>", "<div>", "</main>", "</div>").Replace(articlePage)
	p = convert(noMain, base, true)
	if want := "# Story\n\nBody with [more](https://cdn.example.com/more)."; p.Markdown != want {
		t.Errorf("body without boilerplate:\n got %q\nwant %q", p.Markdown, want)
	}

	// The whole page, on request.
	p = convert(articlePage, base, false)
	for _, want := range []string{"[Home](https://cdn.example.com/)", "- [A](https://cdn.example.com/a)", "ads", "© 2024"} {
		if !strings.Contains(p.Markdown, want) {
			t.Errorf("whole page lacks %q:\n%s", want, p.Markdown)
		}
	}

	// Title falls back to the first h1; <article> stands in for <main>.
	p = convert("<body><nav>x</nav><article><h1>Only</h1><p>text</p></article></body>", nil, true)
	if p.Title != "Only" || p.Markdown != "# Only\n\ntext" {
		t.Errorf("article page: %+v", p)
	}
}

func TestLinksAreDeduplicatedAndCapped(t *testing.T) {
	var b strings.Builder
	for i := range maxLinks + 50 {
		b.WriteString(`<a href="/p`)
		b.WriteString(strings.Repeat("x", i%300))
		b.WriteString(`">l</a> <a href="/same">s</a>`)
	}
	base, _ := url.Parse("https://e.org/")
	p := convert(b.String(), base, false)
	if len(p.Links) != maxLinks {
		t.Errorf("%d links, want %d", len(p.Links), maxLinks)
	}
	same := 0
	for _, l := range p.Links {
		if l.URL == "https://e.org/same" {
			same++
		}
	}
	if same != 1 {
		t.Errorf("/same listed %d times", same)
	}
}

func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		articlePage, "<ul><li><ol><li>x</ol></ul>", "<table><tr><td><table><tr><td>x", "<pre>```</pre>",
		"<a href='%zz'>bad</a>", "<b><i>x</b></i>", "\x00<p>\xff</p>", "<h7>x</h7><dl><dd><dt>",
	} {
		f.Add(s)
	}
	base, _ := url.Parse("https://example.com/a/")
	f.Fuzz(func(t *testing.T, src string) {
		for _, mainOnly := range []bool{false, true} {
			p := convert(src, base, mainOnly)
			if !utf8.ValidString(p.Markdown) || !utf8.ValidString(p.Title) {
				t.Fatalf("invalid UTF-8 out of %q", src)
			}
			if strings.Contains(p.Markdown, "\n\n\n") {
				t.Fatalf("three newlines in a row out of %q: %q", src, p.Markdown)
			}
			for _, l := range p.Links {
				if !strings.HasPrefix(l.URL, "http") && !strings.HasPrefix(l.URL, "mailto:") {
					t.Fatalf("link %q is not absolute, from %q", l.URL, src)
				}
			}
		}
	})
}
