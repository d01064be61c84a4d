package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
)

// runGuests are the runtime's test guests (WAT, checked in with their .wasm).
const runGuests = "../../runtime/testdata/"

// toolPack writes a pack named name whose one tool "t" runs the runtime
// test guest module (a WASI command when fn is "", else an Extism export).
func toolPack(t *testing.T, name, module, fn, toml string) string {
	t.Helper()
	wasm, err := os.ReadFile(runGuests + module)
	if err != nil {
		t.Fatal(err)
	}
	run := `{"wasm": "bin/t.wasm", "abi": "wasi"}`
	if fn != "" {
		run = `{"wasm": "bin/t.wasm", "function": "` + fn + `"}`
	}
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: A pack for the packs run tests.\n---\n# " + name + "\n",
		"tools.json": `[{"name": "t", "description": "A test tool.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}, "run": ` + run + `}]`,
		"bin/t.wasm": string(wasm),
	}
	if toml != "" {
		files["skill.toml"] = toml
	}
	writeFiles(t, dir, files)
	return dir
}

func TestRunExitCodes(t *testing.T) {
	home := t.TempDir()
	install := func(dir, grant string) {
		withHome(t, home, "add", dir, "--grant", grant, "--yes").mustCode(t, 0)
	}
	install(toolPack(t, "echo", "wasi_echo.wasm", "", ""), "none")
	install(toolPack(t, "loop", "wasi_loop.wasm", "", "[limits]\ntimeout_ms = 200\n"), "none")
	install(toolPack(t, "fails", "wasi_fail.wasm", "", ""), "none")
	install(toolPack(t, "spew", "wasi_spew.wasm", "", ""), "none")
	install(toolPack(t, "net", "plugin_http.wasm", "get", "[capabilities]\nnetwork = [\"127.0.0.1:*\"]\n"), "none")

	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"ok", []string{"run", "echo", "t", "--input", `{"text":"hi"}`, "--yes"}, exitOK, `{"text":"hi"}` + "\n"},
		{"default input", []string{"run", "echo", "t", "--yes"}, exitOK, "{}\n"},
		{"no approver", []string{"run", "echo", "t", "--input", `{"text":"hi"}`}, exitDenied, ""},
		{"invalid input", []string{"run", "echo", "t", "--input", `{"text":5}`, "--yes"}, exitInvalid, ""},
		{"not json", []string{"run", "echo", "t", "--input", `{text`, "--yes"}, exitInvalid, ""},
		{"time limit", []string{"run", "loop", "t", "--yes"}, exitLimit, ""},
		{"output limit", []string{"run", "spew", "t", "--yes"}, exitLimit, ""},
		{"tool error", []string{"run", "fails", "t", "--yes"}, exitFailure, ""},
		{"capability not granted", []string{"run", "net", "t", "--input", `{"text":"x"}`, "--yes"}, exitDenied, ""},
		{"unknown tool", []string{"run", "echo", "nope", "--yes"}, exitUsage, ""},
		{"unknown pack", []string{"run", "nope", "t", "--yes"}, exitUsage, ""},
		{"one argument", []string{"run", "echo"}, exitUsage, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := withHome(t, home, c.args...).mustCode(t, c.code)
			if r.stdout != c.stdout {
				t.Fatalf("stdout %q, want %q", r.stdout, c.stdout)
			}
			if c.code != exitOK {
				r.oneLineError(t)
			}
		})
	}
}

func TestRunAudits(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, 0)
	withHome(t, home, "run", "echo", "t", "--input", `{"text":"audited"}`, "--yes").mustCode(t, exitOK)
	withHome(t, home, "run", "echo", "t").mustCode(t, exitDenied)

	a, err := app.Open(context.Background(), app.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var decisions []string
	for e, err := range audit.Entries(context.Background(), a.DB, audit.Filter{Pack: "echo", Kind: audit.KindInvocation}) {
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Decision, Status string }
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatal(err)
		}
		decisions = append(decisions, body.Decision+"/"+body.Status)
	}
	if got, want := strings.Join(decisions, " "), "run_once/ok deny/denied"; got != want {
		t.Fatalf("audited %q, want %q", got, want)
	}
}

