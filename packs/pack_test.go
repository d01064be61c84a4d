package packs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

// spot is what a test asserts about a finding: where, how bad, which rule.
// Wording is free to change; these are not.
type spot struct {
	file string // base name of the file, "" for the pack folder
	line int
	sev  Severity
	rule string
}

func (s spot) String() string { return fmt.Sprintf("%s:%d %s %s", s.file, s.line, s.sev, s.rule) }

func spotsOf(dir string, fs []Finding) []spot {
	out := make([]spot, 0, len(fs))
	for _, f := range fs {
		file := ""
		if f.File != dir {
			file = strings.TrimPrefix(filepath.ToSlash(f.File), filepath.ToSlash(dir)+"/")
		}
		out = append(out, spot{file, f.Line, f.Severity, f.Rule})
	}
	return out
}

// writePackFiles writes files (relative path -> content) under dir.
func writePackFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// skillMD is a valid entry doc for a pack named name.
func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: A test pack.\n---\n\n# " + name + "\n\nBody.\n"
}

// TestBadCases loads every folder under testdata/bad and checks that each
// bad input yields exactly its one finding, at the right file and line.
// The bin/tool.wasm files there are copies of testdata/text-tools/bin/text.wasm
// (source: text.wat beside it), since those cases are about the manifest and
// tools.json; wasm-format/bin/fake.wasm is text on purpose.
func TestBadCases(t *testing.T) {
	e, w := SeverityError, SeverityWarning
	cases := map[string]spot{
		"frontmatter-missing":      {"SKILL.md", 1, e, "frontmatter-missing"},
		"frontmatter-unterminated": {"SKILL.md", 1, e, "frontmatter-unterminated"},
		"encoding-binary":          {"SKILL.md", 1, e, "encoding"},
		"encoding-invalid-utf8":    {"SKILL.md", 3, e, "encoding"},
		"encoding-bom":             {"SKILL.md", 1, w, "encoding"},
		"name-mismatch":            {"SKILL.md", 2, e, "name-mismatch"},
		"name-format":              {"SKILL.md", 2, e, "name-format"},
		"name-missing":             {"SKILL.md", 1, e, "name-missing"},
		"description-length":       {"SKILL.md", 3, e, "description-length"},
		"description-missing":      {"SKILL.md", 1, e, "description-missing"},
		"yaml-syntax":              {"SKILL.md", 4, e, "yaml-syntax"},
		"yaml-lenient":             {"SKILL.md", 3, w, "yaml-lenient"},
		"frontmatter-unknown-key":  {"SKILL.md", 4, w, "unknown-key"},
		"frontmatter-type":         {"SKILL.md", 2, e, "frontmatter-type"},
		"duplicate-key":            {"SKILL.md", 4, e, "duplicate-key"},
		"field-type":               {"SKILL.md", 4, e, "field-type"},
		"metadata-type":            {"SKILL.md", 6, w, "metadata-type"},
		"compatibility-length":     {"SKILL.md", 4, e, "compatibility-length"},
		"body-empty":               {"SKILL.md", 4, w, "body-empty"},
		"entry-missing":            {"", 0, e, "entry-missing"},
		"toml-syntax":              {"skill.toml", 3, e, "toml-syntax"},
		"toml-unknown-key":         {"skill.toml", 4, e, "toml-unknown-key"},
		"toml-type":                {"skill.toml", 5, e, "toml-type"},
		"capability-pattern":       {"skill.toml", 4, e, "capability-pattern"},
		"capability-invalid":       {"skill.toml", 3, e, "capability-invalid"},
		"secrets-true":             {"skill.toml", 2, e, "capability-invalid"},
		"manifest-version":         {"skill.toml", 3, e, "manifest-version"},
		"api-version":              {"skill.toml", 3, e, "api-version"},
		"limits":                   {"skill.toml", 3, e, "limits"},
		"manifest-unsupported":     {"skill.toml", 3, e, "manifest-unsupported"},
		"json-syntax":              {"tools.json", 3, e, "json-syntax"},
		"json-duplicate-key":       {"tools.json", 4, e, "json-duplicate-key"},
		"tools-empty":              {"tools.json", 1, w, "tools-empty"},
		"schema-compile":           {"tools.json", 9, e, "schema-compile"},
		"schema-type":              {"tools.json", 5, e, "schema-type"},
		"schema-ref":               {"tools.json", 5, e, "schema-ref"},
		"tool-duplicate":           {"tools.json", 18, e, "tool-duplicate"},
		"tool-name":                {"tools.json", 3, e, "tool-name"},
		"tool-name-length":         {"tools.json", 3, e, "tool-name"},
		"tool-field-missing":       {"tools.json", 2, e, "tool-field-missing"},
		"tool-description-length":  {"tools.json", 4, w, "tool-description-length"},
		"wasm-escape":              {"tools.json", 14, e, "path-escape"},
		"wasm-absolute":            {"tools.json", 14, e, "path-escape"},
		"file-missing":             {"tools.json", 14, e, "file-missing"},
		"wasm-format":              {"tools.json", 14, e, "wasm-format"},
		"run-invalid":              {"tools.json", 13, e, "run-invalid"},
		"run-abi":                  {"tools.json", 15, e, "run-invalid"},
		"exec-placeholder":         {"tools.json", 20, e, "exec-placeholder"},
		"exec-grant":               {"tools.json", 18, w, "exec-grant"},
		"exec-command":             {"tools.json", 18, e, "exec-command"},
		"exec-blocked":             {"tools.json", 18, e, "exec-blocked"},
	}
	entries, err := os.ReadDir("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, d := range entries {
		onDisk = append(onDisk, d.Name())
	}
	for name := range cases {
		if !slices.Contains(onDisk, name) {
			t.Errorf("case %s has no folder under testdata/bad", name)
		}
	}
	for _, name := range onDisk {
		want, ok := cases[name]
		if !ok {
			t.Errorf("testdata/bad/%s has no expected finding in this table", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "bad", name)
			got := spotsOf(dir, Validate(dir, LoadOptions{}))
			if len(got) != 1 || got[0] != want {
				t.Errorf("findings = %v, want exactly [%v]", got, want)
			}
			p, err := Load(dir, LoadOptions{})
			if want.sev == SeverityError {
				var le *LoadError
				if !errors.As(err, &le) || !errors.Is(err, ErrInvalidPack) || p != nil {
					t.Fatalf("Load = %v, %v; want nil and a *LoadError wrapping ErrInvalidPack", p, err)
				}
				if len(le.Findings) != 1 || le.Findings[0].Rule != want.rule {
					t.Errorf("LoadError findings = %v", le.Findings)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v (a warning must not stop a pack)", err)
			}
			if gotW := spotsOf(dir, p.Findings); !slices.Equal(gotW, []spot{want}) {
				t.Errorf("Pack.Findings = %v, want [%v]", gotW, want)
			}
		})
	}
}

