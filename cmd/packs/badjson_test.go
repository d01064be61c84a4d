package main

import (
	"os"
	"path/filepath"
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

// TestRunInputFromFile: --input @FILE reads the arguments from FILE, and a
// file that is not there is an invalid input that names it.
func TestRunInputFromFile(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, exitOK)
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(`{"text": "from a file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := withHome(t, home, "run", "echo", "t", "--input", "@"+file, "--yes").mustCode(t, exitOK); !strings.Contains(r.stdout, "from a file") {
		t.Errorf("stdout: %q", r.stdout)
	}
	missing := filepath.Join(t.TempDir(), "nope.json")
	msg := withHome(t, home, "run", "echo", "t", "--input", "@"+missing, "--yes").mustCode(t, exitInvalid).oneLineError(t)
	if !strings.Contains(msg, missing) {
		t.Errorf("a missing file says %q", msg)
	}
}

// TestChatHostedProviderWithoutKey: packs chat with Anthropic's own API and
// no key says so, naming the variable, before a chat starts.
func TestChatHostedProviderWithoutKey(t *testing.T) {
	for _, name := range []string{"ANTHROPIC_API_KEY", "PACKS_API_KEY", "PACKS_BASE_URL", "PACKS_CONFIG"} {
		t.Setenv(name, "")
	}
	r := withHome(t, t.TempDir(), "chat", "--provider", "anthropic", "--model", "claude-test")
	if r.code == exitOK || strings.Contains(r.stdout+r.stderr, "you>") {
		t.Fatalf("a chat started: %+v", r)
	}
	if msg := r.oneLineError(t); !strings.Contains(msg, "no API key") || !strings.Contains(msg, "ANTHROPIC_API_KEY") {
		t.Errorf("says %q", msg)
	}
}
