package packs

import (
	"bufio"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// parseFM runs the streaming frontmatter reader on doc for a folder "pack".
func parseFM(doc string) (Frontmatter, int64, []Finding) {
	rep := &reporter{pack: "pack"}
	fm, body, _ := readFrontmatter(bufio.NewReaderSize(strings.NewReader(doc), readerBytes), "SKILL.md", "pack", rep)
	return fm, body, rep.list
}

func rulesOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Severity)+":"+f.Rule)
	}
	return out
}

func TestFrontmatterFields(t *testing.T) {
	doc := "---\n" +
		"name: pack\n" +
		"description: >\n  Folded text\n  over two lines.\n" +
		"license: MIT\n" +
		"compatibility: linux\n" +
		"metadata:\n  author: me\n  tier: gold\n" +
		"allowed-tools:\n  - Read\n  - Bash(git:*)\n" +
		"---\n# Title\n"
	fm, body, fs := parseFM(doc)
	if len(fs) != 0 {
		t.Fatalf("findings = %v", fs)
	}
	if fm.Name != "pack" || fm.Description != "Folded text over two lines.\n" || fm.License != "MIT" || fm.Compatibility != "linux" {
		t.Errorf("fm = %+v", fm)
	}
	if fm.Metadata["author"] != "me" || fm.Metadata["tier"] != "gold" || len(fm.Metadata) != 2 {
		t.Errorf("metadata = %v", fm.Metadata)
	}
	if !slices.Equal(fm.AllowedTools, []string{"Read", "Bash(git:*)"}) {
		t.Errorf("allowed-tools = %q", fm.AllowedTools)
	}
	if got := doc[body:]; got != "# Title\n" {
		t.Errorf("body = %q", got)
	}
}

func TestFrontmatterAllowedToolsString(t *testing.T) {
	fm, _, fs := parseFM("---\nname: pack\ndescription: d\nallowed-tools: Read  Write\tBash\n---\nbody\n")
	if len(fs) != 0 || !slices.Equal(fm.AllowedTools, []string{"Read", "Write", "Bash"}) {
		t.Errorf("allowed-tools = %q, findings %v", fm.AllowedTools, fs)
	}
}

// TestFrontmatterLengthsInRunes: limits count characters, not bytes.
func TestFrontmatterLengthsInRunes(t *testing.T) {
	cases := []struct {
		desc string
		want []string
	}{
		{strings.Repeat("é", 1024), nil}, // 2048 bytes, 1024 characters
		{strings.Repeat("日", 1024), nil}, // 3072 bytes
		{strings.Repeat("é", 1025), []string{"error:description-length"}},
		{strings.Repeat("x", 1024), nil},
	}
	for _, tc := range cases {
		_, _, fs := parseFM("---\nname: pack\ndescription: " + tc.desc + "\n---\nbody\n")
		if got := rulesOf(fs); !slices.Equal(got, tc.want) {
			t.Errorf("description of %d bytes: %v, want %v", len(tc.desc), got, tc.want)
		}
	}
	_, _, fs := parseFM("---\nname: pack\ndescription: d\ncompatibility: " + strings.Repeat("ü", 500) + "\n---\nbody\n")
	if len(fs) != 0 {
		t.Errorf("500 characters of compatibility must pass: %v", fs)
	}
}