// TestGeneratedBadCases covers inputs that are awkward to check in: huge
// files and symlinks.
func TestGeneratedBadCases(t *testing.T) {
	e, w := SeverityError, SeverityWarning
	outside := t.TempDir()
	writePackFiles(t, outside, map[string]string{
		"SKILL.md":   skillMD("elsewhere"),
		"x.wasm":     "\x00asm\x01\x00\x00\x00",
		"tools.json": `[]`,
	})
	bigBody := strings.Repeat("A line of Markdown body text that goes on.\n", 3<<20/43)
	cases := []struct {
		name  string
		files map[string]string
		links map[string]string // relative path -> symlink target
		want  []spot
	}{{
		name:  "multi-megabyte",
		files: map[string]string{"SKILL.md": skillMD("multi-megabyte") + bigBody},
		want:  []spot{{"SKILL.md", 0, w, "size"}},
	}, {
		name:  "frontmatter-size",
		files: map[string]string{"SKILL.md": "---\nname: frontmatter-size\ndescription: x\n" + strings.Repeat("# padding comment line\n", 4000) + "---\n"},
		want:  []spot{{"SKILL.md", 1, e, "frontmatter-size"}},
	}, {
		name:  "entry-symlink-escape",
		links: map[string]string{"SKILL.md": filepath.Join(outside, "SKILL.md")},
		want:  []spot{{"SKILL.md", 0, e, "path-escape"}},
	}, {
		name:  "tools-symlink-escape",
		files: map[string]string{"SKILL.md": skillMD("tools-symlink-escape")},
		links: map[string]string{"tools.json": filepath.Join(outside, "tools.json")},
		want:  []spot{{"tools.json", 0, e, "path-escape"}},
	}, {
		name: "wasm-symlink-escape",
		files: map[string]string{
			"SKILL.md":   skillMD("wasm-symlink-escape"),
			"tools.json": `[{"name":"t","description":"d","input_schema":{"type":"object"},"run":{"wasm":"bin/x.wasm","function":"f"}}]`,
		},
		links: map[string]string{"bin": outside},
		want:  []spot{{"tools.json", 1, e, "path-escape"}},
	}, {
		name: "wasm-symlink-inside",
		files: map[string]string{
			"SKILL.md":    skillMD("wasm-symlink-inside"),
			"real/x.wasm": "\x00asm\x01\x00\x00\x00",
			"tools.json":  `[{"name":"t","description":"d","input_schema":{"type":"object"},"run":{"wasm":"bin/x.wasm","function":"f"}}]`,
		},
		links: map[string]string{"bin": "real"},
		want:  []spot{},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writePackFiles(t, dir, tc.files)
			for rel, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(dir, rel)); err != nil {
					t.Fatal(err)
				}
			}
			got := spotsOf(dir, Validate(dir, LoadOptions{}))
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConformanceFixture checks spec 002 §12's fixture: it validates clean,
// its body starts where Load says, and the markers of each step are there.
func TestConformanceFixture(t *testing.T) {
	dir := filepath.Join("testdata", "skills-system-validation")
	if fs := Validate(dir, LoadOptions{}); len(fs) != 0 {
		t.Fatalf("the fixture must validate clean, got %v", fs)
	}
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "skills-system-validation" || p.EntryDoc != "SKILL.md" || !filepath.IsAbs(p.Dir) {
		t.Errorf("pack = %q %q %q", p.Name, p.EntryDoc, p.Dir)
	}
	if p.Manifest != nil || p.Tools != nil || p.HasTools() {
		t.Errorf("the fixture has no skill.toml or tools.json, got %v %v", p.Manifest, p.Tools)
	}
	if got, want := p.Frontmatter.AllowedTools, []string{"Read", "Bash(scripts/echo.sh)"}; !slices.Equal(got, want) {
		t.Errorf("allowed-tools = %q, want %q", got, want)
	}
	if got := p.Frontmatter.Metadata["spec"]; got != "002" {
		t.Errorf("metadata spec = %q", got)
	}
	doc, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(doc[p.Body:])
	if !strings.HasPrefix(body, "\n# Skills system validation") {
		t.Errorf("body starts with %q", body[:min(40, len(body))])
	}
	if strings.Contains(body, "description:") {
		t.Error("the body offset leaves frontmatter in the body")
	}
	markers := map[string]string{
		"SKILL.md":                "SKILLS-SYSTEM-VALIDATION-BODY-7f3a",
		"references/REFERENCE.md": "SKILLS-SYSTEM-VALIDATION-REFERENCE-2c9e",
		"assets/fixture.json":     "SKILLS-SYSTEM-VALIDATION-ASSET-91d0",
		"scripts/echo.sh":         "SKILLS-SYSTEM-VALIDATION-SCRIPT-5b11",
	}
	for rel, marker := range markers {
		full, err := SafeJoin(p.Dir, rel)
		if err != nil {
			t.Fatalf("SafeJoin(%s): %v", rel, err)
		}
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), marker) {
			t.Errorf("%s lacks marker %s", rel, marker)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "scripts", "echo.sh"))
	if err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/echo.sh must be executable: %v %v", fi.Mode(), err)
	}
	for _, bad := range []string{"../../etc/passwd", "/etc/passwd", "references/../../SKILL.md"} {
		if _, err := SafeJoin(p.Dir, bad); !errors.Is(err, ErrPathEscape) {
			t.Errorf("step 5: SafeJoin(%q) = %v, want ErrPathEscape", bad, err)
		}
	}
}

