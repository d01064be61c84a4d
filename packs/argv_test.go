package packs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// argvSchema has one property of each JSON type, and two properties marked
// as options: "order" (an enum) and "flag" (open).
const argvSchema = `{"type": "object", "properties": {
	"s": {"type": "string"}, "t": {"type": "string"}, "n": {"type": "number"}, "b": {"type": "boolean"},
	"a": {"type": "array"}, "o": {"type": "object"}, "z": {},
	"order": {"type": "string", "enum": ["-r", "-n", "-", ""], "x-packs-option": true},
	"flag": {"type": "string", "x-packs-option": true}}}`

// argvTool loads a pack with one exec tool running argv under argvSchema
// and returns that tool.
func argvTool(t *testing.T, argv ...string) *Tool {
	t.Helper()
	b, err := json.Marshal(argv)
	if err != nil {
		t.Fatal(err)
	}
	doc := `[{"name": "t", "description": "d", "input_schema": ` + argvSchema + `, "run": {"exec": ` + string(b) + `}}]`
	p, err := Load(toolsPack(t, doc, map[string]string{"skill.toml": argvToml}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Findings {
		if f.Severity == SeverityError || f.Rule != "exec-option-open" {
			t.Fatalf("finding for %q: %v", argv, f)
		}
	}
	tool, ok := p.Tool("t")
	if !ok {
		t.Fatalf("tool t was not loaded from %s", doc)
	}
	return tool
}

const argvToml = "[capabilities]\nterminal_exec = { commands = [\"sort\", \"ls\"] }\n"

// TestArgvExpand is the table of value shapes: each placeholder stays one
// element, and a value that would make its element an option is refused
// unless its property is marked "x-packs-option".
func TestArgvExpand(t *testing.T) {
	cases := []struct {
		name  string
		elem  string // argv[1]; argv is ["sort", elem]
		input string
		want  string // argv[1] after expansion
		bad   string // the refused field, when the call is refused
	}{
		{"plain string", "{{s}}", `{"s":"a.txt"}`, "a.txt", ""},
		{"short option", "{{s}}", `{"s":"-o/tmp/x"}`, "", "/s"},
		{"long option", "{{s}}", `{"s":"--output=/tmp/x"}`, "", "/s"},
		{"lone dash", "{{s}}", `{"s":"-"}`, "", "/s"},
		{"double dash", "{{s}}", `{"s":"--"}`, "", "/s"},
		{"escaped dash", "{{s}}", `{"s":"\u002do/tmp/x"}`, "", "/s"},
		{"leading space is not an option", "{{s}}", `{"s":" -o"}`, " -o", ""},
		{"unicode minus is not an option", "{{s}}", `{"s":"\u2212o"}`, "\u2212o", ""},
		{"dash inside", "{{s}}", `{"s":"a-b"}`, "a-b", ""},
		{"empty string stays one empty element", "{{s}}", `{"s":""}`, "", ""},
		{"NUL byte", "{{s}}", `{"s":"a\u0000b"}`, "", "/s"},
		{"NUL byte embedded", "--out={{s}}", `{"s":"\u0000"}`, "", "/s"},
		{"after a literal option name", "--out={{s}}", `{"s":"-x"}`, "--out=-x", ""},
		{"attached to a short option", "-k{{s}}", `{"s":"-1"}`, "-k-1", ""},
		{"value starts the element", "{{s}}.txt", `{"s":"-x"}`, "", "/s"},
		{"literal starts the element", "x{{s}}", `{"s":"-x"}`, "x-x", ""},
		{"empty value, then an option", "{{t}}{{s}}", `{"t":"","s":"-x"}`, "", "/s"},
		{"value completes a marked dash", "{{order}}{{s}}", `{"order":"-","s":"o/tmp/x"}`, "", "/s"},
		{"value after a marked option", "{{order}}{{s}}", `{"order":"-n","s":"5"}`, "-n5", ""},
		{"marked option", "{{order}}", `{"order":"-r"}`, "-r", ""},
		{"marked open option", "{{flag}}", `{"flag":"--reverse"}`, "--reverse", ""},
		{"marked option, empty", "{{order}}", `{"order":""}`, "", ""},
		{"a value is not expanded again", "{{s}}", `{"s":"{{t}}","t":"-x"}`, "{{t}}", ""},
		{"shell text", "{{s}}", `{"s":"$(id); rm -rf / ` + "`id`" + `"}`, "$(id); rm -rf / `id`", ""},
		{"number", "{{n}}", `{"n":5}`, "5", ""},
		{"number kept as written", "{{n}}", `{"n":1.5e3}`, "1.5e3", ""},
		{"negative number", "{{n}}", `{"n":-5}`, "", "/n"},
		{"negative number after a literal", "--n={{n}}", `{"n":-5}`, "--n=-5", ""},
		{"boolean", "{{b}}", `{"b":false}`, "false", ""},
		{"array is one element of JSON text", "{{a}}", `{"a":["-o", "/tmp/x"]}`, `["-o","/tmp/x"]`, ""},
		{"object is one element of JSON text", "{{o}}", `{"o":{"k": "-v"}}`, `{"k":"-v"}`, ""},
		{"untyped string", "{{z}}", `{"z":"-x"}`, "", "/z"},
		{"null", "{{s}}", `{"s":null}`, "", "/s"},
		{"missing", "{{s}}", `{}`, "", "/s"},
		{"unicode", "{{s}}", `{"s":"h\u00e9llo \ud83d\ude00"}`, "héllo 😀", ""},
		{"spaces in braces", "{{ s }}", `{"s":"a"}`, "a", ""},
		{"two in one", "{{s}}:{{t}}", `{"s":"a","t":"-b"}`, "a:-b", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := argvTool(t, "sort", c.elem)
			got, err := tool.Argv().Expand(json.RawMessage(c.input))
			if c.bad != "" {
				var ie *inputError
				if !errors.Is(err, ErrInvalidInput) || !errors.As(err, &ie) || len(ie.Problems) != 1 || ie.Problems[0].Field != c.bad {
					t.Fatalf("got %q, %v; want an *inputError on %s", got, err, c.bad)
				}
				return
			}
			if want := []string{"sort", c.want}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestArgvExpandInput: the input must be one JSON object; an empty input
// stands for {}; a Tool that did not come from Load runs nothing.
func TestArgvExpandInput(t *testing.T) {
	fixed := argvTool(t, "ls", "-l")
	for _, in := range []string{``, `{}`, ` {"s":"x"} `} {
		if got, err := fixed.Argv().Expand(json.RawMessage(in)); err != nil || !slices.Equal(got, []string{"ls", "-l"}) {
			t.Errorf("Expand(%q) = %q, %v", in, got, err)
		}
	}
	tool := argvTool(t, "ls", "{{s}}")
	for _, in := range []string{`[1]`, `"x"`, `{"s":"a"`, `{"s":"a"} {}`, `null`} {
		if got, err := tool.Argv().Expand(json.RawMessage(in)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Expand(%q) = %q, %v; want ErrInvalidInput", in, got, err)
		}
	}
	hand := &Tool{Name: "hand-made", Run: Run{ABI: ABIExec, Exec: []string{"sort", "{{s}}"}}}
	if got, err := hand.Argv().Expand(json.RawMessage(`{"s":"x"}`)); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a Tool without a compiled template ran %q, %v", got, err)
	}
	wasm, err := Load(toolsPack(t, `[{"name":"w","description":"d","input_schema":{"type":"object"},"run":{"wasm":"bin/x.wasm","function":"f"}}]`, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tmpl := wasm.Tools[0].Argv(); tmpl != nil {
		t.Errorf("a wasm tool has an argv template %v", tmpl)
	}
}

// TestArgvFindings: template problems are reported by validate, with the
// file, the line and the rule, before anything can run.
func TestArgvFindings(t *testing.T) {
	mk := func(props, exec string) string {
		return "[\n{\"name\":\"t\",\n\"description\":\"d\",\n" +
			`"input_schema":{"type":"object","properties":{` + props + "}},\n" +
			`"run":{"exec":` + exec + "}}\n]\n"
	}
	q := `"q":{"type":"string"}`
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"plain", mk(q, `["sort","--","{{q}}"]`), nil},
		{"unknown placeholder", mk(q, `["sort","{{nope}}"]`), []string{"error:exec-placeholder@5"}},
		{"unterminated", mk(q, `["sort","{{q"]`), []string{"error:exec-placeholder@5"}},
		{"close without open", mk(q, `["sort","q}}"]`), []string{"error:exec-placeholder@5"}},
		{"empty placeholder", mk(q, `["sort","{{}}"]`), []string{"error:exec-placeholder@5"}},
		{"placeholder in argv[0]", mk(q, `["{{q}}"]`), []string{"error:exec-command@5"}},
		{"placeholder inside argv[0]", mk(q, `["sort{{q}}"]`), []string{"error:exec-command@5"}},
		{"NUL in a literal", mk(q, `["sort","a\u0000b"]`), []string{"error:exec-argument@5"}},
		{"value names the option", mk(q, `["sort","--{{q}}"]`), []string{"error:exec-option@5"}},
		{"value names a short option", mk(q, `["sort","-{{q}}"]`), []string{"error:exec-option@5"}},
		{"value after a literal option", mk(q, `["sort","--out={{q}}","-k{{q}}"]`), nil},
		{"marked value names the option", mk(`"q":{"enum":["reverse"],"x-packs-option":true}`, `["sort","--{{q}}"]`), nil},
		{"marker not a boolean", mk(`"q":{"type":"string","x-packs-option":"yes"}`, `["sort","{{q}}"]`), []string{"error:exec-option@4"}},
		{"marker false", mk(`"q":{"type":"string","x-packs-option":false}`, `["sort","--{{q}}"]`), []string{"error:exec-option@5"}},
		{"open marked option", mk(`"q":{"type":"string","x-packs-option":true}`, `["sort","{{q}}"]`), []string{"warning:exec-option-open@4"}},
		{"marked option with a pattern", mk(`"q":{"type":"string","pattern":"^-[rn]$","x-packs-option":true}`, `["sort","{{q}}"]`), nil},
		{"marked option with const", mk(`"q":{"const":"-r","x-packs-option":true}`, `["sort","{{q}}"]`), nil},
		{"marked operand after --", mk(`"q":{"type":"string","x-packs-option":true}`, `["sort","--","{{q}}"]`), nil},
		{"marked value after a literal option", mk(`"q":{"type":"string","x-packs-option":true}`, `["sort","--out={{q}}"]`), nil},
		{"marked value after a dash", mk(`"q":{"type":"string","x-packs-option":true}`, `["sort","-{{q}}"]`), []string{"warning:exec-option-open@4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := toolsPack(t, c.doc, map[string]string{"skill.toml": argvToml})
			got := toolFindings(Validate(dir, LoadOptions{}))
			if !slices.Equal(got, c.want) {
				t.Errorf("findings = %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzArgvTemplate compiles run.exec from tools.json text and expands every
// accepted template with one value in every placeholder. Whatever it holds,
// the argv keeps the template's length and program, carries no NUL byte,
// and an element begins with "-" only when the template or a marked
// property put the dash there.
func FuzzArgvTemplate(f *testing.F) {
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "tools.json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b, "-x")
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct{ doc, value string }{
		{`[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"f":{"type":"string"}}},"run":{"exec":["sort","{{f}}"]}}]`, "-o/tmp/x"},
		{`[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"f":{},"o":{"enum":["-"],"x-packs-option":true}}},"run":{"exec":["sort","{{o}}{{f}}","--out={{ f }}","x{{f}}}}"]}}]`, "o/x"},
		{`[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"f":{},"o":{"x-packs-option":true}}},"run":{"exec":["sort","-{{o}}","--","{{o}}{{f}}"]}}]`, ""},
		{`{"tools":[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"a":{"x-packs-option":1}}},"run":{"exec":["sort","{{a}}","a\u0000","{{"]}}]}`, "\x00"},
	} {
		f.Add([]byte(s.doc), s.value)
	}
	dir := filepath.Join(f.TempDir(), "pack")
	writePackFiles(f, dir, map[string]string{"bin/x.wasm": "\x00asm\x01\x00\x00\x00"})
	man := &Manifest{}
	man.Capabilities.TerminalExec.Commands = []string{"sort"}
	f.Fuzz(func(t *testing.T, doc []byte, value string) {
		rep := &reporter{}
		tools := parseTools(doc, "tools.json", dir, "pack", man, rep)
		checkFindings(t, doc, rep.list)
		for _, tool := range tools {
			tmpl := tool.Argv()
			if (tool.Run.ABI == ABIExec) != (tmpl != nil) {
				t.Fatalf("tool %q (%s) has template %v", tool.Name, tool.Run.ABI, tmpl)
			}
			if tmpl == nil {
				continue
			}
			if len(tmpl.elems) != len(tool.Run.Exec) || len(tmpl.elems[0]) != 1 || tmpl.elems[0][0].param {
				t.Fatalf("template %+v does not fix argv[0] of %q", tmpl.elems, tool.Run.Exec)
			}
			input := map[string]string{}
			for i, parts := range tmpl.elems {
				var src strings.Builder
				for _, p := range parts {
					if p.param {
						input[p.text] = value
						src.WriteString(placeholderOpen + p.text + placeholderClose)
					} else {
						src.WriteString(p.text)
					}
				}
				if again, err := parseArgvElement(src.String()); err != nil || !slices.EqualFunc(again, parts, func(a, b argvPart) bool { return a.text == b.text && a.param == b.param }) {
					t.Fatalf("element %q parses to %+v, its canonical form %q to %+v, %v", tool.Run.Exec[i], parts, src.String(), again, err)
				}
			}
			in, err := json.Marshal(input)
			if err != nil {
				return // not UTF-8: JSON would carry another value
			}
			argv, err := tmpl.Expand(in)
			if err != nil {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("Expand: %v", err)
				}
				continue
			}
			if len(argv) != len(tool.Run.Exec) || argv[0] != tool.Run.Exec[0] {
				t.Fatalf("argv %q from template %q", argv, tool.Run.Exec)
			}
			for i, a := range argv {
				if strings.IndexByte(a, 0) >= 0 {
					t.Fatalf("argument %d holds a NUL: %q", i, a)
				}
				if !strings.HasPrefix(a, "-") {
					continue
				}
				// The dashes and the character after them come from the
				// template's literals or from marked values.
				head := len(a) - len(strings.TrimLeft(a, "-")) + 1
				pos := 0
				for _, p := range tmpl.elems[i] {
					s := p.text
					if p.param {
						s = value
					}
					if pos < head && s != "" && p.param && !p.option {
						t.Fatalf("argument %d %q: its option head comes from unmarked {{%s}} = %q", i, a, p.text, value)
					}
					pos += len(s)
				}
			}
		}
	})
}