func TestCheckName(t *testing.T) {
	good := []string{"a", "pdf", "pdf-tools", "a1-b2-c3", strings.Repeat("a", 64), "0"}
	bad := []string{"", strings.Repeat("a", 65), "-a", "a-", "a--b", "A", "a_b", "a.b", "a b", "é", "ａ"}
	for _, n := range good {
		if err := checkName(n); err != nil {
			t.Errorf("checkName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		if err := checkName(n); err == nil {
			t.Errorf("checkName(%q) = nil, want an error", n)
		}
	}
}

// TestFrontmatterFindings covers the frontmatter rules one input at a time;
// each line of the table is a rule and the line it must point at.
func TestFrontmatterFindings(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // severity:rule@line
	}{
		{"crlf", "---\r\nname: pack\r\ndescription: d\r\n---\r\nbody\r\n", nil},
		{"fence-trailing-space", "---  \nname: pack\ndescription: d\n---\t\nbody\n", nil},
		{"empty-file", "", []string{"error:frontmatter-missing@1"}},
		{"only-open-fence", "---", []string{"error:frontmatter-unterminated@1"}},
		{"empty-frontmatter", "---\n---\nbody\n", []string{"error:name-missing@1", "error:description-missing@1"}},
		{"null-name", "---\nname:\ndescription: d\n---\nbody\n", []string{"error:name-missing@2"}},
		{"number-name", "---\nname: 42\ndescription: d\n---\nbody\n", []string{"warning:field-type@2", "error:name-mismatch@2"}},
		{"list-description", "---\nname: pack\ndescription: [a, b]\n---\nbody\n", []string{"error:field-type@3"}},
		{"map-metadata-value", "---\nname: pack\ndescription: d\nmetadata:\n  a: {b: c}\n---\nbody\n", []string{"warning:metadata-type@5"}},
		{"metadata-not-map", "---\nname: pack\ndescription: d\nmetadata: text\n---\nbody\n", []string{"error:field-type@4"}},
		{"allowed-tools-map", "---\nname: pack\ndescription: d\nallowed-tools: {a: b}\n---\nbody\n", []string{"error:field-type@4"}},
		{"allowed-tools-nested", "---\nname: pack\ndescription: d\nallowed-tools:\n  - [a]\n---\nbody\n", []string{"error:field-type@5"}},
		{"lenient-two-lines", "---\nname: pack\ndescription: a: b\nlicense: see: LICENSE\n---\nbody\n", []string{"warning:yaml-lenient@3", "warning:yaml-lenient@4"}},
		{"lenient-nested", "---\nname: pack\ndescription: d\nmetadata:\n  note: x: y\n---\nbody\n", []string{"warning:yaml-lenient@5"}},
		{"not-lenient", "---\nname: pack\ndescription: d\n  bad: indent\n---\nbody\n", []string{"error:yaml-syntax@4"}},
		{"tab-indent", "---\nname: pack\ndescription: d\nmetadata:\n\tx: y\n---\nbody\n", []string{"error:yaml-syntax@5"}},
		{"alias", "---\nname: &n pack\ndescription: *n\n---\nbody\n", nil},
		{"binary-body", "---\nname: pack\ndescription: d\n---\nbody\x00\x01\n", []string{"error:encoding@5"}},
		{"unknown-keys", "---\nname: pack\ntags: 1\ndescription: d\nauthor: me\n---\nbody\n", []string{"warning:unknown-key@3", "warning:unknown-key@5"}},
		{"scalar-frontmatter", "---\njust text\n---\nbody\n", []string{"error:frontmatter-type@2"}},
		// Claude Code's keys are recognized, not unknown (packs lint explains them).
		{"claude-code-keys", "---\nname: pack\ndescription: d\ndisable-model-invocation: true\nuser-invocable: false\nargument-hint: [file]\nmodel: haiku\neffort: low\ncontext: fork\nagent: Explore\nhooks:\n  Stop: []\npaths: src/**\nshell: bash\nwhen_to_use: x\nversion: 1.0\narguments: [a]\n---\nbody\n", nil},
		{"claude-code-allowed-tools", "---\nname: pack\ndescription: d\nallowed-tools: Read, Grep, Bash(git log *)\n---\nbody\n", nil},
		{"whitespace-body", "---\nname: pack\ndescription: d\n---\n\n  \n", []string{"warning:body-empty@4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, fs := parseFM(tc.doc)
			var got []string
			for _, f := range fs {
				got = append(got, string(f.Severity)+":"+f.Rule+"@"+strconv.Itoa(f.Line))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v\n%v", got, tc.want, fs)
			}
		})
	}
}

// tripwire is a reader that fails once more than limit bytes are read. A
// frontmatter reader that slurped the file would trip it.
type tripwire struct {
	r     io.Reader
	limit int
	read  int
}

var errTripped = errors.New("read past the frontmatter")

func (t *tripwire) Read(p []byte) (int, error) {
	if t.read >= t.limit {
		return 0, errTripped
	}
	if len(p) > t.limit-t.read {
		p = p[:t.limit-t.read]
	}
	n, err := t.r.Read(p)
	t.read += n
	return n, err
}

