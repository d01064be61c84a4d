package web

import (
	"encoding/json"
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
