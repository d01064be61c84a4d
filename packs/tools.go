package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/packs-run/packs/capability"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ABI says how a tool's code is called.
type ABI string

const (
	ABIExtism ABI = "extism" // an Extism plugin export: JSON in, JSON out through the PDK
	ABIWASI   ABI = "wasi"   // a WASI command: JSON on stdin, JSON on stdout, exit 0 for success
	ABIExec   ABI = "exec"   // a native command, the fallback: needs a terminal_exec grant
)

// Run says how to run a tool. Wasm is relative to the pack root (checked at
// load to stay inside it); Exec is an argv whose "{{param}}" placeholders
// name input_schema properties.
type Run struct {
	Wasm     string
	Function string
	ABI      ABI
	Exec     []string
}

// OutputMode says how the host reads what a tool returns (docs/abi.md §1.4).
type OutputMode string

const (
	// OutputJSON, the default: the output is one JSON value (text that is
	// not JSON becomes a JSON string), handed on as plain text.
	OutputJSON OutputMode = "json"
	// OutputContent: the output is {"content": [BLOCK, ...]}, MCP's content
	// blocks (text, image, audio, embedded resources), checked by the host.
	OutputContent OutputMode = "content"
)

// Tool is one entry of tools.json with its input and output schemas compiled.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	Run         Run
	// Title is a name for people (MCP's title); empty when not declared.
	Title string
	// Output is how the output is read: OutputJSON or OutputContent.
	Output OutputMode
	// OutputSchema, when declared, is the JSON Schema an OutputJSON tool's
	// result object follows (MCP's outputSchema); ValidateOutput checks it.
	OutputSchema json.RawMessage
	// Idempotent: the author says that repeating a call with the same
	// arguments has no further effect (MCP's idempotentHint).
	Idempotent bool
	// File and Line say where the tool is declared, as its findings name
	// it: the tools.json path and the line of the tool's object. Checks
	// made outside this package (runtime.Check) report there.
	File string
	Line int

	schema    *jsonschema.Schema
	outSchema *jsonschema.Schema
	argv      *ArgvTemplate
}

// ErrOutputSchema is wrapped by every error of ValidateOutput.
var ErrOutputSchema = errors.New("packs: the result does not follow the tool's output_schema")

// ValidateOutput checks a tool's JSON result against its declared
// output_schema; a tool that declares none accepts any result. The error
// wraps ErrOutputSchema and says which field is wrong and why.
func (t *Tool) ValidateOutput(output []byte) error {
	if t.outSchema == nil {
		return nil
	}
	v, err := decodeJSONValue(output)
	if err != nil {
		return fmt.Errorf("%w: the result is not JSON: %v", ErrOutputSchema, err)
	}
	err = t.outSchema.Validate(v)
	var ve *jsonschema.ValidationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ve):
		return fmt.Errorf("%w: %s", ErrOutputSchema, (&inputError{Tool: t.Name, Problems: leafProblems(ve)}).problems())
	}
	return fmt.Errorf("%w: %v", ErrOutputSchema, err)
}

// Argv returns an exec tool's compiled argv template, through which the
// runtime builds every command line; nil for other tools and for a Tool
// that did not come from Load (its Expand refuses every input).
func (t *Tool) Argv() *ArgvTemplate { return t.argv }

// ErrInvalidInput is wrapped by every *inputError.
var ErrInvalidInput = errors.New("packs: invalid input")

// inputProblem is one way in which an input breaks a tool's schema.
type inputProblem struct {
	Field  string // JSON pointer into the input: "/path", "" for the whole input
	Reason string
}

// inputError reports why an input does not fit a tool's input_schema.
type inputError struct {
	Tool     string
	Problems []inputProblem
}

func (e *inputError) Error() string {
	return fmt.Sprintf("packs: invalid input for tool %q: %s", e.Tool, e.problems())
}

// problems lists the problems: `field "/x": reason; ...`.
func (e *inputError) problems() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Field == "" {
			b.WriteString(p.Reason)
		} else {
			fmt.Fprintf(&b, "field %q: %s", p.Field, p.Reason)
		}
	}
	return b.String()
}