// TestLoadTypicalPack checks what Load makes of a pack with a manifest and
// three tools, one of each run form.
func TestLoadTypicalPack(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "text-tools"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Findings) != 0 {
		t.Errorf("findings = %v", p.Findings)
	}
	m := p.Manifest
	if m == nil || m.ID != "test.text-tools" || m.Version != "0.2.0" || m.APIVersion != "1.0" || m.Provides.Executable == nil || !*m.Provides.Executable {
		t.Fatalf("manifest = %+v", m)
	}
	want := capability.Request{
		TerminalExec:   capability.ExecRequest{Commands: []string{"grep"}, Blocked: []string{"rm"}},
		FilesystemRead: []string{"./"},
		Network:        []string{"api.example.com", "*.example.org"},
		EnvRead:        []string{"LANG", "LC_*"},
		Limits:         capability.Limits{MemoryPages: 32 * 16, Timeout: 5 * time.Second, OutputBytes: 65536},
	}
	got := p.Request()
	// Only the fields: the request also keeps its compiled patterns.
	fields := capability.Request{TerminalExec: got.TerminalExec, FilesystemRead: got.FilesystemRead, FilesystemWrite: got.FilesystemWrite,
		Network: got.Network, EnvRead: got.EnvRead, SecretsAccess: got.SecretsAccess, Limits: got.Limits}
	if fmt.Sprint(fields) != fmt.Sprint(want) {
		t.Errorf("request = %+v\nwant      %+v", got, want)
	}
	if !slices.Equal(got.Names(), []capability.Name{capability.TerminalExec, capability.FilesystemRead, capability.Network, capability.EnvRead}) {
		t.Errorf("names = %v", got.Names())
	}
	runs := map[string]Run{
		"upper": {Wasm: "bin/text.wasm", Function: "upper", ABI: ABIExtism},
		"count": {Wasm: "bin/text.wasm", ABI: ABIWASI},
		"grep":  {ABI: ABIExec, Exec: []string{"grep", "-rnF", "--", "{{pattern}}", "{{path}}"}},
	}
	if len(p.Tools) != 3 || !p.HasTools() {
		t.Fatalf("tools = %v", p.Tools)
	}
	for name, want := range runs {
		tool, ok := p.Tool(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		if fmt.Sprint(tool.Run) != fmt.Sprint(want) {
			t.Errorf("%s run = %+v, want %+v", name, tool.Run, want)
		}
	}
	if _, ok := p.Tool("missing"); ok {
		t.Error("Tool(missing) found something")
	}
	if (&Pack{}).Request().Has(capability.Network) {
		t.Error("a pack without a manifest must ask for nothing")
	}
}

func TestLoadMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	fs := Validate(dir, LoadOptions{})
	if got := spotsOf(dir, fs); !slices.Equal(got, []spot{{"", 0, SeverityError, "pack-missing"}}) {
		t.Errorf("findings = %v", got)
	}
	f := filepath.Join(t.TempDir(), "file")
	writePackFiles(t, filepath.Dir(f), map[string]string{"file": "x"})
	if _, err := Load(f, LoadOptions{}); !errors.Is(err, ErrInvalidPack) {
		t.Errorf("Load(file) = %v", err)
	}
}

// TestEntryDocResolution walks spec 000 §4.2's order.
func TestEntryDocResolution(t *testing.T) {
	cases := []struct {
		name       string
		files      []string
		configured string
		want       string
		wantRules  []string
	}{
		{"configured-wins", []string{"GUIDE.md", "SKILL.md"}, "GUIDE.md", "GUIDE.md", nil},
		{"configured-absent-falls-back", []string{"SKILL.md"}, "GUIDE.md", "SKILL.md", []string{"entry-missing"}},
		{"skill-before-readme", []string{"README.md", "SKILL.md", "a.md"}, "", "SKILL.md", nil},
		{"readme-before-others", []string{"README.md", "a.md"}, "", "README.md", nil},
		{"first-md-lexicographic", []string{"zeta.md", "beta.md", "alpha.txt"}, "", "beta.md", nil},
		{"configured-escape", []string{"SKILL.md"}, "../x.md", "", []string{"path-escape"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pack")
			files := map[string]string{}
			for _, f := range tc.files {
				files[f] = skillMD("pack")
			}
			writePackFiles(t, dir, files)
			p, fs := load(dir, LoadOptions{EntryDoc: tc.configured})
			var rules []string
			for _, f := range fs {
				rules = append(rules, f.Rule)
			}
			if !slices.Equal(rules, tc.wantRules) {
				t.Errorf("rules = %v, want %v", rules, tc.wantRules)
			}
			if p.EntryDoc != tc.want {
				t.Errorf("entry doc = %q, want %q", p.EntryDoc, tc.want)
			}
		})
	}
}

