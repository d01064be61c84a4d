package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A JSON value here is one of: nil, bool, json.Number, string, []any, *object.
// Objects keep their keys in document order so that a query or a transform
// hands back records the way the person wrote them, not sorted by Go's map.

// member is one key of an object.
type member struct {
	key string
	val any
}

// object is a JSON object that remembers key order. A repeated key keeps its
// first position and its last value, as most JSON parsers do.
type object struct {
	members []member
}

func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

func (o *object) set(key string, v any) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].val = v
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

func (o *object) remove(key string) (any, bool) {
	for i, m := range o.members {
		if m.key == key {
			o.members = append(o.members[:i], o.members[i+1:]...)
			return m.val, true
		}
	}
	return nil, false
}

// SyntaxError is malformed JSON text, located by line and column (both from 1).
type SyntaxError struct {
	Line, Column int
	Msg          string
	Hint         string
}

func (e *SyntaxError) Error() string {
	s := fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

// parseJSON decodes exactly one JSON value from text (RFC 8259), keeping key
// order and exact numbers. Anything after the value other than white space is
// an error. Errors are *SyntaxError with the line and column of the offending
// character and, for the usual hand-written mistakes, a hint.
func parseJSON(text []byte) (any, error) {
	d := &decoder{text: text}
	d.space()
	if d.pos == len(text) {
		return nil, &SyntaxError{Line: 1, Column: 1, Msg: "empty document", Hint: "pass a JSON value such as {} or []"}
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos < len(text) {
		return nil, d.fail("unexpected data after the JSON value", "a document holds exactly one value: wrap several in an array")
	}
	return v, nil
}

type decoder struct {
	text []byte
	pos  int
}

func (d *decoder) space() {
	for d.pos < len(d.text) {
		switch d.text[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) fail(msg, hint string) *SyntaxError {
	return locate(d.text, int64(d.pos), msg, hint)
}

// unexpected describes the byte at d.pos, or the end of input.
func (d *decoder) unexpected(want string) *SyntaxError {
	if d.pos >= len(d.text) {
		return d.fail("unexpected end of JSON, expected "+want, "a string, array or object is not closed")
	}
	r, _ := utf8.DecodeRune(d.text[d.pos:])
	return d.fail(fmt.Sprintf("unexpected %q, expected %s", r, want), hint(d.text, int64(d.pos)))
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail(fmt.Sprintf("nesting deeper than %d levels", maxDepth), "flatten the document")
	}
	if d.pos >= len(d.text) {
		return nil, d.unexpected("a value")
	}
	switch c := d.text[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.unexpected("a value")
}

func (d *decoder) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if d.pos >= len(d.text) || d.text[d.pos] != word[i] {
			return d.unexpected(fmt.Sprintf("%q (in the literal %s)", word[i], word))
		}
		d.pos++
	}
	return nil
}

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // '{'
	o := &object{}
	d.space()
	if d.pos < len(d.text) && d.text[d.pos] == '}' {
		d.pos++
		return o, nil
	}
	for {
		d.space()
		if d.pos >= len(d.text) || d.text[d.pos] != '"' {
			return nil, d.unexpected("a double-quoted key")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.text) || d.text[d.pos] != ':' {
			return nil, d.unexpected("':' after the key")
		}
		d.pos++
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		o.set(key, v)
		d.space()
		if d.pos < len(d.text) && d.text[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.text) && d.text[d.pos] == '}' {
			d.pos++
			return o, nil
		}
		return nil, d.unexpected("',' or '}'")
	}
}

func (d *decoder) array(depth int) (any, error) {
	d.pos++ // '['
	a := []any{}
	d.space()
	if d.pos < len(d.text) && d.text[d.pos] == ']' {
		d.pos++
		return a, nil
	}
	for {
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		if d.pos < len(d.text) && d.text[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.text) && d.text[d.pos] == ']' {
			d.pos++
			return a, nil
		}
		return nil, d.unexpected("',' or ']'")
	}
}

func (d *decoder) number() (any, error) {
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.text) && d.text[d.pos] >= '0' && d.text[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.text[d.pos] == '-' {
		d.pos++
	}
	intStart := d.pos
	if digits() == 0 {
		return nil, d.unexpected("a digit")
	}
	if d.text[intStart] == '0' && d.pos-intStart > 1 {
		d.pos = intStart + 1
		return nil, d.fail("numbers cannot have leading zeros", "write 7, not 07; quote codes such as \"007\"")
	}
	if d.pos < len(d.text) && d.text[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return nil, d.unexpected("a digit after the decimal point")
		}
	}
	if d.pos < len(d.text) && (d.text[d.pos] == 'e' || d.text[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.text) && (d.text[d.pos] == '+' || d.text[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return nil, d.unexpected("a digit in the exponent")
		}
	}
	return json.Number(d.text[start:d.pos]), nil
}

// str reads a string starting at the opening quote. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func (d *decoder) str() (string, error) {
	open := d.pos
	d.pos++
	var b []byte
	for d.pos < len(d.text) {
		c := d.text[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(b), nil
		case c == '\\':
			if err := d.escape(&b); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", d.fail("control character in a string", "write a newline as \\n and a tab as \\t")
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.text[d.pos:])
			b = utf8.AppendRune(b, r)
			d.pos += size
		}
	}
	d.pos = open
	return "", d.fail("unterminated string", "close it with a double quote")
}