// Unwrap returns ErrInvalidInput.
func (e *inputError) Unwrap() error { return ErrInvalidInput }

// ValidateInput checks a JSON input against the tool's compiled schema. An
// empty input stands for {}. The error is an *inputError wrapping
// ErrInvalidInput that says which field is wrong and why. A Tool that did not
// come from Load has no compiled schema and accepts nothing.
func (t *Tool) ValidateInput(input []byte) error {
	if t.schema == nil {
		return &inputError{Tool: t.Name, Problems: []inputProblem{{Reason: "the tool has no compiled input schema (tools come from packs.Load)"}}}
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	v, err := decodeJSONValue(input)
	if err != nil {
		return &inputError{Tool: t.Name, Problems: []inputProblem{{Reason: "the input is not valid JSON: " + err.Error()}}}
	}
	err = t.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &inputError{Tool: t.Name, Problems: []inputProblem{{Reason: err.Error()}}}
	}
	return &inputError{Tool: t.Name, Problems: leafProblems(ve)}
}

// decodeJSONValue decodes exactly one JSON value, numbers kept exact.
func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the JSON value")
	}
	return v, nil
}

// leafProblems flattens a validation error tree into its leaves, the
// errors that name a concrete field and reason, one per field.
func leafProblems(ve *jsonschema.ValidationError) []inputProblem {
	var out []inputProblem
	seen := map[string]bool{}
	pr := message.NewPrinter(language.English)
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			field := jsonPointer(e.InstanceLocation)
			if !seen[field] {
				seen[field] = true
				out = append(out, inputProblem{Field: field, Reason: e.ErrorKind.LocalizedString(pr)})
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

func jsonPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

const (
	toolsFile          = "tools.json"
	maxToolsBytes      = 1 << 20
	maxSchemaRefBytes  = 1 << 20
	maxJSONDepth       = 256
	maxToolNameChars   = 64
	toolNameSeparator  = "__"
	maxToolDescLines   = 4
	maxToolDescChars   = 400
	maxToolTitleChars  = 80
	placeholderOpen    = "{{"
	placeholderClose   = "}}"
	wasmMagic          = "\x00asm"
	schemaResourceBase = "tools.json."
)

// toolsParser turns one tools.json into tools and findings.
type toolsParser struct {
	data []byte
	nl   []int // offsets of '\n', for lines
	file string
	dir  string // absolute pack root
	pack string // the pack's name, the prefix of the names the model sees
	man  *Manifest
	rep  *reporter
	comp *jsonschema.Compiler
}

// parseTools reads tools.json: an array of tools or {"tools": [...]}. Each
// tool's input_schema is compiled here, once; remote $refs are refused.
func parseTools(data []byte, file, dir, pack string, man *Manifest, rep *reporter) []*Tool {
	p := &toolsParser{data: data, file: file, dir: dir, pack: pack, man: man, rep: rep}
	for i, c := range data {
		if c == '\n' {
			p.nl = append(p.nl, i)
		}
	}
	root, err := parseJSONTree(data)
	if err != nil {
		p.jsonError(err)
		return nil
	}
	list := root
	if root.kind == '{' {
		list = nil
		for _, m := range root.members {
			if m.key == "tools" {
				list = m.val
				continue
			}
			rep.warnf(file, p.line(m.off), "unknown-key", "%q is not a tools.json key: the file is an array of tools or {\"tools\": [...]}", m.key)
		}
		if list == nil {
			rep.errorf(file, p.line(root.off), "json-type", "the object has no \"tools\" array: write {\"tools\": [...]} or a plain array")
			return nil
		}
	}
	if list.kind != '[' {
		rep.errorf(file, p.line(list.off), "json-type", "tools must be a JSON array of tool objects, not %s", kindWord(list.kind))
		return nil
	}
	tools := make([]*Tool, 0, len(list.items))
	if len(list.items) == 0 {
		rep.warnf(file, p.line(list.off), "tools-empty", "no tool is declared: add tools or delete tools.json")
		return tools
	}
	p.comp = jsonschema.NewCompiler()
	p.comp.DefaultDraft(jsonschema.Draft2020)
	p.comp.AssertFormat()
	p.comp.UseLoader(packLoader{dir: dir})
	names := map[string]int{}
	for i, item := range list.items {
		t, ok := p.tool(i, item)
		if !ok {
			continue
		}
		line := p.line(item.off)
		if prev, dup := names[t.Name]; dup {
			rep.errorf(file, line, "tool-duplicate", "tool %q is already declared on line %d: rename or remove one", t.Name, prev)
			continue
		}
		names[t.Name] = line
		t.File, t.Line = file, line
		tools = append(tools, t)
	}
	return tools
}

func (p *toolsParser) line(off int) int {
	return sort.SearchInts(p.nl, off) + 1
}

func (p *toolsParser) jsonError(err error) {
	var se *json.SyntaxError
	var de *depthError
	var dk *duplicateKeyError
	switch {
	case errors.As(err, &se):
		p.rep.errorf(p.file, p.line(int(se.Offset)), "json-syntax", "%v: fix the JSON", se)
	case errors.As(err, &de):
		p.rep.errorf(p.file, p.line(de.off), "json-syntax", "values nest deeper than %d levels: flatten the document", maxJSONDepth)
	case errors.Is(err, io.ErrUnexpectedEOF):
		end := len(bytes.TrimRight(p.data, " \t\r\n"))
		p.rep.errorf(p.file, p.line(end), "json-syntax", "the JSON ends early: close every { and [")
	case errors.As(err, &dk):
		p.rep.errorf(p.file, p.line(dk.off), "json-duplicate-key", "key %q appears twice in one object: keep one", dk.key)
	default:
		p.rep.errorf(p.file, 0, "json-syntax", "%v: fix the JSON", err)
	}
}

// tool checks one tool object. It reports every problem it finds and
// returns ok only when the tool can be used.
func (p *toolsParser) tool(index int, v *jsonNode) (*Tool, bool) {
	line := p.line(v.off)
	if v.kind != '{' {
		p.rep.errorf(p.file, line, "json-type", "tool %d is %s, not a JSON object", index+1, kindWord(v.kind))
		return nil, false
	}
	t := &Tool{Output: OutputJSON}
	ok := true
	var schemaNode, outSchemaNode, runNode *jsonNode
	for _, m := range v.members {
		switch m.key {
		case "name", "description", "title", "output":
			if m.val.kind != '"' {
				p.rep.errorf(p.file, p.line(m.off), "json-type", "%s must be a string, not %s", m.key, kindWord(m.val.kind))
				ok = false
				continue
			}
			switch m.key {
			case "name":
				t.Name = m.val.str
			case "description":
				t.Description = m.val.str
			case "title":
				t.Title = m.val.str
			default:
				t.Output = OutputMode(m.val.str)
			}
		case "idempotent":
			if m.val.kind != 't' {
				p.rep.errorf(p.file, p.line(m.off), "json-type", "idempotent must be true or false, not %s", kindWord(m.val.kind))
				ok = false
				continue
			}
			t.Idempotent = string(p.data[m.val.off:m.val.end]) == "true"
		case "input_schema":
			schemaNode = m.val
		case "output_schema":
			outSchemaNode = m.val
		case "run":
			runNode = m.val
		default:
			hint := ""
			switch m.key {
			case "inputSchema":
				hint = " (did you mean \"input_schema\"?)"
			case "outputSchema":
				hint = " (did you mean \"output_schema\"?)"
			}
			p.rep.warnf(p.file, p.line(m.off), "unknown-key", "%q is not a tool field%s: tools have name, title, description, input_schema, output, output_schema, idempotent and run", m.key, hint)
		}
	}
	label := "tool " + strconv.Itoa(index+1)
	nameM, descM := v.member("name"), v.member("description")
	switch {
	case nameM == nil:
		p.rep.errorf(p.file, line, "tool-field-missing", "%s has no name: add \"name\"", label)
		ok = false
	case nameM.val.kind != '"': // reported above
	case t.Name == "":
		p.rep.errorf(p.file, p.line(nameM.off), "tool-name", "%s has an empty name", label)
		ok = false
	default:
		label = "tool " + strconv.Quote(t.Name)
		if err := p.checkToolName(t.Name); err != nil {
			p.rep.errorf(p.file, p.line(nameM.off), "tool-name", "%s %v", label, err)
			ok = false
		}
	}
	desc := strings.TrimSpace(t.Description)
	switch lines, chars := strings.Count(desc, "\n")+1, utf8.RuneCountInString(desc); {
	case descM != nil && descM.val.kind != '"': // reported above
	case desc == "":
		p.rep.errorf(p.file, line, "tool-field-missing", "%s has no description: say in 2-4 lines what it does and when to use it", label)
		ok = false
	case lines > maxToolDescLines || chars > maxToolDescChars:
		p.rep.warnf(p.file, p.line(descM.off), "tool-description-length",
			"%s has a description of %d lines and %d characters: keep it to %d lines and %d characters and move detail into the pack's docs (spec 004)",
			label, lines, chars, maxToolDescLines, maxToolDescChars)
	}
	if !p.toolMeta(index, t, label, v, outSchemaNode) {
		ok = false
	}
	var props *jsonNode // the compiled input_schema, whose properties exec placeholders may name
	if schemaNode == nil {
		p.rep.errorf(p.file, line, "tool-field-missing", "%s has no input_schema: add a JSON Schema with \"type\": \"object\"", label)
		ok = false
	} else {
		t.InputSchema = json.RawMessage(bytes.Clone(p.data[schemaNode.off:schemaNode.end]))
		var sok bool
		t.schema, sok = p.compileSchema(index, label, "input_schema", schemaNode, v.member("input_schema").off)
		if sok {
			props = schemaNode // a broken schema is reported once, not per placeholder
		}
		ok = ok && sok
	}
	if runNode == nil {
		p.rep.errorf(p.file, line, "tool-field-missing", "%s has no run: add {\"wasm\": ..., \"function\": ...}, {\"wasm\": ..., \"abi\": \"wasi\"} or {\"exec\": [...]}", label)
		return nil, false
	}
	run, argv, rok := p.run(label, runNode, props)
	t.Run = run
	if argv != nil {
		argv.tool = t.Name
		t.argv = argv
	}
	return t, ok && rok
}

func (p *toolsParser) checkToolName(name string) error {
	if len(name) > maxToolNameChars {
		return fmt.Errorf("is %d characters: use at most %d", len(name), maxToolNameChars)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("holds %q: model providers accept only a-z, A-Z, 0-9, \"_\" and \"-\" in tool names", r)
		}
	}
	if full := p.pack + toolNameSeparator + name; p.pack != "" && len(full) > maxToolNameChars {
		return fmt.Errorf("becomes %q (%d characters) with its pack prefix, over the %d that providers accept: shorten it", full, len(full), maxToolNameChars)
	}
	return nil
}

// argvParams returns what exec placeholders need of an object schema's
// top-level properties: their names, whether each is marked with
// optionMarker, and whether enum, const or pattern limits it. A marker that
// is not a boolean is reported.
func (p *toolsParser) argvParams(label string, schema *jsonNode) (map[string]argvParam, bool) {
	params := map[string]argvParam{}
	ok := true
	pm := schema.member("properties")
	if pm == nil {
		return params, true
	}
	for _, m := range pm.val.members {
		prm := argvParam{line: p.line(m.off)}
		if mark := m.val.member(optionMarker); mark != nil {
			if mark.val.kind != 't' {
				p.rep.errorf(p.file, p.line(mark.off), "exec-option", "%s property %q has %q: %s: write true or remove it", label, m.key, optionMarker, kindWord(mark.val.kind))
				ok = false
			}
			prm.option = mark.val.kind == 't' && string(p.data[mark.val.off:mark.val.end]) == "true"
		}
		prm.closed = m.val.member("enum") != nil || m.val.member("const") != nil || m.val.member("pattern") != nil
		params[m.key] = prm
	}
	return params, ok
}

// compileSchema compiles one input_schema or output_schema (field): both
// describe a JSON object, the arguments or the result.
func (p *toolsParser) compileSchema(index int, label, field string, n *jsonNode, keyOff int) (*jsonschema.Schema, bool) {
	what := "a tool's arguments are a JSON object"
	if field == "output_schema" {
		what = "MCP carries a tool's structured result as a JSON object"
	}
	if n.kind != '{' {
		p.rep.errorf(p.file, p.line(n.off), "schema-type", "%s %s is %s: write an object schema with \"type\": \"object\"", label, field, kindWord(n.kind))
		return nil, false
	}
	if typ := n.member("type"); typ == nil || typ.val.kind != '"' || typ.val.str != "object" {
		p.rep.errorf(p.file, p.line(keyOff), "schema-type", "%s %s must have \"type\": \"object\": %s", label, field, what)
		return nil, false
	}
	doc, err := decodeJSONValue(p.data[n.off:n.end])
	if err != nil {
		p.rep.errorf(p.file, p.line(n.off), "schema-compile", "%s %s: %v", label, field, err)
		return nil, false
	}
	loc := schemaURL(p.dir, index, field)
	if err := p.comp.AddResource(loc, doc); err != nil {
		p.rep.errorf(p.file, p.line(n.off), "schema-compile", "%s %s: %v", label, field, err)
		return nil, false
	}
	sch, err := compileSafely(p.comp, loc)
	if err != nil {
		p.schemaError(label, field, n, keyOff, loc, err)
		return nil, false
	}
	return sch, true
}

// toolMeta checks what a tool declares for its clients: title, output and
// output_schema (compiled here). Bad values are reported where they are.
func (p *toolsParser) toolMeta(index int, t *Tool, label string, v, outSchema *jsonNode) bool {
	ok := true
	if m := v.member("title"); m != nil && m.val.kind == '"' {
		switch title := strings.TrimSpace(t.Title); {
		case title == "" || title != t.Title:
			p.rep.errorf(p.file, p.line(m.off), "tool-title", "%s title %q is empty or has spaces around it: write a short name for people, or remove it", label, t.Title)
			ok = false
		case strings.ContainsAny(title, "\n\r\t") || utf8.RuneCountInString(title) > maxToolTitleChars:
			p.rep.errorf(p.file, p.line(m.off), "tool-title", "%s title is not one line of at most %d characters: shorten it; the description says the rest", label, maxToolTitleChars)
			ok = false
		}
	}
	if m := v.member("output"); m != nil && m.val.kind == '"' && t.Output != OutputJSON && t.Output != OutputContent {
		p.rep.errorf(p.file, p.line(m.off), "tool-output", "%s output %q: write \"json\" (the default: one JSON value) or \"content\" (text, image, audio and resource blocks, docs/abi.md §1.4)", label, t.Output)
		ok = false
	}
	if outSchema == nil {
		return ok
	}
	key := v.member("output_schema")
	if t.Output == OutputContent {
		p.rep.errorf(p.file, p.line(key.off), "tool-output", "%s has output_schema and \"output\": \"content\": a schema describes a JSON result; remove one", label)
		return false
	}
	t.OutputSchema = json.RawMessage(bytes.Clone(p.data[outSchema.off:outSchema.end]))
	sch, sok := p.compileSchema(index, label, "output_schema", outSchema, key.off)
	if !sok {
		return false
	}
	t.outSchema = sch
	return ok
}

// compileSafely compiles loc; the compiler reads untrusted schemas, so a
// panic inside it becomes an error.
func compileSafely(c *jsonschema.Compiler, loc string) (sch *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the schema compiler failed on this schema: %v", r)
		}
	}()
	return c.Compile(loc)
}

