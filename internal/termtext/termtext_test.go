package termtext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b]0;title\x07", `\u001b]0;title\u0007`},
		{"\x1b[2J\x1b[31mred", `\u001b[2J\u001b[31mred`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"del \x7f cr \r", `del \u007f cr \u000d`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"bad \x9b byte", "bad \uFFFD byte"},
		{"héllo ✓", "héllo ✓"},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCleanKeepsJSON: cleaned JSON is still JSON, and means the same.
func TestCleanKeepsJSON(t *testing.T) {
	in := "{\"s\": \"a\u009bb\u202ec\x7fd\"}"
	var before, after map[string]string
	if err := json.Unmarshal([]byte(in), &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(Clean(in)), &after); err != nil {
		t.Fatalf("cleaned JSON does not parse: %v", err)
	}
	if before["s"] != after["s"] {
		t.Errorf("cleaned JSON means %q, want %q", after["s"], before["s"])
	}
}

// TestWriterSplitCharacter: a character written in two parts is cleaned
// as one (a two-byte C1 control split across writes still is caught).
func TestWriterSplitCharacter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, p := range []string{"a\xc2", "\x9b2J é", "\xc3", "\xa9", "\xe2\x80"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `a\u009b2J éé`+"\uFFFD"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a  b\n\tc", 10, "a b c"},
		{"red\x1b[31mtext\x07", 20, "red [31mtext"},
		{"abcdef", 3, "abc…"},
		{"aéb", 2, "a…"}, // not inside é
		{`{"a": 1}`, 10, `{"a": 1}`},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in, tt.n); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	if got := Compact([]byte("{ \"a\" :\n 1 }"), 10); got != `{"a":1}` {
		t.Errorf("Compact = %q", got)
	}
}
