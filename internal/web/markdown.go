package web

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders the model's replies: CommonMark with GitHub's tables,
// strikethrough, task lists and bare links. It is safe for the page:
// goldmark's HTML renderer (not Unsafe) drops javascript:, vbscript:,
// file: and non-image data: URLs, and raw HTML in the text is shown as
// text (escaped) rather than omitted, so a reply that talks about HTML
// reads as written. Links open in a new tab with rel=noopener noreferrer
// nofollow. The page's content security policy (script-src 'self', no
// inline script) is the second line of defence.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkAttrs{}, 100))),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(escapeRawHTML{}, 100))),
)

// renderMarkdown returns the HTML of a Markdown text.
func renderMarkdown(src string) string {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		// Never reached with a bytes.Buffer; show the text as it is.
		return "<pre>" + string(util.EscapeHTML([]byte(src))) + "</pre>"
	}
	return buf.String()
}

// linkAttrs marks every link to open in a new tab without a referrer.
type linkAttrs struct{}

func (linkAttrs) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindLink, ast.KindAutoLink:
			n.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
			n.SetAttributeString("target", []byte("_blank"))
		}
		return ast.WalkContinue, nil
	})
}

// escapeRawHTML renders raw HTML (inline and blocks) as escaped text.
type escapeRawHTML struct{}

func (escapeRawHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := 0; i < segs.Len(); i++ {
				s := segs.At(i)
				_, _ = w.Write(util.EscapeHTML(s.Value(source)))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		_, _ = w.WriteString("<p>")
		lines := b.Lines()
		for i := 0; i < lines.Len(); i++ {
			s := lines.At(i)
			_, _ = w.Write(util.EscapeHTML(s.Value(source)))
		}
		if b.HasClosure() {
			_, _ = w.Write(util.EscapeHTML(b.ClosureLine.Value(source)))
		}
		_, _ = w.WriteString("</p>\n")
		return ast.WalkContinue, nil
	})
}
