package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// askPackDir is the mcpserver tests' pack whose ask tool puts its arguments
// to the person as a question (ask_person).
var askPackDir, _ = filepath.Abs(filepath.Join("..", "..", "internal", "mcpserver", "testdata", "ask-pack"))

// terminalActs reports the first character in s that a terminal would act
// on rather than show (ESC, BEL, a C1 control, a bidirectional override).
func terminalActs(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r >= 0x7f && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, true
		}
	}
	return 0, false
}

// TestTerminalShowsPackTextInert: a question a tool asks (ask_person) that
// holds escape sequences (a window title, a screen clear, colours, a bidi
// override) reaches the person's terminal as visible text, not as
// commands; so does the tool's result and error.
func TestTerminalShowsPackTextInert(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", askPackDir, "--grant", "ask_person", "--yes").mustCode(t, exitOK)
	hostile := `\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u009b0m \u202eevil`
	input := `{"message": "Deploy? ` + hostile + `", "schema": {"type": "object", "title": "` + hostile + `", "properties": {"ok": {"type": "boolean", "description": "` + hostile + `"}}}}`

	keys, tty, screen := openPTYKeys(t)
	keys.WriteString("y\ny\nyes\n") // run it; answer it; ok = yes
	var out bytes.Buffer
	code := runIO(context.Background(), []string{"--home", home, "run", "ask-pack", "ask", "--input", input}, tty, &out, tty)
	seen := screen()
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nterminal:\n%s", code, out.String(), seen)
	}
	if !strings.Contains(seen, "Deploy?") || !strings.Contains(seen, "pwned") {
		t.Fatalf("the question is not shown:\n%q", seen)
	}
	for what, s := range map[string]string{"terminal": seen, "stdout": out.String()} {
		if r, ok := terminalActs(s); ok {
			t.Errorf("the %s got %U raw:\n%q", what, r, s)
		}
	}
}