func TestLoadErrorMessage(t *testing.T) {
	le := &LoadError{Findings: []Finding{
		{File: "p/SKILL.md", Line: 2, Severity: SeverityError, Rule: "name-format", Message: "bad"},
		{File: "p/SKILL.md", Line: 5, Severity: SeverityWarning, Rule: "unknown-key", Message: "meh"},
	}}
	msg := le.Error()
	if !strings.Contains(msg, "p/SKILL.md:2: error: name-format: bad") || strings.Contains(msg, "unknown-key") {
		t.Errorf("LoadError.Error() = %q: want the errors listed and the warnings left out", msg)
	}
	if !errors.Is(le, ErrInvalidPack) {
		t.Error("LoadError must wrap ErrInvalidPack")
	}
}

func TestFindingString(t *testing.T) {
	cases := []struct {
		f    Finding
		want string
	}{
		{Finding{File: "a/SKILL.md", Line: 3, Severity: SeverityError, Rule: "name-format", Message: "m"}, "a/SKILL.md:3: error: name-format: m"},
		{Finding{File: "a", Severity: SeverityWarning, Rule: "size", Message: "m"}, "a: warning: size: m"},
	}
	for _, tc := range cases {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// TestSafeJoin pairs what is allowed with what is refused.
func TestSafeJoin(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writePackFiles(t, root, map[string]string{"docs/a.md": "a", "real/b.md": "b"})
	writePackFiles(t, outside, map[string]string{"secret": "s"})
	links := map[string]string{
		"in-link":      "real",
		"out-link":     outside,
		"out-file":     filepath.Join(outside, "secret"),
		"dangling-out": filepath.Join(outside, "later"),
		"dangling-in":  "real/later",
		"docs/up":      "..",
		"docs/up-up":   "../..",
		"loop":         "loop",
	}
	for rel, target := range links {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	allowed := map[string]string{
		"docs/a.md":         "docs/a.md",
		"docs/../docs/a.md": "",
		"in-link/b.md":      "real/b.md",
		"docs/up/real/b.md": "real/b.md",
		"not-yet/here.md":   "not-yet/here.md",
		"dangling-in":       "real/later",
		".":                 ".",
		"./docs//a.md":      "docs/a.md",
	}
	for rel, want := range allowed {
		got, err := SafeJoin(root, rel)
		if want == "" {
			if !errors.Is(err, ErrPathEscape) {
				t.Errorf("SafeJoin(%q) = %q, %v; want ErrPathEscape for a \"..\" element", rel, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("SafeJoin(%q): %v", rel, err)
			continue
		}
		if w := filepath.Join(realRoot, want); got != w {
			t.Errorf("SafeJoin(%q) = %q, want %q", rel, got, w)
		}
	}
	for _, rel := range []string{
		"../x", "/etc/passwd", "docs/../../x", "a\x00b", "out-link/secret", "out-file",
		"dangling-out", "docs/up-up/x", "loop", `..\x`,
	} {
		if got, err := SafeJoin(root, rel); !errors.Is(err, ErrPathEscape) {
			t.Errorf("SafeJoin(%q) = %q, %v; want ErrPathEscape", rel, got, err)
		}
	}
	if _, err := SafeJoin(filepath.Join(root, "missing-root"), "a"); err == nil || errors.Is(err, ErrPathEscape) {
		t.Errorf("a missing root is an I/O error, not an escape: %v", err)
	}
}