func TestRunWorkspace(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "files", "wasi_files.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, 0)

	withHome(t, home, "run", "files", "t", "--yes").mustCode(t, exitOK)
	def := filepath.Join(home, "workspaces", "cli")
	if fi, err := os.Stat(def); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("default workspace %s: %v (want a 0700 folder)", def, err)
	}
	if _, err := os.Stat(filepath.Join(def, "out.txt")); err != nil {
		t.Fatalf("the tool did not write into the default workspace: %v", err)
	}

	ws := t.TempDir()
	withHome(t, home, "run", "files", "t", "--workspace", ws, "--yes").mustCode(t, exitOK)
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("--workspace: out.txt %q, %v", b, err)
	}
	withHome(t, home, "run", "files", "t", "--workspace", filepath.Join(ws, "missing"), "--yes").mustCode(t, exitUsage)
}

func TestRunRefusesModifiedPack(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "files", "wasi_files.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, 0)
	if err := os.WriteFile(filepath.Join(home, "packs", "files", "extra.md"), []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	r := withHome(t, home, "run", "files", "t", "--workspace", ws, "--yes").mustCode(t, exitFailure)
	if !strings.Contains(r.oneLineError(t), "modified") {
		t.Fatalf("the error does not say the pack was modified: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("the modified pack ran: %v", err)
	}
}

func TestRunFolderAndStdin(t *testing.T) {
	home := t.TempDir()
	dir := toolPack(t, "echo", "wasi_echo.wasm", "", "")
	var out, errb strings.Builder
	c := &cli{stdin: bufio.NewReader(strings.NewReader(`{"text":"from stdin"}`)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := c.run(context.Background(), []string{"--home", home, "run", dir, "t", "--input", "-", "--yes"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got, want := out.String(), `{"text":"from stdin"}`+"\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestRunContentTool: a content tool's blocks are printed for people, and
// as JSON with --json; a plain tool's result is JSON either way.
func TestRunContentTool(t *testing.T) {
	home := t.TempDir()
	dir := toolPack(t, "media", "wasi_echo.wasm", "", "")
	writeFiles(t, dir, map[string]string{"tools.json": `[{"name": "t", "description": "A test tool.", "output": "content", "input_schema": {"type": "object"}, "run": {"wasm": "bin/t.wasm", "abi": "wasi"}}]`})
	withHome(t, home, "add", dir, "--grant", "none", "--yes").mustCode(t, 0)
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, 0)
	blocks := `{"content":[{"type":"text","text":"radar for Lyon"},{"type":"image","data":"R0lGODlhAQABAAAAACw=","mimeType":"image/gif"},{"type":"resource","resource":{"uri":"file:///r.csv","mimeType":"text/csv","text":"a,b\n"}}]}`
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"for people", []string{"run", "media", "t", "--input", blocks, "--yes"}, exitOK,
			"radar for Lyon\n[image image/gif, 14 B]\n[resource file:///r.csv, text/csv, 4 B]\n"},
		{"json", []string{"run", "media", "t", "--input", blocks, "--yes", "--json"}, exitOK, blocks + "\n"},
		{"malformed", []string{"run", "media", "t", "--input", `{"content":[{"type":"image","data":"PGh0bWw+","mimeType":"image/gif"}]}`, "--yes"}, exitFailure, ""},
		{"plain tool with --json", []string{"run", "echo", "t", "--input", `{"text":"hi"}`, "--yes", "--json"}, exitOK, `{"text":"hi"}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := withHome(t, home, c.args...).mustCode(t, c.code)
			if r.stdout != c.stdout {
				t.Fatalf("stdout %q, want %q", r.stdout, c.stdout)
			}
			if c.code != exitOK && !strings.Contains(r.stderr, "content block 1") {
				t.Fatalf("stderr %q does not name the malformed block", r.stderr)
			}
		})
	}
}