// TestFrontmatterStreams proves that only the head of a large doc is read.
func TestFrontmatterStreams(t *testing.T) {
	head := "---\nname: pack\ndescription: d\n---\n"
	doc := head + strings.Repeat("body text\n", 1<<20) // 10 MiB
	tw := &tripwire{r: strings.NewReader(doc), limit: 16 << 10}
	rep := &reporter{}
	fm, body, ok := readFrontmatter(bufio.NewReaderSize(tw, readerBytes), "SKILL.md", "pack", rep)
	if !ok || fm.Name != "pack" || body != int64(len(head)) || len(rep.list) != 0 {
		t.Fatalf("readFrontmatter = %+v, %d, %v, %v", fm, body, ok, rep.list)
	}
	if tw.read > 16<<10 {
		t.Errorf("read %d bytes of a 10 MiB doc", tw.read)
	}
}

func TestQuoteColonValues(t *testing.T) {
	in := "name: x\ndescription: Use when: asked\n  note: a: b\r\nquoted: 'a: b'\nblock: |\n  a: b\n- item: x: y\n"
	out, lines := quoteColonValues([]byte(in))
	if !slices.Equal(lines, []int{2, 3}) {
		t.Errorf("changed lines = %v, want [2 3]", lines)
	}
	if !strings.Contains(string(out), "description: 'Use when: asked'\n") || !strings.Contains(string(out), "  note: 'a: b'\r\n") {
		t.Errorf("out = %q", out)
	}
	if !strings.Contains(string(out), "quoted: 'a: b'\n") || !strings.Contains(string(out), "- item: x: y\n") {
		t.Errorf("quoted and list lines must stay as they are: %q", out)
	}
}

