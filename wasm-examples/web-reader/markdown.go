package main

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The converter turns an HTML tree into Markdown that reads well to a
// model: headings, paragraphs, links with absolute URLs, lists (nested),
// code blocks with their language, block quotes, tables and emphasis.
// Scripts, styles, forms and other non-content elements are dropped. Text
// is not backslash-escaped except where it would start a Markdown block,
// because escapes cost tokens and rarely change what a model understands.

// skipped elements never contribute text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Head: true, atom.Button: true, atom.Input: true, atom.Select: true, atom.Textarea: true,
	atom.Option: true, atom.Audio: true, atom.Video: true, atom.Map: true, atom.Dialog: true,
}

// boilerplate elements are dropped when only the main content is wanted.
var boilerplate = map[atom.Atom]bool{
	atom.Nav: true, atom.Footer: true, atom.Aside: true, atom.Header: true, atom.Form: true,
}

var blockElems = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true, atom.Header: true,
	atom.Footer: true, atom.Aside: true, atom.Nav: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Pre: true,
	atom.Blockquote: true, atom.Hr: true, atom.Table: true, atom.Figure: true, atom.Figcaption: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Address: true, atom.Details: true, atom.Summary: true,
	atom.Form: true, atom.Fieldset: true, atom.Center: true, atom.Body: true, atom.Html: true,
	atom.Tr: true, atom.Td: true, atom.Th: true, atom.Thead: true, atom.Tbody: true, atom.Tfoot: true,
	atom.Caption: true,
}

// Link is one link found in the converted content.
type Link struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// Page is the result of a conversion.
type Page struct {
	Title    string
	Markdown string
	Links    []Link
}

type converter struct {
	base      *url.URL
	mainOnly  bool
	links     []Link
	seenLinks map[string]bool
}

// maxLinks bounds the link list a page returns.
const maxLinks = 200

// convert parses src and renders it. base resolves relative links and may be
// nil. mainOnly keeps the page's main content: <main>, else <article>, else
// the body without navigation, headers, footers, asides and forms.
func convert(src string, base *url.URL, mainOnly bool) Page {
	doc, err := html.Parse(strings.NewReader(strings.ToValidUTF8(src, "\uFFFD")))
	if err != nil { // html.Parse fails only on reader errors, never on bad markup
		return Page{Markdown: strings.TrimSpace(src)}
	}
	c := &converter{base: base, mainOnly: mainOnly, seenLinks: map[string]bool{}}
	if b := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Base }); b != nil && base != nil {
		if href := attr(b, "href"); href != "" {
			if u, err := base.Parse(href); err == nil {
				c.base = u
			}
		}
	}
	title := ""
	if t := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }); t != nil {
		title = collapse(textContent(t))
	}
	root := doc
	if mainOnly {
		m := find(doc, isMain)
		if m == nil {
			m = find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Article })
		}
		if m != nil {
			root = m
			c.mainOnly = false // inside <main> or <article>, headers and footers are content
		}
	}
	md := joinBlocks(c.blocks(root))
	if title == "" {
		if h := find(root, func(n *html.Node) bool { return n.DataAtom == atom.H1 }); h != nil {
			title = collapse(textContent(h))
		}
	}
	return Page{Title: strings.TrimSpace(title), Markdown: md, Links: c.links}
}

func isMain(n *html.Node) bool {
	return n.Type == html.ElementNode && (n.DataAtom == atom.Main || attr(n, "role") == "main")
}

func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && skipped[n.DataAtom] {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

var spaces = regexp.MustCompile(`[ \t\n\r\f]+`)

// collapse turns runs of HTML white space into one space.
func collapse(s string) string { return spaces.ReplaceAllString(s, " ") }

func (c *converter) skip(n *html.Node) bool {
	if n.Type == html.CommentNode || n.Type == html.DoctypeNode {
		return true
	}
	if n.Type != html.ElementNode {
		return false
	}
	if skipped[n.DataAtom] || hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" {
		return true
	}
	if c.mainOnly {
		role := attr(n, "role")
		return boilerplate[n.DataAtom] || role == "navigation" || role == "banner" || role == "contentinfo"
	}
	return false
}

func isBlock(n *html.Node) bool {
	return n.Type == html.ElementNode && blockElems[n.DataAtom]
}

