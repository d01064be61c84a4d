package termtext

import (
	"regexp"
	"strings"
	"testing"
)

const mdSample = "# Title\n\nSome *italic* and **bold** and `code` with a [link](https://x.example) and \x1b[31mred\x1b]0;title\x07.\n\n## Steps\n\n1. one\n2. two\n   - nested\n   - [x] done\n\n> quoted\n> more\n\n```go\nfunc main() {}\n```\n\n| a | bb |\n|---|---:|\n| 1 | 22 |\n| 333 | 4 |\n\n---\nend <b>x</b> https://auto.example\n"

// TestMarkdown: a reply's Markdown reads as a terminal shows it: headings,
// lists, quotes, code, tables and links laid out, markup gone.
func TestMarkdown(t *testing.T) {
	got := Markdown(mdSample, 80).Plain()
	want := `Title

Some italic and bold and code with a link (https://x.example) and \u001b[31mred\u001b]0;title\u0007.

Steps

1. one
2. two
   • nested
   • [x] done

│ quoted
│ more

  go
  func main() {}

a   │ bb
────┼───
1   │ 22
333 │  4

────────────────────────────────────────

end <b>x</b> https://auto.example
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestMarkdownStyles: the styles are SGR sequences around the right text.
func TestMarkdownStyles(t *testing.T) {
	s := Markdown(mdSample, 80).s
	for _, want := range []string{
		"\x1b[1m\x1b[4mTitle\x1b[0m", "\x1b[3mitalic\x1b[0m", "\x1b[1mbold\x1b[0m", "\x1b[36mcode\x1b[0m",
		"\x1b[4mlink\x1b[0m\x1b[2m (https://x.example)\x1b[0m", "\x1b[36mfunc main() {}", "\x1b[1ma\x1b[0m",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the styled text lacks %q:\n%q", want, s)
		}
	}
	onlySGR(t, s)
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// onlySGR fails unless every escape in s starts an SGR sequence and s has
// no other character a terminal acts on.
func onlySGR(t testing.TB, s string) {
	t.Helper()
	if rest := sgr.ReplaceAllString(s, ""); needsCleaning(rest) {
		t.Fatalf("the styled text holds more than styles: %q", rest)
	}
}

// TestWriteStyled: a Writer writes the styles of a Styled as they are, and
// still neutralises what is written through Write.
func TestWriteStyled(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.Write([]byte("\x1b[2J"))
	if err := w.WriteStyled(Markdown("**x**", 80)); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `\u001b[2J`+"\x1b[1mx\x1b[0m\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// FuzzMarkdown: whatever a model writes, the rendering never panics and
// puts nothing on the terminal but text and styles.
func FuzzMarkdown(f *testing.F) {
	f.Add(mdSample)
	f.Add("| a |\n|---|\n| \x1b[2J |\n")
	f.Add("- [ ] x\n  ```\n  \x9b31m\n  ```\n")
	f.Fuzz(func(t *testing.T, src string) {
		onlySGR(t, Markdown(src, 40).s)
	})
}
