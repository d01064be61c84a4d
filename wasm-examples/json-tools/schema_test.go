//go:build !noschema

package main

import (
	"strings"
	"testing"
)

func TestSchemaKeywords(t *testing.T) {
	// Each case: a schema, an instance that passes, and one that fails on kw.
	tests := []struct {
		schema, good, bad, kw string
	}{
		{`{"type": "string"}`, `"x"`, `1`, "type"},
		{`{"type": ["string", "null"]}`, `null`, `false`, "type"},
		{`{"type": "integer"}`, `3.0`, `3.5`, "type"},
		{`{"enum": [1, "a", {"b": 2}]}`, `{"b": 2.0}`, `"b"`, "enum"},
		{`{"const": [1, 2]}`, `[1, 2]`, `[2, 1]`, "const"},
		{`{"multipleOf": 0.1}`, `0.3`, `0.35`, "multipleOf"},
		{`{"maximum": 10}`, `10`, `10.5`, "maximum"},
		{`{"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 10, "exclusiveMaximum": true}`, `9`, `10`, "exclusiveMaximum"},
		{`{"exclusiveMaximum": 10}`, `9.9`, `10`, "exclusiveMaximum"},
		{`{"minimum": 1}`, `1`, `0`, "minimum"},
		{`{"exclusiveMinimum": 1}`, `1.1`, `1`, "exclusiveMinimum"},
		{`{"maxLength": 2}`, `"éé"`, `"abc"`, "maxLength"},
		{`{"minLength": 2}`, `"ab"`, `"a"`, "minLength"},
		{`{"pattern": "^[a-z]+$"}`, `"abc"`, `"aBc"`, "pattern"},
		{`{"items": {"type": "number"}}`, `[1, 2]`, `[1, "2"]`, "type"},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}, {"type": "number"}]}`, `["a", 1, true]`, `[1]`, "type"},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false}`, `["a"]`, `["a", 1]`, "additionalItems"},
		{`{"prefixItems": [{"type": "string"}], "items": {"type": "number"}}`, `["a", 1, 2]`, `["a", "b"]`, "type"},
		{`{"maxItems": 1}`, `[1]`, `[1, 2]`, "maxItems"},
		{`{"minItems": 1}`, `[1]`, `[]`, "minItems"},
		{`{"uniqueItems": true}`, `[1, "1"]`, `[1, 1.0]`, "uniqueItems"},
		{`{"contains": {"const": 3}}`, `[1, 3]`, `[1, 2]`, "contains"},
		{`{"contains": {"const": 3}, "maxContains": 1}`, `[3]`, `[3, 3]`, "maxContains"},
		{`{"properties": {"a": {"type": "number"}}}`, `{"a": 1, "b": "x"}`, `{"a": "1"}`, "type"},
		{`{"patternProperties": {"^x-": {"type": "string"}}}`, `{"x-a": "s"}`, `{"x-a": 1}`, "type"},
		{`{"properties": {"a": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": false}`, `{"a": 1, "x-b": 2}`, `{"c": 3}`, "additionalProperties"},
		{`{"additionalProperties": {"type": "number"}}`, `{"a": 1}`, `{"a": "1"}`, "type"},
		{`{"required": ["a"]}`, `{"a": null}`, `{"b": 1}`, "required"},
		{`{"maxProperties": 1}`, `{"a": 1}`, `{"a": 1, "b": 2}`, "maxProperties"},
		{`{"minProperties": 1}`, `{"a": 1}`, `{}`, "minProperties"},
		{`{"propertyNames": {"pattern": "^[a-z]+$"}}`, `{"ab": 1}`, `{"A": 1}`, "pattern"},
		{`{"dependentRequired": {"card": ["cvv"]}}`, `{"card": 1, "cvv": 2}`, `{"card": 1}`, "dependentRequired"},
		{`{"allOf": [{"minimum": 1}, {"maximum": 3}]}`, `2`, `4`, "maximum"},
		{`{"anyOf": [{"type": "string"}, {"type": "number"}]}`, `1`, `true`, "anyOf"},
		{`{"oneOf": [{"minimum": 1}, {"maximum": 3}]}`, `5`, `2`, "oneOf"},
		{`{"not": {"type": "null"}}`, `0`, `null`, "not"},
		{`{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}}`, `{"kind": "b", "y": 1}`, `{"kind": "a", "y": 1}`, "required"},
		{`{"$defs": {"pos": {"minimum": 0}}, "properties": {"n": {"$ref": "#/$defs/pos"}}}`, `{"n": 1}`, `{"n": -1}`, "minimum"},
		{`{"definitions": {"a/b": {"type": "string"}}, "items": {"$ref": "#/definitions/a~1b"}}`, `["x"]`, `[1]`, "type"},
		{`{"type": "object", "properties": {"next": {"$ref": "#"}}}`, `{"next": {"next": {}}}`, `{"next": {"next": 1}}`, "type"},
		{`true`, `1`, ``, ""},
		{`false`, ``, `1`, "false"},
	}
	for _, tt := range tests {
		schema := mustParse(t, tt.schema)
		if tt.good != "" {
			errs, err := validateSchema(schema, mustParse(t, tt.good))
			if err != nil || len(errs) != 0 {
				t.Errorf("%s on %s: errors %v, %v; want none", tt.schema, tt.good, errs, err)
			}
		}
		if tt.bad != "" {
			errs, err := validateSchema(schema, mustParse(t, tt.bad))
			if err != nil || len(errs) == 0 || errs[0].Keyword != tt.kw {
				t.Errorf("%s on %s: errors %v, %v; want one on %q", tt.schema, tt.bad, errs, err, tt.kw)
			}
		}
	}
}

