package packs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// toolsPack writes a pack named "pack" with a wasm module, the given
// tools.json and any extra files, and returns its folder.
func toolsPack(t testing.TB, toolsJSON string, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pack")
	files := map[string]string{
		"SKILL.md":   skillMD("pack"),
		"bin/x.wasm": "\x00asm\x01\x00\x00\x00",
		"tools.json": toolsJSON,
	}
	for k, v := range extra {
		files[k] = v
	}
	writePackFiles(t, dir, files)
	return dir
}

func toolFindings(fs []Finding) []string {
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Severity)+":"+f.Rule+"@"+strconv.Itoa(f.Line))
	}
	return got
}

func TestToolsBothForms(t *testing.T) {
	one := `{"name":"t","description":"d","input_schema":{"type":"object"},"run":{"wasm":"bin/x.wasm","function":"f"}}`
	for _, doc := range []string{"[" + one + "]", `{"tools":[` + one + `]}`} {
		p, err := Load(toolsPack(t, doc, nil), LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if len(p.Tools) != 1 || p.Tools[0].Name != "t" || string(p.Tools[0].InputSchema) != `{"type":"object"}` {
			t.Errorf("%s: tools = %+v", doc, p.Tools)
		}
	}
}

func TestToolsFindings(t *testing.T) {
	schema := `{"type":"object","properties":{"q":{"type":"string"}}}`
	wasm := `{"wasm":"bin/x.wasm","function":"f"}`
	mk := func(fields ...string) string {
		return "[\n{" + strings.Join(fields, ",\n") + "}\n]\n"
	}
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"not-array", `"tools"`, []string{"error:json-type@1"}},
		{"object-without-tools", `{"tool": []}`, []string{"warning:unknown-key@1", "error:json-type@1"}},
		{"tool-not-object", "[\n 3\n]", []string{"error:json-type@2"}},
		{"trailing-data", "[]\n[]", []string{"error:json-syntax@2"}},
		{"truncated", "[\n{\"name\":", []string{"error:json-syntax@2"}},
		{"deep", strings.Repeat("[", 300) + strings.Repeat("]", 300), []string{"error:json-syntax@1"}},
		{"name-not-string", mk(`"name": 3`, `"description":"d"`, `"input_schema":`+schema, `"run":`+wasm), []string{"error:json-type@2"}},
		{"empty-name", mk(`"name": ""`, `"description":"d"`, `"input_schema":`+schema, `"run":`+wasm), []string{"error:tool-name@2"}},
		{"no-name", mk(`"description":"d"`, `"input_schema":`+schema, `"run":`+wasm), []string{"error:tool-field-missing@2"}},
		{"blank-description", mk(`"name":"t"`, `"description":"  "`, `"input_schema":`+schema, `"run":`+wasm), []string{"error:tool-field-missing@2"}},
		{"long-description", mk(`"name":"t"`, `"description":"`+strings.Repeat("x", 401)+`"`, `"input_schema":`+schema, `"run":`+wasm), []string{"warning:tool-description-length@3"}},
		{"camel-schema", mk(`"name":"t"`, `"description":"d"`, `"inputSchema":`+schema, `"run":`+wasm), []string{"warning:unknown-key@4", "error:tool-field-missing@2"}},
		{"schema-array", mk(`"name":"t"`, `"description":"d"`, `"input_schema":[]`, `"run":`+wasm), []string{"error:schema-type@4"}},
		{"schema-bad-regex", mk(`"name":"t"`, `"description":"d"`, `"input_schema":{"type":"object",`+"\n"+`"properties":{"q":{"type":"string","pattern":"(?<=a)b"}}}`, `"run":`+wasm), []string{"error:schema-compile@5"}},
		{"schema-ref-outside", mk(`"name":"t"`, `"description":"d"`, `"input_schema":{"type":"object","properties":{"q":{"$ref":"../other/s.json"}}}`, `"run":`+wasm), []string{"error:schema-ref@4"}},
		{"schema-ref-file-url", mk(`"name":"t"`, `"description":"d"`, `"input_schema":{"type":"object","properties":{"q":{"$ref":"file:///etc/passwd"}}}`, `"run":`+wasm), []string{"error:schema-ref@4"}},
		{"schema-ref-missing", mk(`"name":"t"`, `"description":"d"`, `"input_schema":{"type":"object","properties":{"q":{"$ref":"schemas/none.json"}}}`, `"run":`+wasm), []string{"error:schema-ref@4"}},
		{"run-missing", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema), []string{"error:tool-field-missing@2"}},
		{"run-empty", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{}`), []string{"error:run-invalid@5"}},
		{"run-mixed", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"wasm":"bin/x.wasm","exec":["ls"]}`), []string{"error:run-invalid@5"}},
		{"run-unknown", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"wasm":"bin/x.wasm","function":"f","argv":[]}`), []string{"error:run-invalid@5"}},
		{"wasi-with-function", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"wasm":"bin/x.wasm","abi":"wasi","function":"f"}`), []string{"error:run-invalid@5"}},
		{"extism-explicit", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"wasm":"bin/x.wasm","abi":"extism","function":"f"}`), nil},
		{"exec-empty", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"exec":[]}`), []string{"error:run-invalid@5"}},
		{"exec-non-string", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"exec":["ls",1]}`), []string{"error:run-invalid@5"}},
		{"exec-placeholder-cmd", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"exec":["{{q}}"]}`), []string{"error:exec-command@5"}},
		{"exec-unclosed", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"exec":["ls","{{q"]}`), []string{"error:exec-placeholder@5", "warning:exec-grant@5"}},
		{"exec-broken-schema", mk(`"name":"t"`, `"description":"d"`, `"input_schema":{"type":"string"}`, `"run":{"exec":["ls","{{q}}"]}`), []string{"error:schema-type@4", "warning:exec-grant@5"}},
		{"exec-no-properties", mk(`"name":"t"`, `"description":"d"`, `"input_schema":{"type":"object"}`, `"run":{"exec":["ls","{{q}}"]}`), []string{"error:exec-placeholder@5", "warning:exec-grant@5"}},
		{"exec-embedded", mk(`"name":"t"`, `"description":"d"`, `"input_schema":`+schema, `"run":{"exec":["ls","--name={{ q }}"]}`), []string{"warning:exec-grant@5"}},
		{"two-bad-tools", "[\n" + `{"name":"a.b","description":"d","input_schema":` + schema + `,"run":` + wasm + "},\n" + `{"name":"c","description":"d","input_schema":` + schema + `,"run":{"wasm":"bin/none.wasm","function":"f"}}` + "\n]",
			[]string{"error:tool-name@2", "error:file-missing@3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := toolsPack(t, tc.doc, nil)
			got := toolFindings(Validate(dir, LoadOptions{}))
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestToolsLocalRef: a $ref to a JSON file inside the pack is loaded and
// applied.
func TestToolsLocalRef(t *testing.T) {
	dir := toolsPack(t,
		`[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"q":{"$ref":"schemas/q.json"},"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}},"run":{"wasm":"bin/x.wasm","function":"f"}}]`,
		map[string]string{"schemas/q.json": `{"type":"string","maxLength":3}`})
	p, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := p.Tool("t")
	if err := tool.ValidateInput([]byte(`{"q":"abc","n":2}`)); err != nil {
		t.Errorf("valid input refused: %v", err)
	}
	for _, bad := range []string{`{"q":"abcd"}`, `{"n":"2"}`} {
		if err := tool.ValidateInput([]byte(bad)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s accepted: %v", bad, err)
		}
	}
}

