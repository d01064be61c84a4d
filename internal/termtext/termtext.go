// Package termtext neutralises text on its way to a terminal. Text that a
// pack or a model controls (a question, a tool's name, description,
// result or error, a recipe step's name, a log line) can hold escape
// sequences that retitle the window, clear the screen, move the cursor,
// recolour what follows or hide text behind bidirectional overrides. Clean
// owns the rule; Writer applies it to every byte the command line writes.
package termtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Clean returns s with every character a terminal would act on instead
// of showing written out as a visible \uXXXX: C0 and C1 controls (ESC, BEL,
// CSI, ...) but newline and tab, DEL, and the bidirectional formatting
// characters. A byte that is not UTF-8 becomes U+FFFD (a lone 0x9b is CSI
// to some terminals). Inside a JSON string \uXXXX means the same
// character, so JSON stays valid and means what it meant.
func Clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if neutral(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func needsCleaning(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, neutral)
}

// neutral reports whether a terminal may act on r rather than show it.
func neutral(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r == '\u061c' || r == '\u200e' || r == '\u200f',
		r >= '\u202a' && r <= '\u202e',
		r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// Writer passes what is written to it through Clean. A character split
// across two writes is held back until its end arrives; Flush writes what
// is held (as U+FFFD: it never completed). It is safe for concurrent use,
// as the log handler and a prompt may share it.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write cleans p and writes it; it reports len(p) when the write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := append(w.held, p...)
	w.held = nil
	// Hold back an unfinished character at the end (at most 3 bytes).
	for i := 1; i <= 3 && i <= len(b); i++ {
		if c := b[len(b)-i]; utf8.RuneStart(c) {
			if c >= utf8.RuneSelf && !utf8.FullRune(b[len(b)-i:]) {
				w.held = append([]byte(nil), b[len(b)-i:]...)
				b = b[:len(b)-i]
			}
			break
		}
	}
	if _, err := io.WriteString(w.w, Clean(string(b))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a character that never completed, as U+FFFD.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	w.held = nil
	_, err := io.WriteString(w.w, "\uFFFD")
	return err
}

// Compact renders JSON on one line (OneLine when it is not JSON), cut at n
// bytes.
func Compact(raw json.RawMessage, n int) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return OneLine(string(raw), n)
	}
	return OneLine(buf.String(), n)
}

// OneLine folds s's runs of white space and control characters (a pack or
// a client could hide terminal escapes in what it names) into one space and
// cuts it at n bytes, on a character's boundary, marking the cut with "…".
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
