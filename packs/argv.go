package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// optionMarker is the annotation on an input_schema property that lets its
// values begin with "-": {"type": "string", "enum": ["-r", "-n"],
// "x-packs-option": true}. Without it, a value that would begin an argv
// element with "-" is refused, because the program would read it as an
// option. JSON Schema ignores the annotation; only exec templates read it.
const optionMarker = "x-packs-option"

// ArgvTemplate is a tool's run.exec compiled once, when tools.json is
// loaded: argv[0] is a fixed program, and every "{{name}}" names an
// input_schema property. Expand is the only place where values enter an
// argv, so the rules below hold for every exec tool:
//
//   - Each element of the template stays exactly one element: a value is
//     never split, joined with its neighbours, dropped or read by a shell.
//   - A string is inserted as it is; a number, boolean, array or object as
//     its compact JSON text (a number as written: 1.5e3 stays 1.5e3). An
//     empty string is an empty element (say minLength in the schema to
//     refuse it). An absent or null value is refused.
//   - A value holding a NUL byte is refused: no argv can carry it.
//   - An element is an option when it begins with "-". The text that makes
//     it one (its leading dashes and the character after them) must come
//     from the template or from a property marked with optionMarker.
//     "--out={{file}}" and "-k{{key}}" are safe whatever the value;
//     "{{file}}" or "{{file}}.txt" with file = "-o/tmp/x" is refused, and so
//     is the number -5 in an element of its own.
//
// The zero of *ArgvTemplate (a Tool that did not come from Load, or a wasm
// tool) expands nothing.
type ArgvTemplate struct {
	tool  string
	elems [][]argvPart
}

// argvPart is a literal run of text, or a placeholder.
type argvPart struct {
	text   string // the literal, or the property name of a placeholder
	param  bool
	option bool // the property carries optionMarker: its values may begin with "-"
}

// argvParam is what the template needs to know of an input_schema property.
type argvParam struct {
	option bool // marked with optionMarker: true
	closed bool // enum, const or pattern limit its values
	line   int  // where the property is declared, for findings
}

// argvProblem is a finding about one element of run.exec (elem < 0: about
// the schema property at line).
type argvProblem struct {
	elem int
	line int
	rule string
	msg  string
	warn bool
}

