package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The schema check covers the JSON Schema validation keywords that real
// schemas use (drafts 4 to 2020-12): type, enum, const, the numeric, string,
// array and object bounds, properties and friends, the combinators, if/then/
// else, and local $ref. Annotation keywords are ignored as the specification
// says; any other keyword is reported back as unsupported rather than
// silently passing, so a "valid" answer never hides a rule that was skipped.

// SchemaError is one failed rule: where in the instance (a JSON Pointer),
// which keyword, and why.
type SchemaError struct {
	Pointer string `json:"pointer"`
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

var annotationKeywords = []string{
	"$schema", "$id", "$comment", "$anchor", "$defs", "definitions", "title", "description", "default",
	"examples", "format", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "$vocabulary",
}

const (
	maxSchemaErrors = 100
	maxSchemaDepth  = 256
)

type validator struct {
	root        any
	errs        []SchemaError
	unsupported []string
	regexps     map[string]*regexp.Regexp
	badSchema   error
}

// validateSchema checks inst against schema. A schema that is itself broken
// (a bad regex, a $ref that points nowhere) is an error; failed rules are not.
func validateSchema(schema, inst any) ([]SchemaError, []string, error) {
	v := &validator{root: schema, regexps: map[string]*regexp.Regexp{}}
	v.check(schema, inst, "", 0)
	if v.badSchema != nil {
		return nil, nil, v.badSchema
	}
	slices.Sort(v.unsupported)
	return v.errs, slices.Compact(v.unsupported), nil
}

func (v *validator) fail(ptr, kw, format string, args ...any) {
	if len(v.errs) < maxSchemaErrors {
		v.errs = append(v.errs, SchemaError{Pointer: ptr, Keyword: kw, Message: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) broken(format string, args ...any) {
	if v.badSchema == nil {
		v.badSchema = fmt.Errorf("schema: "+format, args...)
	}
}

// sub runs a nested check and reports whether it passed, without keeping its
// errors: anyOf, oneOf, not, if and contains need the verdict only.
func (v *validator) sub(schema, inst any, ptr string, depth int) bool {
	saved := v.errs
	v.errs = nil
	v.check(schema, inst, ptr, depth)
	ok := len(v.errs) == 0
	v.errs = saved
	return ok
}

func (v *validator) check(schema, inst any, ptr string, depth int) {
	if v.badSchema != nil {
		return
	}
	if depth > maxSchemaDepth {
		v.broken("nested deeper than %d levels (a $ref loop?)", maxSchemaDepth)
		return
	}
	switch s := schema.(type) {
	case bool:
		if !s {
			v.fail(ptr, "false", "the schema allows nothing here")
		}
		return
	case *object:
		for _, m := range s.members {
			v.keyword(s, m.key, m.val, inst, ptr, depth)
		}
	default:
		v.broken("a schema is an object or a boolean, got %s", typeName(schema))
	}
}

func (v *validator) keyword(s *object, kw string, arg, inst any, ptr string, depth int) {
	switch kw {
	case "$ref":
		ref, _ := arg.(string)
		target, ok := v.resolve(ref)
		if !ok {
			if strings.HasPrefix(ref, "#") {
				v.broken("$ref %q points nowhere in this schema", ref)
			} else {
				v.unsupported = append(v.unsupported, "$ref (only local #/... references are followed)")
			}
			return
		}
		v.check(target, inst, ptr, depth+1)
	case "type":
		v.checkType(arg, inst, ptr)
	case "enum":
		vals, ok := arg.([]any)
		if !ok {
			v.broken("enum must be an array")
			return
		}
		if !slices.ContainsFunc(vals, func(e any) bool { return equal(e, inst) }) {
			v.fail(ptr, kw, "value %s is not one of %s", short(inst), short(arg))
		}
	case "const":
		if !equal(arg, inst) {
			v.fail(ptr, kw, "value %s is not %s", short(inst), short(arg))
		}
	case "multipleOf", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum":
		v.checkNumber(s, kw, arg, inst, ptr)
	case "maxLength", "minLength", "pattern":
		v.checkString(kw, arg, inst, ptr)
	case "items", "prefixItems", "maxItems", "minItems", "uniqueItems", "contains", "minContains", "maxContains", "additionalItems":
		v.checkArray(s, kw, arg, inst, ptr, depth)
	case "properties", "patternProperties", "additionalProperties", "required", "maxProperties", "minProperties",
		"propertyNames", "dependentRequired":
		v.checkObject(s, kw, arg, inst, ptr, depth)
	case "allOf", "anyOf", "oneOf":
		subs, ok := arg.([]any)
		if !ok || len(subs) == 0 {
			v.broken("%s must be a non-empty array of schemas", kw)
			return
		}
		v.checkCombinator(kw, subs, inst, ptr, depth)
	case "not":
		if v.sub(arg, inst, ptr, depth+1) {
			v.fail(ptr, kw, "value must not match the \"not\" schema")
		}
	case "if":
		branch := "else"
		if v.sub(arg, inst, ptr, depth+1) {
			branch = "then"
		}
		if b, ok := s.get(branch); ok {
			v.check(b, inst, ptr, depth+1)
		}
	case "then", "else":
		// applied by "if"
	default:
		if !slices.Contains(annotationKeywords, kw) {
			v.unsupported = append(v.unsupported, kw)
		}
	}
}

// resolve follows a local reference: "#" or a JSON Pointer "#/a/b".
func (v *validator) resolve(ref string) (any, bool) {
	rest, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	cur := v.root
	if rest == "" {
		return cur, true
	}
	if !strings.HasPrefix(rest, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(rest[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			if cur, ok = c.get(tok); !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func (v *validator) checkType(arg, inst any, ptr string) {
	var want []string
	switch t := arg.(type) {
	case string:
		want = []string{t}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				want = append(want, s)
			}
		}
	}
	if len(want) == 0 {
		v.broken("type must be a type name or an array of them")
		return
	}
	got := typeName(inst)
	for _, w := range want {
		if w == got || w == "integer" && isInteger(inst) {
			return
		}
	}
	v.fail(ptr, "type", "want %s, got %s", strings.Join(want, " or "), got)
}

func isInteger(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f)
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func (v *validator) checkNumber(s *object, kw string, arg, inst any, ptr string) {
	x, isNum := number(inst)
	lim, limOK := number(arg)
	if _, ok := arg.(bool); ok && (kw == "exclusiveMaximum" || kw == "exclusiveMinimum") {
		return // the draft 4 form: a flag on maximum or minimum, applied there
	}
	if !limOK {
		v.broken("%s must be a number", kw)
		return
	}
	if kw == "multipleOf" && lim <= 0 {
		v.broken("multipleOf must be greater than 0")
		return
	}
	if !isNum {
		return
	}
	exclusive := func(flag string) bool {
		b, _ := s.get(flag)
		return b == true
	}
	switch kw {
	case "multipleOf":
		if q := x / lim; math.Abs(q-math.Round(q)) > 1e-9 {
			v.fail(ptr, kw, "%s is not a multiple of %s", short(inst), short(arg))
		}
	case "maximum":
		if x > lim || exclusive("exclusiveMaximum") && x == lim {
			v.fail(ptr, kw, "%s is greater than the maximum %s", short(inst), short(arg))
		}
	case "minimum":
		if x < lim || exclusive("exclusiveMinimum") && x == lim {
			v.fail(ptr, kw, "%s is less than the minimum %s", short(inst), short(arg))
		}
	case "exclusiveMaximum":
		if x >= lim {
			v.fail(ptr, kw, "%s must be less than %s", short(inst), short(arg))
		}
	case "exclusiveMinimum":
		if x <= lim {
			v.fail(ptr, kw, "%s must be greater than %s", short(inst), short(arg))
		}
	}
}

func count(arg any) (int, bool) {
	f, ok := number(arg)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

func (v *validator) regexp(pattern string) *regexp.Regexp {
	if re, ok := v.regexps[pattern]; ok {
		return re
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		v.broken("pattern %q is not a valid regular expression (RE2 syntax): %v", pattern, err)
		return nil
	}
	v.regexps[pattern] = re
	return re
}

func (v *validator) checkString(kw string, arg, inst any, ptr string) {
	str, isStr := inst.(string)
	if kw == "pattern" {
		p, ok := arg.(string)
		if !ok {
			v.broken("pattern must be a string")
			return
		}
		re := v.regexp(p)
		if re != nil && isStr && !re.MatchString(str) {
			v.fail(ptr, kw, "%s does not match the pattern %q", short(inst), p)
		}
		return
	}
	n, ok := count(arg)
	if !ok {
		v.broken("%s must be a whole number ≥ 0", kw)
		return
	}
	if !isStr {
		return
	}
	l := utf8.RuneCountInString(str)
	if kw == "maxLength" && l > n {
		v.fail(ptr, kw, "string has %d characters, more than %d", l, n)
	}
	if kw == "minLength" && l < n {
		v.fail(ptr, kw, "string has %d characters, fewer than %d", l, n)
	}
}

func (v *validator) checkArray(s *object, kw string, arg, inst any, ptr string, depth int) {
	arr, isArr := inst.([]any)
	switch kw {
	case "items", "prefixItems":
		if !isArr {
			return
		}
		if tuple, ok := arg.([]any); ok { // prefixItems, or the draft 4 tuple form of items
			for i := 0; i < len(tuple) && i < len(arr); i++ {
				v.check(tuple[i], arr[i], ptr+"/"+strconv.Itoa(i), depth+1)
			}
			return
		}
		if kw == "prefixItems" {
			v.broken("prefixItems must be an array of schemas")
			return
		}
		start := 0
		if p, ok := s.get("prefixItems"); ok {
			if tuple, ok := p.([]any); ok {
				start = len(tuple)
			}
		}
		for i := start; i < len(arr); i++ {
			v.check(arg, arr[i], ptr+"/"+strconv.Itoa(i), depth+1)
		}
	case "additionalItems":
		items, _ := s.get("items")
		tuple, ok := items.([]any)
		if !ok || !isArr {
			return
		}
		for i := len(tuple); i < len(arr); i++ {
			v.check(arg, arr[i], ptr+"/"+strconv.Itoa(i), depth+1)
		}
	case "maxItems", "minItems", "minContains", "maxContains":
		n, ok := count(arg)
		if !ok {
			v.broken("%s must be a whole number ≥ 0", kw)
			return
		}
		if !isArr {
			return
		}
		if kw == "maxItems" && len(arr) > n {
			v.fail(ptr, kw, "array has %d items, more than %d", len(arr), n)
		}
		if kw == "minItems" && len(arr) < n {
			v.fail(ptr, kw, "array has %d items, fewer than %d", len(arr), n)
		}
	case "uniqueItems":
		if arg != true || !isArr {
			return
		}
		for i := range arr {
			for j := i + 1; j < len(arr); j++ {
				if equal(arr[i], arr[j]) {
					v.fail(ptr, kw, "items %d and %d are equal", i, j)
					return
				}
			}
		}
	case "contains":
		if !isArr {
			return
		}
		hits := 0
		for i, e := range arr {
			if v.sub(arg, e, ptr+"/"+strconv.Itoa(i), depth+1) {
				hits++
			}
		}
		lo, hi := 1, len(arr)
		if m, ok := s.get("minContains"); ok {
			lo, _ = count(m)
		}
		if m, ok := s.get("maxContains"); ok {
			hi, _ = count(m)
		}
		if hits < lo {
			v.fail(ptr, kw, "%d items match the \"contains\" schema, fewer than %d", hits, lo)
		}
		if hits > hi {
			v.fail(ptr, kw, "%d items match the \"contains\" schema, more than %d", hits, hi)
		}
	}
}

func (v *validator) checkObject(s *object, kw string, arg, inst any, ptr string, depth int) {
	o, isObj := inst.(*object)
	switch kw {
	case "properties":
		props, ok := arg.(*object)
		if !ok {
			v.broken("properties must be an object of schemas")
			return
		}
		if !isObj {
			return
		}
		for _, p := range props.members {
			if val, ok := o.get(p.key); ok {
				v.check(p.val, val, ptr+"/"+escapePointer(p.key), depth+1)
			}
		}
	case "patternProperties":
		pats, ok := arg.(*object)
		if !ok {
			v.broken("patternProperties must be an object of schemas")
			return
		}
		for _, p := range pats.members {
			re := v.regexp(p.key)
			if re == nil || !isObj {
				continue
			}
			for _, m := range o.members {
				if re.MatchString(m.key) {
					v.check(p.val, m.val, ptr+"/"+escapePointer(m.key), depth+1)
				}
			}
		}
	case "additionalProperties":
		if !isObj {
			return
		}
		props, _ := s.get("properties")
		known, _ := props.(*object)
		pats, _ := s.get("patternProperties")
		patObj, _ := pats.(*object)
		for _, m := range o.members {
			if known != nil {
				if _, ok := known.get(m.key); ok {
					continue
				}
			}
			if patObj != nil && slices.ContainsFunc(patObj.members, func(p member) bool {
				re := v.regexp(p.key)
				return re != nil && re.MatchString(m.key)
			}) {
				continue
			}
			if arg == false {
				v.fail(ptr+"/"+escapePointer(m.key), kw, "property %q is not allowed", m.key)
				continue
			}
			v.check(arg, m.val, ptr+"/"+escapePointer(m.key), depth+1)
		}
	case "required":
		names, ok := arg.([]any)
		if !ok {
			v.broken("required must be an array of property names")
			return
		}
		if !isObj {
			return
		}
		for _, n := range names {
			name, _ := n.(string)
			if _, ok := o.get(name); !ok {
				v.fail(ptr, kw, "missing required property %q", name)
			}
		}
	case "maxProperties", "minProperties":
		n, ok := count(arg)
		if !ok {
			v.broken("%s must be a whole number ≥ 0", kw)
			return
		}
		if !isObj {
			return
		}
		if kw == "maxProperties" && len(o.members) > n {
			v.fail(ptr, kw, "object has %d properties, more than %d", len(o.members), n)
		}
		if kw == "minProperties" && len(o.members) < n {
			v.fail(ptr, kw, "object has %d properties, fewer than %d", len(o.members), n)
		}
	case "propertyNames":
		if !isObj {
			return
		}
		for _, m := range o.members {
			v.check(arg, m.key, ptr+"/"+escapePointer(m.key), depth+1)
		}
	case "dependentRequired":
		deps, ok := arg.(*object)
		if !ok {
			v.broken("dependentRequired must be an object of arrays")
			return
		}
		if !isObj {
			return
		}
		for _, d := range deps.members {
			if _, ok := o.get(d.key); !ok {
				continue
			}
			need, _ := d.val.([]any)
			for _, n := range need {
				name, _ := n.(string)
				if _, ok := o.get(name); !ok {
					v.fail(ptr, kw, "property %q requires property %q", d.key, name)
				}
			}
		}
	}
}

func (v *validator) checkCombinator(kw string, subs []any, inst any, ptr string, depth int) {
	if kw == "allOf" {
		for _, s := range subs {
			v.check(s, inst, ptr, depth+1)
		}
		return
	}
	matched := 0
	for _, s := range subs {
		if v.sub(s, inst, ptr, depth+1) {
			matched++
		}
	}
	switch {
	case kw == "anyOf" && matched == 0:
		v.fail(ptr, kw, "value matches none of the %d anyOf schemas", len(subs))
	case kw == "oneOf" && matched != 1:
		v.fail(ptr, kw, "value matches %d of the oneOf schemas, want exactly 1", matched)
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// short renders a value for a message, cut to 60 bytes.
func short(v any) string {
	b := appendJSON(nil, v)
	if len(b) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return string(b[:cut]) + "..."
	}
	return string(b)
}