// TestValidateInput pairs inputs that pass with inputs that fail, and
// checks that a failure names the field.
func TestValidateInput(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "text-tools"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upper, _ := p.Tool("upper")
	grep, _ := p.Tool("grep")
	cases := []struct {
		tool  *Tool
		input string
		ok    bool
		field string // the first problem's field when !ok; "" is the whole input
	}{
		{upper, `{"text":"hi"}`, true, ""},
		{upper, ` {"text":""} `, true, ""},
		{upper, `{"text":3}`, false, "/text"},
		{upper, `{"text":"hi","extra":1}`, false, ""},
		{upper, `{}`, false, ""},
		{upper, ``, false, ""},
		{upper, `[1]`, false, ""},
		{upper, `{"text":"hi"`, false, ""},
		{upper, `{"text":"a"} {}`, false, ""},
		{grep, `{"pattern":"x","path":"src"}`, true, ""},
		{grep, `{"pattern":"","path":"src"}`, false, "/pattern"},
		{grep, `{"pattern":"x","path":"/etc"}`, false, "/path"},
	}
	for _, tc := range cases {
		err := tc.tool.ValidateInput([]byte(tc.input))
		if tc.ok {
			if err != nil {
				t.Errorf("%s(%s) = %v, want nil", tc.tool.Name, tc.input, err)
			}
			continue
		}
		var ie *inputError
		switch {
		case !errors.As(err, &ie) || !errors.Is(err, ErrInvalidInput):
			t.Errorf("%s(%s) = %v, want an *inputError", tc.tool.Name, tc.input, err)
		case len(ie.Problems) == 0 || ie.Problems[0].Field != tc.field || ie.Problems[0].Reason == "":
			t.Errorf("%s(%s) problems = %+v, want field %q", tc.tool.Name, tc.input, ie.Problems, tc.field)
		case ie.Tool != tc.tool.Name || !strings.Contains(err.Error(), tc.tool.Name):
			t.Errorf("error %q does not name the tool", err)
		}
	}
	if err := (&Tool{Name: "hand-made"}).ValidateInput([]byte(`{}`)); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a Tool without a compiled schema must refuse input, got %v", err)
	}
}

