package main

import (
	"strings"
	"testing"
)

const people = `[
  {"id": 1, "name": "Ada", "age": 36, "address": {"city": "London", "zip": "N1"}, "tags": ["math", "code"]},
  {"id": 2, "name": "Linus", "age": 28, "address": {"city": "Helsinki"}, "tags": []},
  {"id": 3, "name": "Grace", "age": 45, "address": {"city": "New York"}, "active": true}
]`

func run(t *testing.T, tool func([]byte) ([]byte, error), args string) string {
	t.Helper()
	out, err := tool([]byte(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return string(out)
}

func TestQuery(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"data": ` + people + `, "path": "[*].name"}`, `{"count":3,"results":["Ada","Linus","Grace"]}`},
		{`{"data": ` + people + `, "path": "[?(@.age > 30)].address.city", "locations": true}`,
			`{"count":2,"results":["London","New York"],"locations":["$[0].address.city","$[2].address.city"]}`},
		{`{"data": ` + people + `, "path": "..city", "limit": 1}`, `{"count":3,"results":["London"],"truncated":true}`},
		{`{"text": "{\"a\": {\"b\": [10, 20]}}", "path": ".a.b[1]"}`, `{"count":1,"results":[20]}`},
		{`{"data": {"a": 1}, "path": ".nope"}`, `{"count":0,"results":[]}`},
	}
	for _, tt := range tests {
		if got := run(t, query, tt.args); got != tt.want {
			t.Errorf("query(%s)\n got %s\nwant %s", tt.args, got, tt.want)
		}
	}
}

func TestTransform(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"pick keeps nesting", `{"data": ` + people + `, "steps": [{"pick": [".id", ".address.city"]}]}`,
			`{"result":[{"id":1,"address":{"city":"London"}},{"id":2,"address":{"city":"Helsinki"}},{"id":3,"address":{"city":"New York"}}]}`},
		{"pick one string", `{"data": {"a": 1, "b": 2}, "steps": [{"pick": "b"}]}`, `{"result":{"b":2}}`},
		{"omit", `{"data": {"a": 1, "b": {"c": 2, "d": 3}}, "steps": [{"omit": [".b.c", ".x.y"]}]}`, `{"result":{"a":1,"b":{"d":3}}}`},
		{"rename moves", `{"data": {"user": {"name": "Ada"}, "id": 7}, "steps": [{"rename": {".user.name": ".name", ".id": ".user_id"}}]}`,
			`{"result":{"user":{},"name":"Ada","user_id":7}}`},
		{"select", `{"data": ` + people + `, "steps": [{"select": {"who": ".name", "city": ".address.city", "zip": ".address.zip", "first_tag": ".tags[0]", "all_tags": ".tags[*]"}}], "at": "[0:2]"}`,
			`{"result":[{"who":"Ada","city":"London","zip":"N1","first_tag":"math","all_tags":["math","code"]},{"who":"Linus","city":"Helsinki","zip":null,"first_tag":null,"all_tags":[]}]}`},
		{"flatten", `{"data": {"a": {"b": 1, "c": [2, {"d": 3}]}, "e": {}, "f": []}, "steps": [{"flatten": true}]}`,
			`{"result":{"a.b":1,"a.c.0":2,"a.c.1.d":3,"e":{},"f":[]}}`},
		{"flatten keeps arrays", `{"data": {"a": {"b": [1, 2]}}, "steps": [{"flatten": {"separator": "_", "arrays": false}}]}`,
			`{"result":{"a_b":[1,2]}}`},
		{"unflatten", `{"data": {"a.b": 1, "a.c": 2, "d": 3}, "steps": [{"unflatten": "."}]}`, `{"result":{"a":{"b":1,"c":2},"d":3}}`},
		{"flatten round trip", `{"data": {"a": {"b": 1, "c": {"d": 2}}}, "steps": [{"flatten": "/"}, {"unflatten": "/"}]}`,
			`{"result":{"a":{"b":1,"c":{"d":2}}}}`},
		{"filter sort limit", `{"data": ` + people + `, "steps": [{"filter": "@.age > 30 || @.name == 'Linus'"}, {"sort_by": "-.age"}, {"limit": 2}, {"pick": [".name"]}]}`,
			`{"result":[{"name":"Grace"},{"name":"Ada"}]}`},
		{"sort missing last", `{"data": [{"v": 2}, {}, {"v": 1}, {"v": "a"}, {"v": null}], "steps": [{"sort_by": ".v"}]}`,
			`{"result":[{"v":null},{"v":1},{"v":2},{"v":"a"},{}]}`},
		{"sort desc missing last", `{"data": [{"v": 2}, {}, {"v": 1}], "steps": [{"sort_by": "-@.v"}]}`,
			`{"result":[{"v":2},{"v":1},{}]}`},
		{"at selects records", `{"data": {"meta": 1, "items": [{"x": 1, "y": 2}]}, "at": ".items", "steps": [{"omit": ["y"]}]}`,
			`{"result":[{"x":1}]}`},
		{"at with wildcard gathers", `{"data": {"a": {"x": 1}, "b": {"x": 2}}, "at": ".*", "steps": [{"rename": {"x": "y"}}]}`,
			`{"result":[{"y":1},{"y":2}]}`},
	}
	for _, tt := range tests {
		if got := run(t, transform, tt.args); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestTransformDoesNotAliasInput(t *testing.T) {
	doc := mustParse(t, `[{"a": {"b": 1}}]`)
	steps, err := parseSteps(mustParse(t, `[{"rename": {".a.b": ".c"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applySteps(doc, steps); err != nil {
		t.Fatal(err)
	}
	if got := string(appendJSON(nil, doc)); got != `[{"a":{"b":1}}]` {
		t.Errorf("input changed to %s", got)
	}
}

func TestToolErrors(t *testing.T) {
	tests := []struct {
		name string
		tool func([]byte) ([]byte, error)
		args string
		want string // a fragment that says what to do
	}{
		{"arguments not JSON", query, `{"path": `, "arguments are not valid JSON"},
		{"arguments not object", query, `[1]`, "must be a JSON object"},
		{"no document", query, `{"path": ".a"}`, "pass data"},
		{"both documents", query, `{"data": 1, "text": "1", "path": "."}`, "not both"},
		{"text not string", query, `{"text": {"a": 1}, "path": "."}`, "use data"},
		{"text not JSON", query, `{"text": "{'a': 1}", "path": "."}`, "line 1, column 2"},
		{"missing path", query, `{"data": 1}`, "missing path"},
		{"bad path", query, `{"data": 1, "path": ".a["}`, "RFC 9535"},
		{"bad limit", query, `{"data": 1, "path": ".", "limit": 0}`, "limit must be a whole number from 1"},
		{"bad locations", query, `{"data": 1, "path": ".", "locations": "yes"}`, "true or false"},
		{"missing steps", transform, `{"data": {}}`, "missing steps"},
		{"steps not array", transform, `{"data": {}, "steps": {"pick": ["a"]}}`, "array of one-key objects"},
		{"empty steps", transform, `{"data": {}, "steps": []}`, "at least one step"},
		{"unknown step", transform, `{"data": {}, "steps": [{"pluck": ["a"]}]}`, `step 1: unknown step "pluck"`},
		{"two keys", transform, `{"data": {}, "steps": [{"pick": ["a"], "omit": ["b"]}]}`, "exactly one key"},
		{"pick wildcard", transform, `{"data": {}, "steps": [{"pick": [".a[*]"]}]}`, "use select"},
		{"pick root", transform, `{"data": {}, "steps": [{"pick": ["."]}]}`, "whole record"},
		{"rename target", transform, `{"data": {}, "steps": [{"rename": {"a": 1}}]}`, "must be a string"},
		{"filter syntax", transform, `{"data": [], "steps": [{"filter": "@.a = 1"}]}`, `filter "@.a = 1": '=' is not a valid operation`},
		{"filter trailing", transform, `{"data": [], "steps": [{"filter": "@.a == 1 @.b"}]}`, "a JSONPath filter"},
		{"filter on object", transform, `{"data": {}, "steps": [{"filter": "@.a"}]}`, "step 1 (filter): needs an array, got object"},
		{"record step on number", transform, `{"data": [{"a": 1}, 5], "steps": [{"omit": ["a"]}]}`, "element 1: is number, not an object"},
		{"limit negative", transform, `{"data": [], "steps": [{"limit": -1}]}`, "≥ 0"},
		{"flatten false", transform, `{"data": {}, "steps": [{"flatten": false}]}`, "remove the step"},
		{"flatten bad option", transform, `{"data": {}, "steps": [{"flatten": {"sep": "."}}]}`, `unknown option "sep"`},
		{"unflatten arrays option", transform, `{"data": {}, "steps": [{"unflatten": {"arrays": true}}]}`, "option of flatten"},
		{"at selects nothing", transform, `{"data": {}, "at": ".x", "steps": [{"limit": 1}]}`, "selects nothing"},
	}
	for _, tt := range tests {
		_, err := tt.tool([]byte(tt.args))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "json-tools: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: error %q, want prefix \"json-tools: \" and %q", tt.name, msg, tt.want)
		}
	}
}

func FuzzTransform(f *testing.F) {
	f.Add(`[{"pick": [".a"]}, {"flatten": true}]`, `{"a": {"b": 1}}`)
	f.Add(`[{"filter": "@.a > 1"}, {"sort_by": "-.a"}, {"limit": 1}]`, `[{"a": 2}, {"a": 3}]`)
	f.Add(`[{"select": {"x": "..b"}}, {"unflatten": "."}]`, `{"a.b": 1}`)
	f.Add(`[{"rename": {"a": "b.c"}}, {"omit": ["b"]}]`, `[{"a": 1}, 2]`)
	f.Fuzz(func(t *testing.T, steps, doc string) {
		sv, err := parseJSON([]byte(steps))
		if err != nil {
			return
		}
		dv, err := parseJSON([]byte(doc))
		if err != nil {
			return
		}
		parsed, err := parseSteps(sv)
		if err != nil {
			return
		}
		before := string(appendJSON(nil, dv))
		if out, err := applySteps(dv, parsed); err == nil {
			appendJSON(nil, out)
		}
		if after := string(appendJSON(nil, dv)); after != before {
			t.Fatalf("transform changed its input from %s to %s", before, after)
		}
	})
}
