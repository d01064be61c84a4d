package author

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

const goodTests = `cases:
  - name: greets
    tool: greet
    input: {name: Ada}
    grant: [network]
    fakes:
      http:
        - url: https://api.example.com/v1?q=1
          body: '{"ok": true}'
          address: 1.2.3.4
      files: {notes/a.txt: hi}
      commands:
        - {command: git, stdout: "main\n", exit_code: 2}
    expect:
      output: {greeting: "Hello, Ada!"}
      exercises:
        - {capability: network, resource: "https://api.example.com/*", allowed: true}
      exhaustive: true
  - tool: greet
    expect:
      error: invalid_input
      error_contains: name
`

func TestParseTests(t *testing.T) {
	cases, fs := ParseTests("t.yaml", []byte(goodTests))
	if len(fs) != 0 || len(cases) != 2 {
		t.Fatalf("got %d cases, findings %v; want 2 and none", len(cases), fs)
	}
	c := cases[0]
	if c.Name != "greets" || c.Tool != "greet" || string(c.Input) != `{"name":"Ada"}` || c.Line != 2 {
		t.Fatalf("case 0 = %+v", c)
	}
	if len(c.Grant) != 1 || c.Grant[0] != capability.Network {
		t.Fatalf("grant = %v", c.Grant)
	}
	h := c.Fakes.HTTP[0]
	if h.Status != 200 || h.Address.String() != "1.2.3.4" || h.Body != `{"ok": true}` {
		t.Fatalf("fake http = %+v", h)
	}
	if m := c.Fakes.Commands[0]; m.Command != "git" || m.Stdout != "main\n" || m.ExitCode != 2 {
		t.Fatalf("fake command = %+v", m)
	}
	var out map[string]string
	if err := json.Unmarshal(c.Expect.Output, &out); err != nil || out["greeting"] != "Hello, Ada!" {
		t.Fatalf("output = %s", c.Expect.Output)
	}
	if !c.Expect.Exhaustive || len(c.Expect.Exercises) != 1 || !*c.Expect.Exercises[0].Allowed {
		t.Fatalf("expect = %+v", c.Expect)
	}
	d := cases[1]
	if d.Name != "case 2" || string(d.Input) != "{}" || d.Grant != nil || d.Expect.Error != capability.StatusInvalidInput {
		t.Fatalf("case 1 = %+v", d)
	}
}

func TestParseTestsRefuses(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"unknown key", "cases:\n  - tool: x\n    inptu: {}\n", "inptu"},
		{"no tool", "cases:\n  - name: a\n", "names no tool"},
		{"no cases", "cases: []\n", "no cases"},
		{"empty", "", "empty"},
		{"bad status", "cases:\n  - tool: x\n    expect: {error: boom}\n", "boom"},
		{"ok is not an error", "cases:\n  - tool: x\n    expect: {error: ok}\n", "ok"},
		{"error and output", "cases:\n  - tool: x\n    expect: {error: denied, output: 1}\n", "one way"},
		{"bad capability", "cases:\n  - tool: x\n    grant: [netwrok]\n", "netwrok"},
		{"bad exercise", "cases:\n  - tool: x\n    expect: {exercises: [{capability: fs}]}\n", "fs"},
		{"file escapes", "cases:\n  - tool: x\n    fakes: {files: {../x: y}}\n", "../x"},
		{"absolute file", "cases:\n  - tool: x\n    fakes: {files: {/etc/passwd: y}}\n", "/etc/passwd"},
		{"command path", "cases:\n  - tool: x\n    fakes: {commands: [{command: /bin/sh}]}\n", "bare name"},
		{"exit code", "cases:\n  - tool: x\n    fakes: {commands: [{command: git, exit_code: 300}]}\n", "300"},
		{"url", "cases:\n  - tool: x\n    fakes: {http: [{url: 'file:///etc'}]}\n", "file:///etc"},
		{"address", "cases:\n  - tool: x\n    fakes: {http: [{url: 'http://a', address: nope}]}\n", "nope"},
		{"duplicate names", "cases:\n  - {name: a, tool: x}\n  - {name: a, tool: x}\n", "two cases"},
		{"non-string keys", "cases:\n  - tool: x\n    input: {1: a}\n", "JSON"},
		{"syntax", "cases: [\n", "test-syntax"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, fs := ParseTests("t.yaml", []byte(tc.doc))
			if got != nil || !packs.HasErrors(fs) {
				t.Fatalf("cases = %v, findings = %v; want no case and an error", got, fs)
			}
			var all []string
			for _, f := range fs {
				all = append(all, f.String())
			}
			if s := strings.Join(all, "\n"); !strings.Contains(s, tc.want) {
				t.Fatalf("findings %q do not mention %q", s, tc.want)
			}
		})
	}
}

func TestLoadTests(t *testing.T) {
	dir := t.TempDir()
	if cases, fs := LoadTests(dir); cases != nil || fs != nil {
		t.Fatalf("a pack without tests/: %v %v", cases, fs)
	}
	os.Mkdir(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "b.yaml"), []byte(goodTests), 0o644)
	os.WriteFile(filepath.Join(dir, "tests", "a.yml"), []byte("cases:\n  - {name: first, tool: t}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tests", "notes.md"), []byte("not a test"), 0o644)
	// Spec 001's recipe tests have their own format and runner.
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(packs.RecipeTestFile)), []byte("test_cases:\n  - name: x\n"), 0o644)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "tests", "c.yaml")); err != nil {
		t.Fatal(err)
	}
	cases, fs := LoadTests(dir)
	if len(cases) != 3 || cases[0].Name != "first" {
		t.Fatalf("cases = %v", cases)
	}
	if len(fs) != 1 || fs[0].Rule != "path-escape" {
		t.Fatalf("findings = %v, want the symlink refused", fs)
	}
}

// FuzzParseTests: the test-file parser never panics, and every case it
// returns is well formed.
func FuzzParseTests(f *testing.F) {
	f.Add([]byte(goodTests))
	f.Add([]byte("cases:\n  - tool: x\n    input: [1, {a: b}]\n"))
	f.Add([]byte("cases: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		cases, fs := ParseTests("t.yaml", doc)
		if len(cases) > 0 && packs.HasErrors(fs) {
			t.Fatal("cases returned alongside errors")
		}
		for _, c := range cases {
			if c.Tool == "" || !json.Valid(c.Input) || (c.Expect.Output != nil && !json.Valid(c.Expect.Output)) {
				t.Fatalf("malformed case %+v", c)
			}
			for p := range c.Fakes.Files {
				if !filepath.IsLocal(p) {
					t.Fatalf("file %q escapes", p)
				}
			}
		}
	})
}