// blocks renders n's children as Markdown blocks.
func (c *converter) blocks(n *html.Node) []string {
	var out []string
	var run []*html.Node // inline nodes waiting to become a paragraph
	flush := func() {
		if len(run) == 0 {
			return
		}
		if p := paragraph(c.inlineNodes(run)); p != "" {
			out = append(out, p)
		}
		run = run[:0]
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if c.skip(ch) {
			continue
		}
		if !isBlock(ch) {
			run = append(run, ch)
			continue
		}
		flush()
		out = append(out, c.block(ch)...)
	}
	flush()
	return out
}

func (c *converter) block(n *html.Node) []string {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		level := int(n.Data[1] - '0')
		t := strings.TrimSpace(strings.ReplaceAll(c.inline(n), "\n", " "))
		if t == "" {
			return nil
		}
		return []string{strings.Repeat("#", level) + " " + t}
	case atom.P, atom.Figcaption, atom.Summary, atom.Dt, atom.Caption:
		p := paragraph(c.inline(n))
		if p == "" {
			return nil
		}
		if n.DataAtom == atom.Dt || n.DataAtom == atom.Summary {
			p = "**" + p + "**"
		}
		return []string{p}
	case atom.Dd:
		return indentBlocks(c.blocks(n), "  ")
	case atom.Ul, atom.Ol:
		if l := c.list(n); l != "" {
			return []string{l}
		}
		return nil
	case atom.Pre:
		return []string{c.codeBlock(n)}
	case atom.Blockquote:
		inner := joinBlocks(c.blocks(n))
		if inner == "" {
			return nil
		}
		return []string{prefixLines(inner, "> ")}
	case atom.Hr:
		return []string{"---"}
	case atom.Table:
		if t := c.table(n); t != "" {
			return []string{t}
		}
		return nil
	}
	return c.blocks(n)
}

func indentBlocks(bs []string, prefix string) []string {
	for i, b := range bs {
		bs[i] = prefixLines(b, prefix)
	}
	return bs
}