// compileArgv parses argv against the input_schema properties params. It
// returns the template (its tool name is the caller's to set) when no
// problem is an error. A nil params (the
// schema is broken and reported already) checks the syntax only and
// returns no template. argv[0] is checked by the caller, against the
// capability pattern rules.
func compileArgv(argv []string, params map[string]argvParam) (*ArgvTemplate, []argvProblem) {
	var probs []argvProblem
	errs := false
	add := func(p argvProblem) {
		probs = append(probs, p)
		errs = errs || !p.warn
	}
	t := &ArgvTemplate{elems: make([][]argvPart, len(argv))}
	afterEnd := false // a literal "--" came before: later elements are operands for most programs
	openUse := map[string]bool{}
	for i, arg := range argv {
		if strings.IndexByte(arg, 0) >= 0 {
			add(argvProblem{elem: i, rule: "exec-argument", msg: fmt.Sprintf("argument %d holds a NUL byte, which no command line can carry", i)})
			continue
		}
		parts, err := parseArgvElement(arg)
		if err != nil {
			add(argvProblem{elem: i, rule: "exec-placeholder", msg: fmt.Sprintf("argument %q %v", arg, err)})
			continue
		}
		lits := "" // the element's literal text before this part
		first := true
		for j := range parts {
			p := &parts[j]
			if !p.param {
				lits += p.text
				continue
			}
			if params == nil {
				continue
			}
			prm, ok := params[p.text]
			if !ok {
				add(argvProblem{elem: i, rule: "exec-placeholder", msg: fmt.Sprintf("argument %q uses {{%s}}, which is not a property of input_schema: add the property or fix the name", arg, p.text)})
				continue
			}
			p.option = prm.option
			dashes := strings.Trim(lits, "-") == "" // nothing but dashes before: this value may start an option
			if first && lits != "" && dashes && !prm.option {
				add(argvProblem{elem: i, rule: "exec-option", msg: fmt.Sprintf("argument %q lets the input choose which option %s reads: write the option name (\"--name={{%s}}\"), or mark the property with %q: true and restrict it with enum", arg, argv[0], p.text, optionMarker)})
			}
			if prm.option && !prm.closed && !afterEnd && dashes {
				openUse[p.text] = true
			}
			first = false
		}
		t.elems[i] = parts
		if arg == "--" {
			afterEnd = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(openUse)) {
		add(argvProblem{elem: -1, line: params[name].line, warn: true, rule: "exec-option-open",
			msg: fmt.Sprintf("property %q is marked %q but neither enum, const nor pattern limits it: the input can pass any option of the program; list the options it may take", name, optionMarker)})
	}
	if errs || params == nil {
		return nil, probs
	}
	return t, probs
}

// parseArgvElement splits one argv element into literals and "{{name}}"
// placeholders (spaces inside the braces are allowed).
func parseArgvElement(arg string) ([]argvPart, error) {
	var parts []argvPart
	rest := arg
	for {
		i := strings.Index(rest, placeholderOpen)
		lit := rest
		if i >= 0 {
			lit = rest[:i]
		}
		if strings.Contains(lit, placeholderClose) {
			return nil, errors.New("has \"}}\" without \"{{\"")
		}
		if lit != "" {
			parts = append(parts, argvPart{text: lit})
		}
		if i < 0 {
			return parts, nil
		}
		rest = rest[i+len(placeholderOpen):]
		j := strings.Index(rest, placeholderClose)
		if j < 0 {
			return nil, errors.New("opens \"{{\" without closing \"}}\"")
		}
		name := strings.TrimSpace(rest[:j])
		if !plainKey(name) {
			return nil, fmt.Errorf("has the placeholder {{%s}}: a placeholder is {{name}} with a-z, A-Z, 0-9, \"_\" or \"-\"", rest[:j])
		}
		parts = append(parts, argvPart{text: name, param: true})
		rest = rest[j+len(placeholderClose):]
	}
}

// Expand fills the template from a tool's input, a JSON object that has
// passed the tool's schema (empty stands for {}). It returns the argv to
// run, or an *inputError wrapping ErrInvalidInput that names the property
// whose value breaks a rule of ArgvTemplate.
func (t *ArgvTemplate) Expand(input json.RawMessage) ([]string, error) {
	if t == nil {
		return nil, &inputError{Problems: []inputProblem{{Reason: "the tool has no compiled exec template (tools come from packs.Load)"}}}
	}
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(input, &args); err != nil || input[0] != '{' {
		return nil, t.refuse("", "an exec tool's input must be one JSON object")
	}
	var err error
	argv := make([]string, len(t.elems))
	for i, parts := range t.elems {
		var b strings.Builder
		decided := false // the element's first non-dash character is placed
		for _, p := range parts {
			s := p.text
			if p.param {
				if s, err = argText(args[p.text]); err != nil {
					return nil, t.refuse(p.text, err.Error())
				}
				if strings.IndexByte(s, 0) >= 0 {
					return nil, t.refuse(p.text, "the value holds a NUL byte, which no command line can carry")
				}
				if !decided && s != "" && !p.option && (b.Len() > 0 || s[0] == '-') {
					return nil, t.refuse(p.text, fmt.Sprintf("the value would make argument %d an option, which the tool does not allow: pass a value that does not begin with \"-\" (\"./-x\" for a file named -x)", i))
				}
			}
			b.WriteString(s)
			decided = decided || strings.TrimLeft(b.String(), "-") != ""
		}
		argv[i] = b.String()
	}
	return argv, nil
}

func (t *ArgvTemplate) refuse(field, reason string) error {
	if field != "" {
		field = "/" + field // a plain name: nothing to escape in the JSON pointer
	}
	return &inputError{Tool: t.tool, Problems: []inputProblem{{Field: field, Reason: reason}}}
}

// argText is the text a placeholder becomes.
func argText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", errors.New("the command line needs this value: pass it")
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var compact bytes.Buffer
	err := json.Compact(&compact, raw)
	return compact.String(), err
}