func (d *decoder) escape(b *[]byte) error {
	d.pos++ // backslash
	if d.pos >= len(d.text) {
		return d.unexpected("an escape character")
	}
	c := d.text[d.pos]
	d.pos++
	switch c {
	case '"', '\\', '/':
		*b = append(*b, c)
	case 'b':
		*b = append(*b, '\b')
	case 'f':
		*b = append(*b, '\f')
	case 'n':
		*b = append(*b, '\n')
	case 'r':
		*b = append(*b, '\r')
	case 't':
		*b = append(*b, '\t')
	case 'u':
		r, ok := d.hex4()
		if !ok {
			return d.unexpected("four hex digits after \\u")
		}
		if utf16.IsSurrogate(r) {
			save := d.pos
			if d.pos+1 < len(d.text) && d.text[d.pos] == '\\' && d.text[d.pos+1] == 'u' {
				d.pos += 2
				if r2, ok := d.hex4(); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						*b = utf8.AppendRune(*b, dec)
						return nil
					}
				}
			}
			d.pos = save
			r = utf8.RuneError
		}
		*b = utf8.AppendRune(*b, r)
	default:
		d.pos--
		return d.fail(fmt.Sprintf("unknown escape \\%c", c), "to write a backslash, double it: \\\\")
	}
	return nil
}

func (d *decoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.text) {
		return 0, false
	}
	var r rune
	for _, c := range d.text[d.pos : d.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.pos += 4
	return r, true
}

// hint guesses the usual cause of a syntax error at off.
func hint(text []byte, off int64) string {
	if off < 0 || off >= int64(len(text)) {
		return ""
	}
	c := text[off]
	prev := byte(0)
	for i := off - 1; i >= 0; i-- {
		if b := text[i]; b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			prev = b
			break
		}
	}
	switch {
	case (c == '}' || c == ']') && prev == ',':
		return "trailing comma: remove the comma before the closing bracket"
	case c == '\'':
		return "strings and keys take double quotes, not single quotes"
	case c == '/' || c == '#':
		return "JSON has no comments: remove them"
	case (prev == '{' || prev == ',') && isNameByte(c):
		return "object keys must be double-quoted strings"
	case c == '"' || c == '{' || c == '[' || isNameByte(c):
		if prev == '"' || prev == '}' || prev == ']' || isNameByte(prev) {
			return "a comma is missing between two values"
		}
	}
	return ""
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// locate builds a *SyntaxError at byte offset off of text.
func locate(text []byte, off int64, msg, hint string) *SyntaxError {
	if off > int64(len(text)) {
		off = int64(len(text))
	}
	if off < 0 {
		off = 0
	}
	line, col := 1, 1
	for _, r := range string(text[:off]) {
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: msg, Hint: hint}
}

// appendJSON encodes v compactly, without escaping HTML characters, keeping
// object key order.
func appendJSON(b []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, t)
	case json.Number:
		return append(b, t...)
	case float64:
		return strconv.AppendFloat(b, t, 'g', -1, 64)
	case int:
		return strconv.AppendInt(b, int64(t), 10)
	case string:
		return appendString(b, t)
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		return append(b, ']')
	case *object:
		b = append(b, '{')
		for i, m := range t.members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.key)
			b = append(b, ':')
			b = appendJSON(b, m.val)
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("json-tools: cannot encode %T", v))
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// obj builds an object from alternating keys and values, for results.
func obj(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.members = append(o.members, member{kv[i].(string), kv[i+1]})
	}
	return o
}

// typeName names the JSON type of v for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64, int:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *object:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// clone deep-copies v so a transform never aliases its input.
func clone(v any) any {
	switch t := v.(type) {
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = clone(e)
		}
		return c
	case *object:
		c := &object{members: make([]member, len(t.members))}
		for i, m := range t.members {
			c.members[i] = member{m.key, clone(m.val)}
		}
		return c
	}
	return v
}

// equal reports deep JSON equality (numbers compared by value).
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, ex := x.Float64()
		fy, ey := y.Float64()
		if ex != nil || ey != nil {
			return x == y
		}
		return fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.members) != len(y.members) {
			return false
		}
		for _, m := range x.members {
			v, ok := y.get(m.key)
			if !ok || !equal(m.val, v) {
				return false
			}
		}
		return true
	}
	return a == b
}
