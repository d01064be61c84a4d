package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Styled is text for a terminal that holds escape sequences of its own:
// every character of its text went through Clean, and its only escape
// sequences are the SGR styles (bold, italic, underline, dim, colour,
// reset) that Markdown put there. Only this package makes one; a Writer
// writes it as it is (WriteStyled).
type Styled struct{ s string }

// Plain is the text of s without its styles.
func (s Styled) Plain() string {
	var b strings.Builder
	for rest := s.s; rest != ""; {
		i := strings.Index(rest, "\x1b[")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		rest = rest[strings.IndexByte(rest, 'm')+1:]
	}
	return b.String()
}

// WriteStyled writes s as it is: its text was cleaned when s was made, and
// its escape sequences are styles. A character held back from an earlier
// Write is written first, as U+FFFD.
func (w *Writer) WriteStyled(s Styled) error {
	if err := w.Flush(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := fmt.Fprint(w.w, s.s)
	return err
}

// The SGR parameters Markdown styles with.
const (
	sgrBold      = "1"
	sgrDim       = "2"
	sgrItalic    = "3"
	sgrUnderline = "4"
	sgrStrike    = "9"
	sgrCode      = "36" // cyan
)

var mdParser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, extension.Linkify)).Parser()

// Markdown renders a model's Markdown reply for a terminal: headings in
// bold, emphasis in italic and bold, code in colour and indented, lists
// with bullets or numbers, links underlined with their address after
// them, block quotes behind a bar, and tables with aligned columns. width
// bounds rules (a thematic break); 0 means 80. Everything the text holds
// goes through Clean: a reply cannot put escape sequences of its own on
// the terminal.
func Markdown(src string, width int) Styled {
	if width <= 0 {
		width = 80
	}
	b := []byte(src)
	r := &mdRenderer{src: b, width: width, lineStart: true}
	r.blocks(mdParser.Parse(text.NewReader(b)))
	return Styled{strings.TrimRight(r.b.String(), "\n") + "\n"}
}

// mdRenderer writes one Markdown document.
type mdRenderer struct {
	src   []byte
	width int
	b     strings.Builder
	// styles are the SGR parameters in force, outermost first.
	styles []string
	// prefix is written at the start of every line (block quotes, list
	// indentation); marker, when set, stands for the last prefix on the
	// next line only (a list item's bullet).
	prefix    []string
	marker    string
	lineStart bool
	// visible counts the characters written that a terminal shows.
	visible int
}

func (r *mdRenderer) esc(params string) { r.b.WriteString("\x1b[" + params + "m") }

func (r *mdRenderer) push(param string) {
	r.styles = append(r.styles, param)
	r.esc(param)
}

func (r *mdRenderer) pop() {
	r.styles = r.styles[:len(r.styles)-1]
	r.esc("0")
	if len(r.styles) > 0 {
		r.esc(strings.Join(r.styles, ";"))
	}
}

// text writes s, cleaned, starting each line with the prefix.
func (r *mdRenderer) text(s string) {
	for i, line := range strings.Split(Clean(s), "\n") {
		if i > 0 {
			r.newline()
		}
		if line == "" {
			continue
		}
		r.startLine()
		r.b.WriteString(line)
		r.visible += utf8.RuneCountInString(line)
	}
}

// startLine writes the prefix when nothing was written on the line yet.
func (r *mdRenderer) startLine() {
	if !r.lineStart {
		return
	}
	r.lineStart = false
	if len(r.prefix) == 0 && r.marker == "" {
		return
	}
	if len(r.styles) > 0 {
		r.esc("0")
	}
	p := strings.Join(r.prefix, "")
	if r.marker != "" && len(r.prefix) > 0 {
		p = strings.Join(r.prefix[:len(r.prefix)-1], "") + r.marker
		r.marker = ""
	}
	r.b.WriteString(p)
	r.visible += utf8.RuneCountInString(p)
	if len(r.styles) > 0 {
		r.esc(strings.Join(r.styles, ";"))
	}
}

func (r *mdRenderer) newline() {
	if len(r.styles) > 0 {
		r.esc("0")
		defer r.esc(strings.Join(r.styles, ";"))
	}
	r.b.WriteString("\n")
	r.lineStart = true
}

// blank ends the line and leaves an empty one (with the prefix of a quote).
func (r *mdRenderer) blank() {
	if !r.lineStart {
		r.newline()
	}
	if strings.TrimSpace(strings.Join(r.prefix, "")) != "" {
		r.b.WriteString(strings.TrimRight(strings.Join(r.prefix, ""), " "))
	}
	r.b.WriteString("\n")
}

// blocks renders n's children, block by block.
func (r *mdRenderer) blocks(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.PreviousSibling() != nil && (n.Kind() == ast.KindDocument || n.Kind() == ast.KindBlockquote || c.HasBlankPreviousLines()) {
			r.blank()
		}
		r.block(c)
	}
}