func prefixLines(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = strings.TrimRight(prefix, " ")
		} else {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

func (c *converter) list(n *html.Node) string {
	ordered := n.DataAtom == atom.Ol
	num := 1
	if s, err := strconv.Atoi(attr(n, "start")); err == nil && ordered {
		num = s
	}
	var items []string
	for li := n.FirstChild; li != nil; li = li.NextSibling {
		if c.skip(li) {
			continue
		}
		var body string
		if li.Type == html.ElementNode && li.DataAtom == atom.Li {
			body = joinBlocks(c.blocks(li))
		} else if li.Type == html.ElementNode && (li.DataAtom == atom.Ul || li.DataAtom == atom.Ol) {
			// A list nested directly in a list (invalid but common): indent it.
			if len(items) > 0 {
				items[len(items)-1] += "\n" + prefixLines(c.list(li), "  ")
			}
			continue
		} else {
			body = paragraph(c.inlineNodes([]*html.Node{li}))
		}
		if body == "" {
			continue
		}
		marker := "- "
		if ordered {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		body = strings.ReplaceAll(body, "\n\n", "\n")
		items = append(items, marker+strings.ReplaceAll(body, "\n", "\n"+strings.Repeat(" ", len(marker))))
	}
	return strings.Join(items, "\n")
}

func (c *converter) codeBlock(n *html.Node) string {
	lang := language(n)
	if code := firstChildElem(n, atom.Code); code != nil && lang == "" {
		lang = language(code)
	}
	text := strings.TrimRight(strings.TrimPrefix(textContent(n), "\n"), "\n ")
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + text + "\n" + fence
}

var langClass = regexp.MustCompile(`(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]+)`)

func language(n *html.Node) string {
	if m := langClass.FindStringSubmatch(attr(n, "class")); m != nil {
		return m[1]
	}
	return ""
}

func firstChildElem(n *html.Node, a atom.Atom) *html.Node {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && ch.DataAtom == a {
			return ch
		}
	}
	return nil
}

func (c *converter) table(n *html.Node) string {
	var rows [][]string
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		for ch := x.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type != html.ElementNode || c.skip(ch) {
				continue
			}
			switch ch.DataAtom {
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(ch)
			case atom.Tr:
				var row []string
				for cell := ch.FirstChild; cell != nil; cell = cell.NextSibling {
					if cell.Type == html.ElementNode && (cell.DataAtom == atom.Td || cell.DataAtom == atom.Th) {
						t := strings.TrimSpace(strings.ReplaceAll(c.inline(cell), "\n", " "))
						row = append(row, strings.ReplaceAll(t, "|", `\|`))
					}
				}
				if len(row) > 0 {
					rows = append(rows, row)
				}
			}
		}
	}
	walk(n)
	if len(rows) == 0 {
		return ""
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	var b strings.Builder
	for i, r := range rows {
		for len(r) < width {
			r = append(r, "")
		}
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// inline renders n's children as inline Markdown.
func (c *converter) inline(n *html.Node) string {
	var kids []*html.Node
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		kids = append(kids, ch)
	}
	return c.inlineNodes(kids)
}

func (c *converter) inlineNodes(nodes []*html.Node) string {
	var b strings.Builder
	for _, n := range nodes {
		c.inlineNode(&b, n)
	}
	return b.String()
}

func (c *converter) inlineNode(b *strings.Builder, n *html.Node) {
	if c.skip(n) {
		return
	}
	if n.Type == html.TextNode {
		b.WriteString(collapse(n.Data))
		return
	}
	if n.Type != html.ElementNode {
		return
	}
	switch n.DataAtom {
	case atom.Br:
		b.WriteString("\n")
	case atom.A:
		c.link(b, n)
	case atom.Img:
		alt := collapse(attr(n, "alt"))
		if src := c.resolve(attr(n, "src")); strings.TrimSpace(alt) != "" && src != "" {
			b.WriteString("![" + strings.TrimSpace(alt) + "](" + src + ")")
		}
	case atom.Strong, atom.B:
		wrap(b, c.inline(n), "**")
	case atom.Em, atom.I:
		wrap(b, c.inline(n), "*")
	case atom.Del, atom.S, atom.Strike:
		wrap(b, c.inline(n), "~~")
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt, atom.Var:
		t := collapse(textContent(n))
		if strings.TrimSpace(t) == "" {
			b.WriteString(t)
			return
		}
		tick := "`"
		if strings.Contains(t, "`") {
			tick = "``"
			t = " " + t + " "
		}
		b.WriteString(tick + t + tick)
	case atom.Q:
		b.WriteString(`"` + c.inline(n) + `"`)
	default:
		if isBlock(n) { // a block inside inline content: keep it apart
			b.WriteString(" " + c.inline(n) + " ")
			return
		}
		b.WriteString(c.inline(n))
	}
}

// wrap puts marks around text, keeping its edge spaces outside them.
func wrap(b *strings.Builder, text, mark string) {
	t := strings.TrimSpace(text)
	if t == "" {
		b.WriteString(text)
		return
	}
	if text[0] == ' ' {
		b.WriteByte(' ')
	}
	b.WriteString(mark + t + mark)
	if text[len(text)-1] == ' ' {
		b.WriteByte(' ')
	}
}

func (c *converter) link(b *strings.Builder, n *html.Node) {
	text := strings.TrimSpace(strings.ReplaceAll(c.inline(n), "\n", " "))
	href := strings.TrimSpace(attr(n, "href"))
	target := c.resolve(href)
	if target == "" || strings.HasPrefix(href, "#") {
		b.WriteString(text)
		return
	}
	if text == "" {
		text = target
	}
	b.WriteString("[" + text + "](" + target + ")")
	if !c.seenLinks[target] && len(c.links) < maxLinks {
		c.seenLinks[target] = true
		c.links = append(c.links, Link{Text: text, URL: target})
	}
}

// resolve makes href absolute against the base, dropping javascript:, data:
// and other non-web schemes.
func (c *converter) resolve(href string) string {
	if href == "" {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if c.base != nil {
		u = c.base.ResolveReference(u)
	}
	switch u.Scheme {
	case "http", "https", "mailto", "":
	default:
		return ""
	}
	s := u.String()
	// Parentheses would end a Markdown link early.
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(s)
}

var blockStart = regexp.MustCompile(`^(#{1,6} |[-+*] |>|\d+[.)] |---)`)

// paragraph trims a run of inline text and guards a start that Markdown
// would read as a block of its own.
func paragraph(s string) string {
	lines := strings.Split(s, "\n")
	var kept []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			if blockStart.MatchString(l) {
				l = `\` + l
			}
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

var manyNewlines = regexp.MustCompile(`\n{3,}`)

func joinBlocks(bs []string) string {
	var kept []string
	for _, b := range bs {
		if strings.TrimSpace(b) != "" {
			kept = append(kept, b)
		}
	}
	return manyNewlines.ReplaceAllString(strings.Join(kept, "\n\n"), "\n\n")
}
