package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// schemaLibrary is the package whose initializer compiles five metaschemas
// in every new instance.
const schemaLibrary = "github.com/santhosh-tekuri/jsonschema/v6"

// TestOnlyValidateLoadsTheSchemaLibrary: query and transform run from a
// module built with -tags noschema, which leaves the schema library out, so
// a new instance of it does not compile metaschemas; validate_json runs from
// the module that has it.
func TestOnlyValidateLoadsTheSchemaLibrary(t *testing.T) {
	data, err := os.ReadFile("tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name string `json:"name"`
		Run  struct {
			Wasm string `json:"wasm"`
		} `json:"run"`
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	module := map[string]string{}
	for _, tool := range tools {
		module[tool.Name] = tool.Run.Wasm
	}
	for _, name := range []string{"query", "transform"} {
		if module[name] == module["validate_json"] {
			t.Errorf("%s runs from %s, the schema module validate_json runs from", name, module[name])
		}
	}
	for _, tt := range []struct {
		tags string
		want bool
	}{
		{"noschema", false},
		{"", true},
	} {
		cmd := exec.Command("go", "list", "-deps", "-tags", tt.tags, ".")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tt.tags, err)
		}
		if got := strings.Contains(string(out), schemaLibrary+"\n"); got != tt.want {
			t.Errorf("with -tags %q the module has %s: %v, want %v", tt.tags, schemaLibrary, got, tt.want)
		}
	}
	// The built module (make builds it) must be the noschema one.
	wasm, err := os.ReadFile(module["query"])
	if os.IsNotExist(err) {
		t.Skipf("%s is not built", module["query"])
	}
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(wasm, []byte(schemaLibrary)) {
		t.Errorf("%s holds %s: build it with -tags noschema", module["query"], schemaLibrary)
	}
}
