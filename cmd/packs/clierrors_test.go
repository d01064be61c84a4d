package main

import (
	"os"
	"os/exec"
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

// TestDeniedByGrantSaysTheCommand: a call denied by the person's grant
// ends with the packs grant command that lifts it, for a capability not
// granted at all and for a resource outside the grant; a denial by the
// pack's own request gets none (no grant lifts it).
func TestDeniedByGrantSaysTheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the web-reader example")
	}
	if out, err := exec.Command("make", "-s", "-C", "../../wasm-examples", "web-reader/bin/web-reader.wasm", "web-reader/bin/html-to-markdown.wasm").CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	for _, tt := range []struct{ grant, url, want string }{
		{"none", "https://docs.python.org/3/", ": grant it with packs grant web-reader network"},
		{"network=en.wikipedia.org", "https://docs.python.org/3/", ": grant it with packs grant web-reader network=docs.python.org"},
		{"network", "http://127.0.0.1:9/", ""},
	} {
		home := t.TempDir()
		withHome(t, home, "add", "../../wasm-examples/web-reader", "--grant", tt.grant, "--yes").mustCode(t, exitOK)
		msg := withHome(t, home, "run", "web-reader", "fetch", "--yes", "--input", `{"url":"`+tt.url+`"}`).mustCode(t, exitDenied).oneLineError(t)
		switch {
		case tt.want != "" && !strings.HasSuffix(msg, tt.want):
			t.Errorf("granted %s, fetch %s: %s", tt.grant, tt.url, msg)
		case tt.want == "" && strings.Contains(msg, "packs grant"):
			t.Errorf("a denial by the request names a grant: %s", msg)
		}
	}
}

// TestUnknownCommandSuggests: a mistyped command gets a "did you mean",
// a word far from every command only the pointer to --help.
func TestUnknownCommandSuggests(t *testing.T) {
	if msg := packsCLI(t, "agnet", "list").mustCode(t, exitUsage).oneLineError(t); !strings.Contains(msg, "did you mean packs agent?") {
		t.Errorf("agnet: %s", msg)
	}
	if msg := packsCLI(t, "lsit").mustCode(t, exitUsage).oneLineError(t); !strings.Contains(msg, "packs list") {
		t.Errorf("lsit: %s", msg)
	}
	if msg := packsCLI(t, "frobnicate").mustCode(t, exitUsage).oneLineError(t); strings.Contains(msg, "did you mean") || !strings.Contains(msg, "packs --help") {
		t.Errorf("frobnicate: %s", msg)
	}
}