func TestSchemaPointers(t *testing.T) {
	schema := mustParse(t, `{"properties": {"a/b": {"items": {"properties": {"c~d": {"type": "string"}}}}}}`)
	errs, err := validateSchema(schema, mustParse(t, `{"a/b": [{"c~d": "ok"}, {"c~d": 1}]}`))
	if err != nil || len(errs) != 1 {
		t.Fatalf("errors %v, %v; want one", errs, err)
	}
	if got, want := errs[0].Pointer, "/a~1b/1/c~0d"; got != want {
		t.Errorf("pointer %q, want %q", got, want)
	}
}

func TestSchemaBroken(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`1`, "want boolean or object"},
		{`{"type": 3}`, "value must be one of"},
		{`{"enum": 3}`, "want array"},
		{`{"minimum": "1"}`, "want number"},
		{`{"multipleOf": 0}`, "exclusiveMinimum"},
		{`{"maxLength": -1}`, "minimum"},
		{`{"pattern": "(?<x>"}`, "is not valid regex"},
		{`{"required": "a"}`, "want array"},
		{`{"anyOf": []}`, "minItems"},
		{`{"$ref": "#/nope"}`, "not found"},
		{`{"$schema": "https://example.com/unknown"}`, "outside the schema"},
	}
	for _, tt := range tests {
		_, err := validateSchema(mustParse(t, tt.schema), mustParse(t, `"x"`))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.schema, err, tt.want)
		}
	}
}

func TestSchemaErrorCap(t *testing.T) {
	inst := "[" + strings.Repeat(`"x",`, 300) + `"x"]`
	errs, err := validateSchema(mustParse(t, `{"items": {"type": "number"}}`), mustParse(t, inst))
	if err != nil || len(errs) != maxSchemaErrors {
		t.Fatalf("got %d errors (%v), want %d", len(errs), err, maxSchemaErrors)
	}
}

func TestSchemaRemoteRefRefused(t *testing.T) {
	_, err := validateSchema(mustParse(t, `{"$ref": "https://example.com/s.json"}`), mustParse(t, `{}`))
	if err == nil || !strings.Contains(err.Error(), "outside the schema") {
		t.Fatalf("error %v, want the remote $ref refused", err)
	}
}

func TestValidateJSON(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"valid text", `{"text": "{\"a\": [1, 2]}"}`, `{"valid":true}`},
		{"syntax error", `{"text": "{\n  \"a\": 1,\n}"}`,
			`{"valid":false,"syntax_error":{"line":3,"column":1,"message":"unexpected '}', expected a double-quoted key","hint":"trailing comma: remove the comma before the closing bracket"}}`},
		{"schema passes", `{"data": {"name": "x", "age": 3}, "schema": {"type": "object", "required": ["name"], "properties": {"age": {"type": "integer", "minimum": 0}}}}`,
			`{"valid":true}`},
		{"schema fails", `{"data": {"age": -1, "extra": true}, "schema": {"type": "object", "required": ["name"], "additionalProperties": false, "properties": {"age": {"type": "integer", "minimum": 0}}}}`,
			`{"valid":false,"errors":[{"pointer":"/","keyword":"required","message":"missing property 'name'"},{"pointer":"/age","keyword":"minimum","message":"minimum: got -1, want 0"},{"pointer":"/","keyword":"additionalProperties","message":"additional properties 'extra' not allowed"}]}`},
		{"2020-12 keywords", `{"data": {"a": 1}, "schema": {"dependentSchemas": {"a": {"required": ["b"]}}, "unevaluatedProperties": false, "properties": {"b": {}}}}`,
			`{"valid":false,"errors":[{"pointer":"/","keyword":"required","message":"missing property 'b'"},{"pointer":"/a","keyword":"false","message":"false schema"}]}`},
	}
	for _, tt := range tests {
		if got := run(t, validateJSON, tt.args); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestValidateJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		args string
		want string // a fragment that says what to do
	}{
		{"broken schema regex", `{"data": "x", "schema": {"pattern": "("}}`, "is not valid regex"},
		{"broken schema ref", `{"data": "x", "schema": {"$ref": "#/$defs/nope"}}`, "not found"},
	}
	for _, tt := range tests {
		_, err := validateJSON([]byte(tt.args))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "json-tools: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: error %q, want prefix \"json-tools: \" and %q", tt.name, msg, tt.want)
		}
	}
}