func (p *toolsParser) schemaError(label, field string, n *jsonNode, keyOff int, loc string, err error) {
	var sve *jsonschema.SchemaValidationError
	var lue *jsonschema.LoadURLError
	switch {
	case errors.As(err, &sve):
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			for _, prob := range leafProblems(ve) {
				at := n.pointer(prob.Field)
				where := prob.Field
				if where == "" {
					where = "/"
				}
				p.rep.errorf(p.file, p.line(at.off), "schema-compile", "%s %s at %s: %s: fix the schema (JSON Schema 2020-12)", label, field, where, prob.Reason)
			}
			return
		}
	case errors.As(err, &lue):
		ref := strings.TrimPrefix(lue.URL, "file://")
		if rel, rerr := filepath.Rel(p.dir, filepath.FromSlash(ref)); rerr == nil && strings.HasPrefix(lue.URL, "file://") {
			ref = rel
		}
		p.rep.errorf(p.file, p.line(keyOff), "schema-ref", "%s %s refers to %q, which cannot be loaded: %v: a schema may only $ref itself or files inside the pack", label, field, ref, lue.Err)
		return
	}
	msg := strings.ReplaceAll(err.Error(), loc, field)
	p.rep.errorf(p.file, p.line(keyOff), "schema-compile", "%s: %s: fix the schema (JSON Schema 2020-12)", label, msg)
}

