package main

import (
	"strings"
	"testing"
)

// TestRunInvalidJSONSaysWhere: --input that is not JSON is refused with
// the line and column where it breaks, before any approval.
func TestRunInvalidJSONSaysWhere(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, exitOK)
	for _, tt := range []struct{ input, want string }{
		{"{\"text\": \"hi\",\n \"n\": }", "line 2, column 7"},
		{`{"text": "hi"`, "line 1, column 14"},
	} {
		r := withHome(t, home, "run", "echo", "t", "--input", tt.input, "--yes")
		if r.code == exitOK {
			t.Fatalf("ran with %q", tt.input)
		}
		if msg := r.oneLineError(t); !strings.Contains(msg, "not valid JSON") || !strings.Contains(msg, tt.want) {
			t.Errorf("%q: %s", tt.input, msg)
		}
	}
}
