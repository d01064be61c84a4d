package packs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// addSeedFiles adds every file of that name under testdata as a seed.
func addSeedFiles(f *testing.F, name string) {
	f.Helper()
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != name {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
}

func checkFindings(t *testing.T, doc []byte, fs []Finding) {
	t.Helper()
	lines := bytes.Count(doc, []byte("\n")) + 2
	for _, f := range fs {
		if f.Rule == "" || f.Message == "" || f.Line < 0 || f.Line > lines || (f.Severity != SeverityError && f.Severity != SeverityWarning) {
			t.Fatalf("malformed finding %+v for a %d-line input", f, lines)
		}
	}
}

func FuzzFrontmatter(f *testing.F) {
	addSeedFiles(f, "SKILL.md")
	addSeedFiles(f, "README.md")
	for _, s := range []string{
		"---\nname: pack\ndescription: a: b\n---\n",
		"---\r\nname: pack\r\ndescription: d\r\nmetadata:\r\n  k: v\r\n---\r\nbody",
		"\xef\xbb\xbf---\nname: pack\ndescription: &a [*a]\n---\n",
		"---\nname: pack\ndescription: |\n  x\nallowed-tools: [a, {b: c}]\n---\n",
		"---\n" + strings.Repeat("a: b\n", 100) + "---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep := &reporter{pack: "pack"}
		fm, body, ok := readFrontmatter(bufio.NewReaderSize(bytes.NewReader(doc), readerBytes), "SKILL.md", "pack", rep)
		checkFindings(t, doc, rep.list)
		if body < 0 || body > int64(len(doc)) {
			t.Fatalf("body offset %d outside a %d-byte doc", body, len(doc))
		}
		if ok && !HasErrors(rep.list) {
			if fm.Name != "pack" {
				t.Fatalf("accepted name %q for folder pack", fm.Name)
			}
			if n := utf8.RuneCountInString(fm.Description); n == 0 || n > maxDescriptionChars {
				t.Fatalf("accepted a description of %d characters", n)
			}
			head := bytes.TrimRight(doc[:body], "\r\n")
			if last := head[bytes.LastIndexByte(head, '\n')+1:]; !isFence(last) {
				t.Fatalf("body offset %d does not follow a closing fence (%q)", body, last)
			}
		}
	})
}

func FuzzManifest(f *testing.F) {
	addSeedFiles(f, "skill.toml")
	f.Add([]byte(spec001Complete))
	for _, s := range []string{
		"[capabilities]\nsecrets_access = [\"A\", 1]\n",
		"[capabilities]\nnetwork = [\"a.b\"]\nsecrets_access = [\"T\", { name = \"U\", reveal = true }]\n[[secrets.inject]]\nname = \"T\"\nhost = \"a.b\"\nheader = \"X\"\nvalue = \"B {{secret.T}}\"\n",
		"[limits]\nmemory_mb = 1\ntimeout = \"1h\"\n",
		"capabilities.network = [\"*.a.b\"]\n",
		"[capabilities]\nterminal_exec = { commands = [\"git\"], blocked = [\"git\"] }\n",
		"[dependencies]\na = \">=1.0, <2\"\n\"b.c\" = { version = \"^0.1\", optional = true }\n",
		"[platform]\nos = [\"macos\"]\narch = [\"aarch64\"]\nrequired_tools = [\"git\"]\n[knowledge]\npriority = 5\n",
		"executable.exports = [\"f\"]\n[suggestions]\nx = \"y\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep := &reporter{}
		m := parseManifest(doc, "skill.toml", "", rep)
		checkFindings(t, doc, rep.list)
		if m != nil && !HasErrors(rep.list) {
			// Parse, don't re-check: what the loader accepts must compile.
			if err := m.Capabilities.Validate(); err != nil {
				t.Fatalf("accepted a manifest whose request does not validate: %v", err)
			}
			// And CheckHost never fails on what was accepted.
			hostRep := CheckHost(&Pack{Name: "p", Manifest: m}, Host{OS: "linux", Arch: "amd64", Install: true})
			checkFindings(t, doc, hostRep)
		}
	})
}