// run checks the run object against the three forms. schema is the
// input_schema whose properties exec placeholders may name; nil skips that
// check. An exec tool's argv comes back compiled.
func (p *toolsParser) run(label string, n *jsonNode, schema *jsonNode) (Run, *ArgvTemplate, bool) {
	line := p.line(n.off)
	if n.kind != '{' {
		p.rep.errorf(p.file, line, "run-invalid", "%s run is %s, not an object", label, kindWord(n.kind))
		return Run{}, nil, false
	}
	var r Run
	ok := true
	var execNode *jsonNode
	var abi string
	for _, m := range n.members {
		ml := p.line(m.off)
		switch m.key {
		case "wasm", "function", "abi":
			if m.val.kind != '"' {
				p.rep.errorf(p.file, ml, "run-invalid", "%s run.%s must be a string, not %s", label, m.key, kindWord(m.val.kind))
				ok = false
				continue
			}
			switch m.key {
			case "wasm":
				r.Wasm = m.val.str
			case "function":
				r.Function = m.val.str
			default:
				abi = m.val.str
			}
		case "exec":
			execNode = m.val
		default:
			p.rep.errorf(p.file, ml, "run-invalid", "%s run has %q: run holds wasm with function or abi, or exec", label, m.key)
			ok = false
		}
	}
	if !ok {
		return r, nil, false
	}
	switch {
	case execNode != nil && (r.Wasm != "" || r.Function != "" || abi != ""):
		p.rep.errorf(p.file, line, "run-invalid", "%s run mixes exec with wasm, function or abi: keep one form", label)
		return r, nil, false
	case execNode != nil:
		r.ABI = ABIExec
		argv, ok := p.exec(label, execNode, &r, schema)
		return r, argv, ok
	case r.Wasm == "":
		p.rep.errorf(p.file, line, "run-invalid", "%s run names no code: use {\"wasm\": \"bin/x.wasm\", \"function\": \"fn\"}, {\"wasm\": \"bin/x.wasm\", \"abi\": \"wasi\"} or {\"exec\": [\"cmd\", \"{{param}}\"]}", label)
		return r, nil, false
	}
	switch ABI(abi) {
	case "", ABIExtism:
		r.ABI = ABIExtism
		if r.Function == "" {
			p.rep.errorf(p.file, line, "run-invalid", "%s is an Extism plugin call and names no export: add \"function\", or \"abi\": \"wasi\" for a WASI command", label)
			return r, nil, false
		}
	case ABIWASI:
		r.ABI = ABIWASI
		if r.Function != "" {
			p.rep.errorf(p.file, line, "run-invalid", "%s is a WASI command, which runs _start: remove \"function\"", label)
			return r, nil, false
		}
	default:
		p.rep.errorf(p.file, p.line(n.member("abi").off), "run-invalid", "%s run.abi %q is unknown: use \"extism\" or \"wasi\"", label, abi)
		return r, nil, false
	}
	wasmLine := p.line(n.member("wasm").off)
	rel, ok := checkWasmFile(p.dir, r.Wasm, p.file, wasmLine, p.rep)
	r.Wasm = rel
	return r, nil, ok
}

