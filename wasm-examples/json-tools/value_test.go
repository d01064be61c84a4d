package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseJSONKeepsOrderAndNumbers(t *testing.T) {
	in := `{"z": 1, "a": {"y": 12345678901234567890, "b": 1.50}, "m": [true, null, "x"], "z": 2}`
	v, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(appendJSON(nil, v))
	want := `{"z":2,"a":{"y":12345678901234567890,"b":1.50},"m":[true,null,"x"]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestAppendStringEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\tnl\ncr\r", `"tab\tnl\ncr\r"`},
		{"\x01\x1f", `"\u0001\u001f"`},
		{"<html>&", `"<html>&"`},
		{"é ✓ 😀", `"é ✓ 😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"bad\xffbyte", `"bad\ufffdbyte"`},
	}
	for _, tt := range tests {
		got := string(appendString(nil, tt.in))
		if got != tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if utf8ok := !strings.Contains(tt.in, "\xff"); utf8ok {
			var back string
			if err := json.Unmarshal([]byte(got), &back); err != nil || back != tt.in {
				t.Errorf("round trip of %q: %q, %v", tt.in, back, err)
			}
		}
	}
}

func TestParseJSONSyntaxErrors(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		line, column int
		hint         string
	}{
		{"empty", "", 1, 1, "pass a JSON value"},
		{"blank", "  \n ", 1, 1, "pass a JSON value"},
		{"trailing comma", "{\n  \"a\": 1,\n}", 3, 1, "trailing comma"},
		{"trailing comma in array", "[1, 2, ]", 1, 8, "trailing comma"},
		{"single quotes", "{'a': 1}", 1, 2, "double quotes"},
		{"unquoted key", "{\n  name: 1}", 2, 3, "double-quoted"},
		{"comment", "{\"a\": 1 // note\n}", 1, 9, "comments"},
		{"missing comma", "{\"a\": 1 \"b\": 2}", 1, 9, "comma is missing"},
		{"unclosed", "{\"a\": [1, 2", 1, 12, "not closed"},
		{"two values", "{} {}", 1, 4, "exactly one value"},
		{"bad literal", "[tru]", 1, 5, ""},
		{"after unicode", "{\"é\": x}", 1, 7, ""},
		{"too deep", strings.Repeat("[", 600) + strings.Repeat("]", 600), 1, 514, "flatten"},
	}
	for _, tt := range tests {
		_, err := parseJSON([]byte(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want *SyntaxError", tt.name, err)
			continue
		}
		if se.Line != tt.line || se.Column != tt.column || !strings.Contains(se.Hint, tt.hint) {
			t.Errorf("%s: got %d:%d hint %q (%s), want %d:%d hint containing %q", tt.name, se.Line, se.Column, se.Hint, se.Msg, tt.line, tt.column, tt.hint)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `"1"`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`[1,[2]]`, `[1,[2]]`, true},
		{`[1,2]`, `[2,1]`, false},
		{`null`, `false`, false},
		{`1e400`, `1e400`, true},
	}
	for _, tt := range tests {
		if got := equal(mustParse(t, tt.a), mustParse(t, tt.b)); got != tt.want {
			t.Errorf("equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[]`, `"x"`, `{"a":1,}`, `{'a':1}`, "[1,\n2", `1e999`, `{"a":"\u0000"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseJSON([]byte(s))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("parseJSON(%q) = %v, want a located *SyntaxError", s, err)
			}
			return
		}
		// What we encode must parse back to an equal value.
		enc := appendJSON(nil, v)
		back, err := parseJSON(enc)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", enc, err)
		}
		if !equal(v, back) {
			t.Fatalf("round trip changed %s into %s", enc, appendJSON(nil, back))
		}
	})
}