// TestParseArgvElement: the syntax of one run.exec element.
func TestParseArgvElement(t *testing.T) {
	lit := func(s string) argvPart { return argvPart{text: s} }
	ph := func(s string) argvPart { return argvPart{text: s, param: true} }
	cases := []struct {
		arg  string
		want []argvPart
		bad  bool
	}{
		{"plain", []argvPart{lit("plain")}, false},
		{"", nil, false},
		{"{{a}}", []argvPart{ph("a")}, false},
		{"--x={{a}}:{{ b_c }}", []argvPart{lit("--x="), ph("a"), lit(":"), ph("b_c")}, false},
		{"{{a}}{{b}}", []argvPart{ph("a"), ph("b")}, false},
		{"{ {a} }", []argvPart{lit("{ {a} }")}, false},
		{"{{a", nil, true},
		{"a}}", nil, true},
		{"}}{{a}}", nil, true},
		{"{{a}}}}", nil, true},
		{"{{}}", nil, true},
		{"{{a b}}", nil, true},
		{"{{a.b}}", nil, true},
		{"{{{{a}}}}", nil, true},
	}
	for _, tc := range cases {
		got, err := parseArgvElement(tc.arg)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("parseArgvElement(%q) = %+v, %v", tc.arg, got, err)
		}
	}
}

