package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// openAPIOps reads the operations of the OpenAPI document: "METHOD /path".
func openAPIOps(t *testing.T, doc map[string]any) []string {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatal("the document has no paths")
	}
	var ops []string
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			ops = append(ops, strings.ToUpper(m)+" "+p)
			if o["operationId"] == nil || o["summary"] == nil || o["responses"] == nil {
				t.Errorf("%s %s: needs operationId, summary and responses", m, p)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// TestOpenAPI: GET /v1/openapi.json is an OpenAPI 3.1 document that
// describes every route the server has, and no route it lacks (issue 12,
// defect 11). It is public, like the page's own files.
func TestOpenAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	var doc map[string]any
	if got := e.doAuth("", "GET", "/v1/openapi.json", nil, &doc); got != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json without the token: got %d", got)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi: got %q, want 3.1.x", v)
	}
	documented := openAPIOps(t, doc)
	var served []string
	for _, rt := range e.srv.apiRoutes() {
		served = append(served, strings.NewReplacer("...}", "}").Replace(rt.pattern))
	}
	slices.Sort(served)
	for _, op := range served {
		if _, found := slices.BinarySearch(documented, op); !found {
			t.Errorf("served but not documented: %s", op)
		}
	}
	for _, op := range documented {
		if _, found := slices.BinarySearch(served, op); !found {
			t.Errorf("documented but not served: %s", op)
		}
	}
	// Every $ref points at a component that exists.
	raw, _ := json.Marshal(doc)
	comps := doc["components"].(map[string]any)
	for _, m := range refRE.FindAllStringSubmatch(string(raw), -1) {
		group, _ := comps[m[1]].(map[string]any)
		if _, ok := group[m[2]]; !ok {
			t.Errorf("dangling $ref #/components/%s/%s", m[1], m[2])
		}
	}
}

var refRE = regexp.MustCompile(`"\$ref":"#/components/([A-Za-z]+)/([A-Za-z]+)"`)

// TestOpenAPIShapes: a generator can type what the document describes.
// Every object schema says what its members are (properties, or
// additionalProperties: an open object such as a tool's arguments is
// additionalProperties: true), so openapi-typescript does not make it
// Record<string, never>; and every operation names its 4xx answers.
func TestOpenAPIShapes(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "object" && v["properties"] == nil && v["additionalProperties"] == nil && v["patternProperties"] == nil {
				t.Errorf("%s: an object schema with no properties and no additionalProperties", path)
			}
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", path, i), x)
			}
		}
	}
	walk("#", doc)
	for p, item := range doc["paths"].(map[string]any) {
		for m, op := range item.(map[string]any) {
			responses, _ := op.(map[string]any)["responses"].(map[string]any)
			if !slices.ContainsFunc(slices.Collect(maps.Keys(responses)), func(code string) bool { return strings.HasPrefix(code, "4") }) {
				t.Errorf("%s %s: no 4xx response", strings.ToUpper(m), p)
			}
		}
	}
}
