package fetch

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Markdown converts an HTML document to Markdown: headings, paragraphs,
// lists, emphasis, links, images, code and block quotes; script, style and
// other invisible content is dropped.
func Markdown(src string) string { return convert(src, true) }

// Text converts an HTML document to plain text: the visible text, one
// block per paragraph.
func Text(src string) string { return convert(src, false) }

func convert(src string, md bool) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return src
	}
	c := &converter{md: md}
	root := doc
	if body := find(doc, atom.Body); body != nil {
		root = body
	}
	if title := find(doc, atom.Title); title != nil && md && find(root, atom.H1) == nil {
		if t := strings.TrimSpace(collapse(textOf(title))); t != "" {
			c.block("# " + t)
		}
	}
	c.children(root)
	c.flush()
	return strings.TrimSpace(strings.Join(c.out, "\n\n"))
}

type converter struct {
	md     bool
	out    []string // finished blocks
	inline strings.Builder
	pre    int // depth of <pre>
}

func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, a); f != nil {
			return f
		}
	}
	return nil
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if skipped(n) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// skipped is content nobody sees.
func skipped(n *html.Node) bool {
	if n.Type == html.CommentNode {
		return true
	}
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Svg, atom.Iframe, atom.Object, atom.Button, atom.Select, atom.Input, atom.Form:
		return true
	}
	_, hidden := attrOK(n, "hidden")
	return hidden || strings.EqualFold(attr(n, "aria-hidden"), "true")
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// block ends the current inline run and adds a finished block.
func (c *converter) block(s string) {
	c.flush()
	if s = strings.TrimRight(s, " \n"); strings.TrimSpace(s) != "" {
		c.out = append(c.out, s)
	}
}

func (c *converter) flush() {
	s := collapse(c.inline.String())
	c.inline.Reset()
	if s != "" {
		c.out = append(c.out, s)
	}
}

func (c *converter) children(n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(ch)
	}
}

// sub converts n's children into their own blocks.
func (c *converter) sub(n *html.Node) []string {
	s := &converter{md: c.md}
	s.children(n)
	s.flush()
	return s.out
}

func (c *converter) node(n *html.Node) {
	if skipped(n) {
		return
	}
	switch n.Type {
	case html.TextNode:
		c.inline.WriteString(n.Data)
		return
	case html.ElementNode:
	default:
		c.children(n)
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		t := collapse(c.inlineOf(n))
		if c.md && t != "" {
			t = strings.Repeat("#", int(n.Data[1]-'0')) + " " + t
		}
		c.block(t)
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer, atom.Nav, atom.Aside, atom.Figure, atom.Figcaption, atom.Details, atom.Summary, atom.Dl, atom.Dt, atom.Dd, atom.Table, atom.Thead, atom.Tbody, atom.Tfoot, atom.Tr:
		c.flush()
		if n.DataAtom == atom.Tr {
			var cells []string
			for td := n.FirstChild; td != nil; td = td.NextSibling {
				if td.Type == html.ElementNode {
					cells = append(cells, collapse(c.inlineOf(td)))
				}
			}
			sep := " | "
			if !c.md {
				sep = "\t"
			}
			c.block(strings.Join(cells, sep))
			return
		}
		c.children(n)
		c.flush()
	case atom.Br:
		c.flush()
	case atom.Hr:
		if c.md {
			c.block("---")
		} else {
			c.flush()
		}
	case atom.Ul, atom.Ol:
		c.block(c.list(n))
	case atom.Blockquote:
		inner := strings.Join(c.sub(n), "\n\n")
		if c.md {
			inner = "> " + strings.ReplaceAll(inner, "\n", "\n> ")
		}
		c.block(inner)
	case atom.Pre:
		code := strings.Trim(textOf(n), "\n")
		if c.md {
			lang := ""
			if cd := find(n, atom.Code); cd != nil {
				for _, cl := range strings.Fields(attr(cd, "class")) {
					if l, ok := strings.CutPrefix(cl, "language-"); ok {
						lang = l
					}
				}
			}
			fence := "```"
			for strings.Contains(code, fence) {
				fence += "`"
			}
			code = fence + lang + "\n" + code + "\n" + fence
		}
		c.block(code)
	default:
		c.inline.WriteString(c.inlineOf(n))
	}
}

// inlineOf renders n (an inline element, or a block's content) on one line.
func (c *converter) inlineOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	if skipped(n) {
		return ""
	}
	var b strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		b.WriteString(c.inlineOf(ch))
	}
	s := b.String()
	if n.Type != html.ElementNode || !c.md {
		if n.Type == html.ElementNode && n.DataAtom == atom.Img {
			return attr(n, "alt")
		}
		return s
	}
	switch n.DataAtom {
	case atom.Strong, atom.B:
		return wrapMark(s, "**")
	case atom.Em, atom.I:
		return wrapMark(s, "*")
	case atom.Code, atom.Kbd, atom.Samp:
		return wrapMark(collapse(s), "`")
	case atom.Del, atom.S:
		return wrapMark(s, "~~")
	case atom.A:
		href := attr(n, "href")
		t := collapse(s)
		if href == "" || strings.HasPrefix(strings.ToLower(href), "javascript:") || t == "" {
			return s
		}
		return "[" + t + "](" + href + ")"
	case atom.Img:
		if src := attr(n, "src"); src != "" {
			return "![" + attr(n, "alt") + "](" + src + ")"
		}
	}
	return s
}

func wrapMark(s, mark string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return s
	}
	return " " + mark + t + mark + " "
}

// list renders a ul or ol, nested lists indented.
func (c *converter) list(n *html.Node) string {
	var lines []string
	i := 0
	for li := n.FirstChild; li != nil; li = li.NextSibling {
		if li.Type != html.ElementNode || li.DataAtom != atom.Li {
			continue
		}
		i++
		marker := "- "
		if n.DataAtom == atom.Ol {
			marker = itoa(i) + ". "
		}
		if !c.md {
			marker = "• "
			if n.DataAtom == atom.Ol {
				marker = itoa(i) + ". "
			}
		}
		blocks := c.sub(li)
		item := strings.Join(blocks, "\n")
		pad := strings.Repeat(" ", len(marker))
		lines = append(lines, marker+strings.ReplaceAll(item, "\n", "\n"+pad))
	}
	return strings.Join(lines, "\n")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