func TestParseJSONTree(t *testing.T) {
	data := []byte(" {\"a\": [1, \"two\", {\"b\": null}], \"c\": true}\n")
	n, err := parseJSONTree(data)
	if err != nil {
		t.Fatal(err)
	}
	if n.kind != '{' || len(n.members) != 2 || string(data[n.off:n.end]) != strings.TrimSpace(string(data)) {
		t.Fatalf("root = %+v", n)
	}
	a := n.member("a").val
	if a.kind != '[' || len(a.items) != 3 || string(data[a.off:a.end]) != `[1, "two", {"b": null}]` {
		t.Errorf("a = %q", data[a.off:a.end])
	}
	if got := n.pointer("/a/2/b"); got.kind != 'n' {
		t.Errorf("pointer /a/2/b = %+v", got)
	}
	if got := n.pointer("/a/9"); got != a {
		t.Error("a pointer past the end must stop at the deepest node reached")
	}
	if _, err := parseJSONTree([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Error("duplicate keys must be refused")
	}
}

func TestSchemaLoaderRefusesRemote(t *testing.T) {
	dir := t.TempDir()
	writePackFiles(t, dir, map[string]string{"s.json": `{"type":"string"}`, "big.json": `"` + strings.Repeat("x", maxSchemaRefBytes) + `"`})
	l := packLoader{dir: dir}
	if _, err := l.Load("file://" + filepath.ToSlash(filepath.Join(dir, "s.json"))); err != nil {
		t.Errorf("a file inside the pack must load: %v", err)
	}
	for _, u := range []string{"https://example.com/s.json", "http://127.0.0.1/s.json", "file://host/s.json", "file:///etc/passwd", "file://" + filepath.ToSlash(filepath.Join(dir, "big.json"))} {
		if _, err := l.Load(u); err == nil {
			t.Errorf("Load(%s) succeeded", u)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load("file://" + filepath.ToSlash(filepath.Join(dir, "link.json"))); err == nil {
		t.Error("a symlink out of the pack must not load")
	}
}

// TestValidateInputConcurrent: one loaded tool serves many calls at once.
func TestValidateInputConcurrent(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "text-tools"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	grep, _ := p.Tool("grep")
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			for range 50 {
				good := grep.ValidateInput([]byte(`{"pattern":"x","path":"src"}`))
				bad := grep.ValidateInput([]byte(`{"pattern":` + strconv.Itoa(i) + `}`))
				if good != nil || !errors.Is(bad, ErrInvalidInput) {
					errs <- errors.Join(good, bad)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestToolsMetadata: title, output, output_schema and idempotent are tool
// fields, checked where they are written; unknown keys stay reported.
func TestToolsMetadata(t *testing.T) {
	schema := `{"type":"object"}`
	wasm := `{"wasm":"bin/x.wasm","function":"f"}`
	mk := func(fields ...string) string {
		return "[\n{" + strings.Join(append([]string{`"name":"t"`, `"description":"d"`, `"input_schema":` + schema, `"run":` + wasm}, fields...), ",\n") + "}\n]\n"
	}
	out := `"output_schema":{"type":"object","properties":{"c":{"type":"number"}},"required":["c"]}`
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"all-declared", mk(`"title":"Forecast"`, `"idempotent":true`, out), nil},
		{"content-output", mk(`"output":"content"`), nil},
		{"json-output", mk(`"output":"json"`, out), nil},
		{"title-not-string", mk(`"title":3`), []string{"error:json-type@6"}},
		{"title-empty", mk(`"title":""`), []string{"error:tool-title@6"}},
		{"title-padded", mk(`"title":" Forecast"`), []string{"error:tool-title@6"}},
		{"title-two-lines", mk(`"title":"a\nb"`), []string{"error:tool-title@6"}},
		{"title-long", mk(`"title":"` + strings.Repeat("x", 81) + `"`), []string{"error:tool-title@6"}},
		{"idempotent-string", mk(`"idempotent":"yes"`), []string{"error:json-type@6"}},
		{"output-unknown", mk(`"output":"image"`), []string{"error:tool-output@6"}},
		{"output-not-string", mk(`"output":true`), []string{"error:json-type@6"}},
		{"output-schema-with-content", mk(`"output":"content"`, out), []string{"error:tool-output@7"}},
		{"output-schema-not-object", mk(`"output_schema":{"type":"array"}`), []string{"error:schema-type@6"}},
		{"output-schema-array", mk(`"output_schema":[]`), []string{"error:schema-type@6"}},
		{"output-schema-bad", mk(`"output_schema":{"type":"object",` + "\n" + `"properties":{"c":{"type":"nope"}}}`), []string{"error:schema-compile@7"}},
		{"output-schema-remote-ref", mk(`"output_schema":{"type":"object","properties":{"c":{"$ref":"https://example.com/s.json"}}}`), []string{"error:schema-ref@6"}},
		{"camel-output-schema", mk(`"outputSchema":{"type":"object"}`), []string{"warning:unknown-key@6"}},
		{"annotations-not-declared", mk(`"annotations":{"readOnlyHint":true}`), []string{"warning:unknown-key@6"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := toolFindings(Validate(toolsPack(t, tc.doc, nil), LoadOptions{}))
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}

	p, err := Load(toolsPack(t, mk(`"title":"Forecast"`, `"idempotent":true`, out), nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tool := p.Tools[0]
	if tool.Title != "Forecast" || !tool.Idempotent || tool.Output != OutputJSON || !strings.Contains(string(tool.OutputSchema), `"required":["c"]`) {
		t.Fatalf("tool = %+v", tool)
	}
	for _, tc := range []struct {
		out, want string // want: a part of the error, "" for none
	}{{`{"c": 1.5}`, ""}, {`{"c": "x"}`, `field "/c"`}, {`{}`, "missing property"}, {`[1]`, "want object"}, {`not json`, "not JSON"}, {``, "not JSON"}} {
		err := tool.ValidateOutput([]byte(tc.out))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ValidateOutput(%q) = %v, want nil", tc.out, err)
		case tc.want != "" && (!errors.Is(err, ErrOutputSchema) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ValidateOutput(%q) = %v, want ErrOutputSchema saying %q", tc.out, err, tc.want)
		}
	}
	plain, err := Load(toolsPack(t, mk(), nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Tools[0].ValidateOutput([]byte(`[1]`)); err != nil {
		t.Errorf("a tool without output_schema refused a result: %v", err)
	}
}