// FuzzConstraint checks that a [dependencies] constraint parses or is
// refused, never panics, and that what parses decides any version.
func FuzzConstraint(f *testing.F) {
	for _, s := range []string{"", "*", ">=1.0", "^0.2.3", "~1", ">=1.0, <2", "1.2.3-rc.1", "==1", ">=banana", "^", "1.2.3.4"} {
		f.Add(s, "1.2.3")
	}
	f.Fuzz(func(t *testing.T, c, v string) {
		cons, err := parseConstraint(c)
		if err != nil {
			return
		}
		allowed := cons.allows(v)
		if checkSemver(v) != nil && allowed && len(cons) > 0 {
			t.Fatalf("%q allows %q, which is not a version", c, v)
		}
		for _, cl := range cons {
			if checkSemver(cl.v[1:]) != nil {
				t.Fatalf("%q parsed to a clause with version %q", c, cl.v)
			}
		}
	})
}

func FuzzTools(f *testing.F) {
	addSeedFiles(f, "tools.json")
	for _, s := range []string{
		`{"tools":[{"name":"a","description":"d","input_schema":{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}},"run":{"exec":["ls","{{x}}"]}}]}`,
		`[{"name":"a","description":"d","input_schema":{"type":"object","properties":{"x":{"$ref":"s.json"}}},"run":{"wasm":"bin/x.wasm","abi":"wasi"}}]`,
		`[{"name":"a","description":"d","input_schema":{"type":"object","patternProperties":{"(":{}}},"run":{"wasm":"../x","function":"f"}}]`,
		`[{"name":"a","title":"A","idempotent":true,"output":"json","description":"d","input_schema":{"type":"object"},"output_schema":{"type":"object","properties":{"x":{"$ref":"s.json"}},"required":["x"]},"run":{"wasm":"bin/x.wasm","function":"f"}}]`,
		`[{"name":"a","output":"content","description":"d","input_schema":{"type":"object"},"run":{"wasm":"bin/x.wasm","abi":"wasi"}}]`,
	} {
		f.Add([]byte(s))
	}
	dir := filepath.Join(f.TempDir(), "pack")
	writePackFiles(f, dir, map[string]string{"bin/x.wasm": "\x00asm\x01\x00\x00\x00", "s.json": `{"type":"integer"}`})
	man := &Manifest{}
	man.Capabilities.TerminalExec.Commands = []string{"ls"}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep := &reporter{}
		tools := parseTools(doc, "tools.json", dir, "pack", man, rep)
		checkFindings(t, doc, rep.list)
		if HasErrors(rep.list) {
			return
		}
		seen := map[string]bool{}
		for _, tool := range tools {
			if tool.schema == nil || tool.Name == "" || seen[tool.Name] || len("pack__"+tool.Name) > maxToolNameChars {
				t.Fatalf("accepted a tool without schema or name, or a duplicate: %+v", tool)
			}
			seen[tool.Name] = true
			switch tool.Run.ABI {
			case ABIExtism, ABIWASI:
				if _, err := SafeJoin(dir, tool.Run.Wasm); err != nil {
					t.Fatalf("accepted wasm path %q: %v", tool.Run.Wasm, err)
				}
			case ABIExec:
				if len(tool.Run.Exec) == 0 {
					t.Fatal("accepted an empty exec")
				}
			default:
				t.Fatalf("accepted a tool with ABI %q", tool.Run.ABI)
			}
			err := tool.ValidateInput([]byte(`{"x":"1"}`))
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("ValidateInput returned %v", err)
			}
			if tool.Output != OutputJSON && tool.Output != OutputContent {
				t.Fatalf("accepted output mode %q", tool.Output)
			}
			if (len(tool.OutputSchema) > 0) != (tool.outSchema != nil) || tool.Output == OutputContent && tool.outSchema != nil {
				t.Fatalf("output schema %s compiled %v, output %q", tool.OutputSchema, tool.outSchema != nil, tool.Output)
			}
			if err := tool.ValidateOutput([]byte(`{"x":1}`)); err != nil && !errors.Is(err, ErrOutputSchema) {
				t.Fatalf("ValidateOutput returned %v", err)
			}
		}
	})
}

