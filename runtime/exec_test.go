package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// TestExecOptionInjection runs a real sort through the runtime: a templated
// value that begins with "-" would be read as an option (sort -o FILE
// writes FILE, outside the workspace), so it is refused as invalid input
// before anything runs, unless the tool's schema marks the property as an
// option ("x-packs-option"); the marked property still cannot smuggle an
// option through its unmarked neighbour.
func TestExecOptionInjection(t *testing.T) {
	if _, err := exec.LookPath("sort"); err != nil {
		t.Skipf("no sort on PATH: %v", err)
	}
	h := newHarness(t, Config{})
	tools := `[
	  {"name": "sort", "description": "Sorts a workspace file.",
	   "input_schema": {"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]},
	   "run": {"exec": ["sort", "{{file}}"]}},
	  {"name": "sortby", "description": "Sorts a workspace file in an order.",
	   "input_schema": {"type": "object", "properties": {
	     "order": {"type": "string", "enum": ["-r", "-n"], "x-packs-option": true},
	     "file": {"type": "string"}}, "required": ["order", "file"]},
	   "run": {"exec": ["sort", "{{order}}", "{{file}}"]}}]`
	p := testPack{name: "sorter", toml: "[capabilities]\nterminal_exec = { commands = [\"sort\"] }\n", tools: tools}.load(t)
	if len(p.Findings) != 0 {
		t.Fatalf("findings: %v", p.Findings)
	}
	if err := os.WriteFile(filepath.Join(h.ws, "in.txt"), []byte("b\na\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "x")
	cases := []struct {
		name, tool, input string
		want              string // sort's output; "" when the call is refused
	}{
		{"operand", "sort", `{"file":"in.txt"}`, "a\nb\nc\n"},
		{"attached -o", "sort", `{"file":` + jsonString("-o"+outside) + `}`, ""},
		{"long --output", "sort", `{"file":` + jsonString("--output="+outside) + `}`, ""},
		{"marked option", "sortby", `{"order":"-r","file":"in.txt"}`, "c\nb\na\n"},
		{"marked option, injected operand", "sortby", `{"order":"-r","file":` + jsonString("-o"+outside) + `}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := h.invocation(p, c.tool, c.input, h.grant(p, nil))
			res, err := h.rt.invoke(context.Background(), inv)
			if _, serr := os.Stat(outside); !errors.Is(serr, os.ErrNotExist) {
				os.Remove(outside)
				t.Fatalf("sort wrote %s, outside the workspace (err %v)", outside, err)
			}
			if c.want == "" {
				if !errors.Is(err, packs.ErrInvalidInput) {
					t.Fatalf("got %s, %v; want packs.ErrInvalidInput", res.Output, err)
				}
				if recs := h.rec.find(inv.ID, capability.TerminalExec); len(recs) != 0 {
					t.Fatalf("a refused argv reached the grant check: %+v", recs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if err := json.Unmarshal(res.Output, &got); err != nil || got != c.want {
				t.Fatalf("output %s (%v), want %q", res.Output, err, c.want)
			}
		})
	}
}