// checkWasmFile confines a .wasm path to the pack and checks that it exists
// and is WebAssembly. It returns the cleaned relative path.
func checkWasmFile(dir, rel, file string, line int, rep *reporter) (string, bool) {
	full, err := SafeJoin(dir, rel)
	if err != nil {
		if errors.Is(err, ErrPathEscape) {
			rep.errorf(file, line, "path-escape", "%v: keep modules inside the pack folder, as in \"bin/tool.wasm\"", why(err))
		} else {
			rep.errorf(file, line, "read-error", "%q: %v", rel, err)
		}
		return rel, false
	}
	f, _, err := openRegular(full)
	switch {
	case errors.Is(err, errNotRegular):
		rep.errorf(file, line, "wasm-format", "%q is not a regular file: point at the compiled .wasm", rel)
		return rel, false
	case err != nil:
		rep.errorf(file, line, "file-missing", "%q does not exist in the pack: build it or fix the path", rel)
		return rel, false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != wasmMagic {
		rep.errorf(file, line, "wasm-format", "%q is not a WebAssembly module (no \\0asm header): point at the compiled .wasm", rel)
		return rel, false
	}
	return path.Clean(filepath.ToSlash(rel)), true
}

// exec checks a native command's argv and compiles it against schema's
// properties (nil: the schema is broken, so only the syntax is checked).
func (p *toolsParser) exec(label string, n *jsonNode, r *Run, schema *jsonNode) (*ArgvTemplate, bool) {
	line := p.line(n.off)
	if n.kind != '[' || len(n.items) == 0 {
		p.rep.errorf(p.file, line, "run-invalid", "%s run.exec must be a non-empty array of strings: [\"cmd\", \"arg\", \"{{param}}\"]", label)
		return nil, false
	}
	for _, it := range n.items {
		if it.kind != '"' {
			p.rep.errorf(p.file, p.line(it.off), "run-invalid", "%s run.exec holds %s: every argument is a string", label, kindWord(it.kind))
			return nil, false
		}
		r.Exec = append(r.Exec, it.str)
	}
	ok := true
	cmd := r.Exec[0]
	if strings.Contains(cmd, placeholderOpen) {
		p.rep.errorf(p.file, p.line(n.items[0].off), "exec-command", "%s runs a command chosen by its input (%q): argv[0] must be a fixed program name", label, cmd)
		return nil, false
	}
	if err := (capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{cmd}}}).Validate(); err != nil {
		reason := err.Error()
		var pe *capability.PatternError
		if errors.As(err, &pe) {
			reason = pe.Reason
		}
		p.rep.errorf(p.file, p.line(n.items[0].off), "exec-command", "%s argv[0] %q: %s", label, cmd, reason)
		return nil, false
	}
	var params map[string]argvParam
	if schema != nil {
		params, ok = p.argvParams(label, schema)
	}
	argv, probs := compileArgv(r.Exec, params)
	for _, pr := range probs {
		at := pr.line
		if pr.elem >= 0 {
			at = p.line(n.items[pr.elem].off)
		}
		if pr.warn {
			p.rep.warnf(p.file, at, pr.rule, "%s %s", label, pr.msg)
		} else {
			p.rep.errorf(p.file, at, pr.rule, "%s %s", label, pr.msg)
			ok = false
		}
	}
	var req capability.ExecRequest
	if p.man != nil {
		req = p.man.Capabilities.TerminalExec
	}
	switch {
	case slices.Contains(req.Blocked, cmd):
		p.rep.errorf(p.file, p.line(n.items[0].off), "exec-blocked", "%s runs %q, which skill.toml blocks in terminal_exec: remove the tool or unblock the command", label, cmd)
		ok = false
	case !slices.Contains(req.Commands, cmd):
		p.rep.warnf(p.file, p.line(n.items[0].off), "exec-grant", "%s runs %q, which needs a terminal_exec grant: list it in skill.toml as [capabilities] terminal_exec = { commands = [%q] }", label, cmd, cmd)
	}
	if !ok {
		return nil, false
	}
	return argv, true
}