func (r *mdRenderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		r.push(sgrBold)
		if n.Level <= 2 {
			r.push(sgrUnderline)
		}
		r.inlines(n)
		if n.Level <= 2 {
			r.pop()
		}
		r.pop()
		r.newline()
	case *ast.Paragraph, *ast.TextBlock:
		r.inlines(n)
		r.newline()
	case *ast.ThematicBreak:
		r.text(strings.Repeat("─", min(r.width, 40)))
		r.newline()
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		r.code(n)
	case *ast.HTMLBlock:
		r.lines(n.Lines())
		if n.HasClosure() {
			r.text(string(n.ClosureLine.Value(r.src)))
		}
	case *ast.Blockquote:
		r.prefix = append(r.prefix, "│ ")
		r.blocks(n)
		r.prefix = r.prefix[:len(r.prefix)-1]
	case *ast.List:
		r.list(n)
	case *east.Table:
		r.table(n)
	default:
		r.blocks(n)
	}
}

// lines writes the raw lines of a block.
func (r *mdRenderer) lines(ls *text.Segments) {
	for i := range ls.Len() {
		seg := ls.At(i)
		r.text(string(seg.Value(r.src)))
	}
}

func (r *mdRenderer) code(n ast.Node) {
	if f, ok := n.(*ast.FencedCodeBlock); ok {
		if lang := f.Language(r.src); len(lang) > 0 {
			r.push(sgrDim)
			r.text("  " + string(lang))
			r.pop()
			r.newline()
		}
	}
	r.prefix = append(r.prefix, "  ")
	r.push(sgrCode)
	r.lines(n.Lines())
	r.pop()
	r.prefix = r.prefix[:len(r.prefix)-1]
	if !r.lineStart {
		r.newline()
	}
}

func (r *mdRenderer) list(l *ast.List) {
	i := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item.PreviousSibling() != nil && !l.IsTight {
			r.blank()
		}
		marker := "• "
		if l.IsOrdered() {
			marker = fmt.Sprintf("%d. ", i)
			i++
		}
		if !r.lineStart {
			r.newline()
		}
		r.prefix = append(r.prefix, strings.Repeat(" ", utf8.RuneCountInString(marker)))
		r.marker = marker
		r.blocks(item)
		r.marker = ""
		r.prefix = r.prefix[:len(r.prefix)-1]
	}
}

// inlines renders n's inline children.
func (r *mdRenderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *mdRenderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		r.text(string(n.Segment.Value(r.src)))
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.newline()
		}
	case *ast.String:
		r.text(string(n.Value))
	case *ast.CodeSpan:
		r.push(sgrCode)
		r.inlines(n)
		r.pop()
	case *ast.Emphasis:
		style := sgrItalic
		if n.Level >= 2 {
			style = sgrBold
		}
		r.push(style)
		r.inlines(n)
		r.pop()
	case *east.Strikethrough:
		r.push(sgrStrike)
		r.inlines(n)
		r.pop()
	case *ast.Link:
		r.push(sgrUnderline)
		r.inlines(n)
		r.pop()
		if dest := string(n.Destination); dest != "" && dest != r.plain(n) {
			r.push(sgrDim)
			r.text(" (" + dest + ")")
			r.pop()
		}
	case *ast.AutoLink:
		r.push(sgrUnderline)
		r.text(string(n.URL(r.src)))
		r.pop()
	case *ast.Image:
		r.text("[image: " + r.plain(n) + "] (" + string(n.Destination) + ")")
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			r.text(string(seg.Value(r.src)))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			r.text("[x] ")
		} else {
			r.text("[ ] ")
		}
	default:
		r.inlines(n)
	}
}

// plain is the text of n's inlines, without styles.
func (r *mdRenderer) plain(n ast.Node) string {
	sub := &mdRenderer{src: r.src, width: r.width, lineStart: true}
	sub.inlines(n)
	return Styled{sub.b.String()}.Plain()
}

// cell is one rendered table cell and how wide it shows.
type cell struct {
	s     string
	width int
}

func (r *mdRenderer) table(t *east.Table) {
	var rows [][]cell
	var widths []int
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []cell
		for i, c := 0, row.FirstChild(); c != nil; i, c = i+1, c.NextSibling() {
			sub := &mdRenderer{src: r.src, width: r.width, lineStart: true}
			if row.Kind() == east.KindTableHeader {
				sub.push(sgrBold)
			}
			sub.inlines(c)
			if len(sub.styles) > 0 {
				sub.pop()
			}
			s := strings.ReplaceAll(sub.b.String(), "\n", " ")
			cells = append(cells, cell{s, sub.visible})
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], sub.visible)
		}
		rows = append(rows, cells)
	}
	for ri, cells := range rows {
		var line strings.Builder
		for i, c := range cells {
			if i > 0 {
				line.WriteString(" │ ")
			}
			pad := widths[i] - c.width
			left := 0
			if i < len(t.Alignments) {
				switch t.Alignments[i] {
				case east.AlignRight:
					left = pad
				case east.AlignCenter:
					left = pad / 2
				}
			}
			line.WriteString(strings.Repeat(" ", left) + c.s + strings.Repeat(" ", pad-left))
		}
		r.startLine()
		r.b.WriteString(strings.TrimRight(line.String(), " "))
		r.newline()
		if ri == 0 {
			var sep []string
			for _, w := range widths {
				sep = append(sep, strings.Repeat("─", w))
			}
			r.text(strings.Join(sep, "─┼─"))
			r.newline()
		}
	}
}