func TestSuggestName(t *testing.T) {
	cases := map[string]string{"My Pack": "my-pack", "PDF_tools!": "pdf-tools", "---": "my-pack", "ok": "ok"}
	for in, want := range cases {
		if got := suggestName(in); got != want {
			t.Errorf("suggestName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestForeignKeys records each Claude Code key with its line and what packs
// does with it.
func TestForeignKeys(t *testing.T) {
	fm, _, fs := parseFM("---\nname: pack\ndescription: d\nmodel: haiku\nhooks:\n  Stop: []\n---\nbody\n")
	if len(fs) != 0 {
		t.Fatalf("findings %v", fs)
	}
	if len(fm.Foreign) != 2 || fm.Foreign[0].Key != "model" || fm.Foreign[0].Line != 4 || fm.Foreign[1].Key != "hooks" || fm.Foreign[1].Line != 5 ||
		fm.Foreign[0].Tool != "Claude Code" || !strings.Contains(fm.Foreign[1].Does, "never runs") {
		t.Errorf("foreign = %+v", fm.Foreign)
	}
}

func TestSplitAllowedTools(t *testing.T) {
	cases := map[string][]string{
		"Read Write\tBash":                        {"Read", "Write", "Bash"},
		"Read, Grep, Bash(git log *)":             {"Read", "Grep", "Bash(git log *)"},
		"Bash(git:*),WebFetch(domain:x.com)":      {"Bash(git:*)", "WebFetch(domain:x.com)"},
		"  ":                                      nil,
		"Bash(a (b) c) Read":                      {"Bash(a (b) c)", "Read"},
		"Bash(unclosed Read":                      {"Bash(unclosed Read"},
		"Bash(npm run test:*), Edit(src/**/*.ts)": {"Bash(npm run test:*)", "Edit(src/**/*.ts)"},
	}
	for in, want := range cases {
		if got := splitAllowedTools(in); !slices.Equal(got, want) {
			t.Errorf("splitAllowedTools(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMapAllowedTools maps Claude Code's allowed-tools entries to packs'
// capability requests, and says why where it cannot.
func TestMapAllowedTools(t *testing.T) {
	cases := []struct {
		entry string
		want  string // the request as "cap resource", "default", or "unmapped"
		wider bool
	}{
		{"Bash(git:*)", "terminal_exec git", false},
		{"Bash(git)", "terminal_exec git", false},
		{"Bash(git log *)", "terminal_exec git", true},
		{"Bash(npm run test:*)", "terminal_exec npm", true},
		{"Bash(/usr/bin/jq:*)", "terminal_exec /usr/bin/jq", false},
		{"Bash", "unmapped", false},
		{"Bash(*)", "unmapped", false},
		{"Bash(scripts/echo.sh)", "unmapped", false},
		{"Bash(rm -rf /)", "terminal_exec rm", true},
		{"Read", "default", false},
		{"Grep", "default", false},
		{"Write", "default", false},
		{"Read(~/.aws/config)", "filesystem_read ~/.aws/config", false},
		{"Read(//etc/hosts)", "filesystem_read /etc/hosts", false},
		{"Edit(docs/*.md)", "filesystem_write ./docs/*.md", false},
		{"Read(../secret)", "unmapped", false},
		{"Edit(src/**/*.ts)", "unmapped", false},
		{"WebFetch(domain:docs.rs)", "network docs.rs", false},
		{"WebFetch", "unmapped", false},
		{"WebFetch(domain:http://x)", "unmapped", false},
		{"WebSearch", "unmapped", false},
		{"Task", "unmapped", false},
		{"mcp__github__create_issue", "unmapped", false},
		{"Teleport", "unmapped", false},
		{"Bash(git", "unmapped", false},
	}
	for _, tc := range cases {
		m := mapAllowedTools([]string{tc.entry})[0]
		got := "unmapped"
		switch {
		case m.Default:
			got = "default"
		case m.Unmapped == "":
			n := m.Request.Names()
			if len(n) != 1 || len(m.Request.Resources(n[0])) != 1 {
				t.Errorf("%s: request %+v", tc.entry, m.Request)
				continue
			}
			got = string(n[0]) + " " + m.Request.Resources(n[0])[0]
		}
		if got != tc.want || m.Wider != tc.wider || (got == "unmapped") != (m.Unmapped != "") {
			t.Errorf("%s: got %q wider=%t (%q), want %q wider=%t", tc.entry, got, m.Wider, m.Unmapped, tc.want, tc.wider)
		}
	}
}

// TestAllowedToolsRequest: without skill.toml, what allowed-tools maps to
// is the pack's request (the person still grants it); with skill.toml,
// skill.toml is the request and a mapped entry it lacks is reported (an
// entry packs cannot grant is packs lint's).
func TestAllowedToolsRequest(t *testing.T) {
	doc := "---\nname: p\ndescription: d\nallowed-tools: Read, Bash(git:*), WebFetch(domain:docs.rs), WebSearch\n---\nbody\n"
	cases := []struct {
		name     string
		manifest string
		want     []string
		request  capability.Request
	}{
		{"no-skill-toml", "", nil,
			capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"git"}}, Network: []string{"docs.rs"}}},
		{"skill-toml-covers", "[capabilities]\nterminal_exec = { commands = [\"git\"] }\nnetwork = [\"docs.rs\"]\n", nil,
			capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"git"}}, Network: []string{"docs.rs"}}},
		{"skill-toml-lacks", "[capabilities]\nnetwork = [\"docs.rs\"]\n", []string{"SKILL.md:4:warning:allowed-tools"},
			capability.Request{Network: []string{"docs.rs"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			files := map[string]string{"SKILL.md": doc}
			if tc.manifest != "" {
				files["skill.toml"] = tc.manifest
			}
			writePackFiles(t, dir, files)
			p, err := Load(dir, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := spotList(p.Findings); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v\n%v", got, tc.want, p.Findings)
			}
			got := p.Request()
			if !slices.Equal(got.TerminalExec.Commands, tc.request.TerminalExec.Commands) || !slices.Equal(got.Network, tc.request.Network) || len(got.FilesystemRead) != 0 {
				t.Errorf("request = %+v, want %+v", got, tc.request)
			}
		})
	}
}

// TestAllowedToolsCoverExecTools: without skill.toml, an exec tool whose
// command allowed-tools names is requested, so it draws no exec-grant
// warning; one allowed-tools does not name still does.
func TestAllowedToolsCoverExecTools(t *testing.T) {
	tools := `[{"name":"ls","description":"List.\nOne more line.","input_schema":{"type":"object"},"run":{"exec":["ls"]}},
{"name":"wc","description":"Count.\nOne more line.","input_schema":{"type":"object"},"run":{"exec":["wc"]}}]`
	dir := filepath.Join(t.TempDir(), "p")
	writePackFiles(t, dir, map[string]string{"SKILL.md": "---\nname: p\ndescription: d\nallowed-tools: Bash(ls:*)\n---\nbody\n", "tools.json": tools})
	if got, want := spotList(Validate(dir, LoadOptions{})), []string{"tools.json:2:warning:exec-grant"}; !slices.Equal(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
}