// schemaURL names tool i's schema (field) as a file beside tools.json, so
// relative $refs resolve against the pack root.
func schemaURL(dir string, i int, field string) string {
	name := schemaResourceBase + strconv.Itoa(i)
	if field != "input_schema" {
		name += "." + field
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir) + "/" + name}
	return u.String()
}

// packLoader serves $refs to JSON files inside the pack and refuses any
// other URL, so compiling a schema never touches the network.
type packLoader struct{ dir string }

func (l packLoader) Load(loc string) (any, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "file" || u.Host != "" {
		return nil, fmt.Errorf("%s references are not fetched", u.Scheme)
	}
	p := filepath.FromSlash(u.Path)
	rel, err := filepath.Rel(l.dir, p)
	if err != nil {
		return nil, errors.New("outside the pack")
	}
	full, err := SafeJoin(l.dir, rel)
	if err != nil {
		return nil, errors.New("outside the pack")
	}
	f, _, err := openRegular(full)
	if err != nil {
		return nil, errors.New("no such file in the pack")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSchemaRefBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSchemaRefBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxSchemaRefBytes)
	}
	return decodeJSONValue(b)
}

// jsonNode is a JSON value with the byte offsets that findings need.
type jsonNode struct {
	off, end int  // the value is data[off:end]
	kind     byte // '{', '[', '"' (string), '0' (number), 't' (boolean), 'n' (null)
	str      string
	members  []jsonMember // objects, in document order
	items    []*jsonNode  // arrays
}