func FuzzSafeJoin(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	writePackFiles(f, root, map[string]string{"docs/a.md": "a", "real/b": "b"})
	for name, target := range map[string]string{"in": "real", "out": outside, "up": "..", "docs/rel-out": "../../x"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"docs/a.md", "in/b", "out/x", "up/x", "../x", "/etc", "a\x00", "docs/rel-out", ".", "", "in/../in/b", `..\..\x`, "./docs/./a.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := SafeJoin(root, rel)
		if err != nil {
			if !errors.Is(err, ErrPathEscape) {
				t.Fatalf("SafeJoin(%q) = %v: every refusal wraps ErrPathEscape", rel, err)
			}
			return
		}
		if !within(realRoot, got) {
			t.Fatalf("SafeJoin(%q) = %q, outside %q", rel, got, realRoot)
		}
		if resolved, err := filepath.EvalSymlinks(got); err == nil && !within(realRoot, resolved) {
			t.Fatalf("SafeJoin(%q) = %q, which resolves to %q", rel, got, resolved)
		}
	})
}

// FuzzFastYAML is a differential test: whatever fastYAML accepts, yaml.v3
// must parse to the same tree (kinds, tags, values and lines).
func FuzzFastYAML(f *testing.F) {
	for _, s := range []string{
		"name: pack\ndescription: Does things, well.\n",
		"name: pack\r\ndescription: d\r\nmetadata:\r\n  author: me\r\n  tier: Gold\r\n",
		"name: pack\n\nmetadata:\n    a: b\n    c: d\nlicense: MIT\n",
		"name: True\n", "description: a: b\n", "key: value # comment\n", "k: Ünïcödé text\n",
		"a:\n  b: c\n d: e\n", "a:\nb: c\n", "name: x\tz\n", "é: x\n", "name:  spaced  \n",
		"v: \"1.0\"\nw: 'it''s: #1'\nx: \"a\\\"b\"\ny: ''\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fast, ok := fastYAML(doc)
		if !ok {
			return
		}
		var slow yaml.Node
		if err := yaml.Unmarshal(doc, &slow); err != nil {
			t.Fatalf("fastYAML accepted what yaml.v3 refuses (%v): %q", err, doc)
		}
		if diff := diffNodes(&fast, &slow, "/"); diff != "" {
			t.Fatalf("fastYAML and yaml.v3 disagree at %s on %q", diff, doc)
		}
	})
}

func diffNodes(a, b *yaml.Node, at string) string {
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Line != b.Line || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: %v %q %q line %d (%d children) vs %v %q %q line %d (%d children)",
			at, a.Kind, a.Tag, a.Value, a.Line, len(a.Content), b.Kind, b.Tag, b.Value, b.Line, len(b.Content))
	}
	for i := range a.Content {
		if d := diffNodes(a.Content[i], b.Content[i], at+strconv.Itoa(i)+"/"); d != "" {
			return d
		}
	}
	return ""
}

// FuzzAllowedTools checks that allowed-tools splits and maps without a
// panic, and that whatever an entry maps to is a request that validates
// (so a grant of it can never fail on a pattern).
func FuzzAllowedTools(f *testing.F) {
	for _, s := range []string{"Read, Grep, Bash(git log *)", "Bash(git:*) WebFetch(domain:docs.rs)", "Edit(//etc/x) Read(~/.aws)", "Bash(", "Bash(a (b)) mcp__x__y", "WebFetch(domain:)", ")(", "Read(../x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries := splitAllowedTools(s)
		if len(entries) > maxAllowedTools {
			t.Fatalf("%d entries, over %d", len(entries), maxAllowedTools)
		}
		for _, tm := range mapAllowedTools(entries) {
			if tm.Entry == "" || strings.ContainsAny(tm.Entry, " \t\n,") && !strings.Contains(tm.Entry, "(") {
				t.Fatalf("entry %q from %q", tm.Entry, s)
			}
			if tm.Unmapped == "" && !tm.Default {
				if err := tm.Request.Validate(); err != nil {
					t.Fatalf("%q maps to a request that does not validate: %v", tm.Entry, err)
				}
				if len(tm.Request.Names()) == 0 {
					t.Fatalf("%q maps to nothing and says neither default nor why", tm.Entry)
				}
			}
		}
	})
}