type jsonMember struct {
	key string
	off int // offset of the key
	val *jsonNode
}

// member returns the named member of an object, or nil.
func (n *jsonNode) member(key string) *jsonMember {
	for i := range n.members {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// pointer follows a JSON pointer as far as it goes and returns the deepest
// node reached.
func (n *jsonNode) pointer(ptr string) *jsonNode {
	cur := n
	if ptr == "" {
		return cur
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch cur.kind {
		case '{':
			m := cur.member(tok)
			if m == nil {
				return cur
			}
			cur = m.val
		case '[':
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.items) {
				return cur
			}
			cur = cur.items[i]
		default:
			return cur
		}
	}
	return cur
}

func kindWord(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't':
		return "a boolean"
	}
	return "null"
}

type depthError struct{ off int }

func (e *depthError) Error() string { return "json: nested too deeply" }

type duplicateKeyError struct {
	key string
	off int
}

func (e *duplicateKeyError) Error() string { return "json: duplicate key " + strconv.Quote(e.key) }

// parseJSONTree parses data into a jsonNode tree, refusing duplicate keys
// (encoding/json would silently keep the last one) and deep nesting.
func parseJSONTree(data []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := readJSONNode(dec, data, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			return nil, &json.SyntaxError{Offset: int64(skipJSONSpace(data, root.end))}
		}
		return nil, err
	}
	return root, nil
}

func readJSONNode(dec *json.Decoder, data []byte, depth int) (*jsonNode, error) {
	start := skipJSONSpace(data, int(dec.InputOffset()))
	if depth > maxJSONDepth {
		return nil, &depthError{off: start}
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := &jsonNode{off: start}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = '{'
			seen := map[string]bool{}
			for dec.More() {
				koff := skipJSONSpace(data, int(dec.InputOffset()))
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				if seen[key] {
					return nil, &duplicateKeyError{key: key, off: koff}
				}
				seen[key] = true
				val, err := readJSONNode(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, jsonMember{key: key, off: koff, val: val})
			}
		case '[':
			n.kind = '['
			for dec.More() {
				val, err := readJSONNode(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, val)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	case string:
		n.kind, n.str = '"', t
	case json.Number:
		n.kind = '0'
	case bool:
		n.kind = 't'
	default:
		n.kind = 'n'
	}
	n.end = int(dec.InputOffset())
	return n, nil
}

// skipJSONSpace moves off past whitespace and the ',' and ':' separators
// that json.Decoder's offsets stop before.
func skipJSONSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}
