package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
)

func TestBaseToolsListedWithNoPack(t *testing.T) {
	e := newEnv(t, "")
	e.srv.cfg.Attach = nil
	cs := e.connect(t, "empty", nil)
	if got, want := toolNames(t, cs), []string{"enable_tools", "open_docs", "read_file"}; !slices.Equal(got, want) {
		t.Fatalf("tools with no pack served = %v, want %v", got, want)
	}
	start := time.Now()
	text, isErr := callText(t, cs, "open_docs", map[string]any{"pack_id": "weather"})
	var v struct {
		Error struct{ Kind, Install string }
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil || !isErr {
		t.Fatalf("open_docs of an unknown pack = %q (error %v)", text, isErr)
	}
	if v.Error.Kind != "not_found" || !strings.Contains(v.Error.Install, "packs add") || !strings.Contains(v.Error.Install, `"weather"`) {
		t.Errorf("open_docs of an unknown pack = %q, want not_found and how to install a pack", text)
	}
	if d := time.Since(start); d >= 300*time.Millisecond {
		t.Errorf("open_docs of an unknown pack took %v: it waited for approval of a call that cannot run", d)
	}
}

func toolByName(t *testing.T, cs *mcp.ClientSession, name string) *mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// copyPack copies testdata/echo-pack as a pack named name, with tools.json
// replaced by toolsJSON, and installs it in e.
func (e *testEnv) installCopy(t *testing.T, name, toolsJSON string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	src := "testdata/echo-pack"
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch rel {
		case "SKILL.md":
			b = []byte(strings.ReplaceAll(string(b), "echo-pack", name))
		case "tools.json":
			b = []byte(toolsJSON)
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Install(context.Background(), app.InstallRequest{Source: dir, Consent: app.Granting()}); err != nil {
		t.Fatal(err)
	}
}

func TestToolMetadata(t *testing.T) {
	e := newEnv(t, "[approval]\nauto_approve = [\"echo-meta__echo\"]\n")
	e.installCopy(t, "echo-meta", `[{"name": "echo", "title": "Echo it back", "idempotent": true, "description": "Returns its arguments unchanged.",
		"input_schema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
		"output_schema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
		"run": {"wasm": "bin/echo.wasm", "function": "echo"}}]`)
	e.srv.cfg.Attach = []string{"echo-pack", "echo-meta"}
	e.srv.cfg.Tools = []string{"echo-pack", "echo-meta"}
	cs := e.connect(t, "meta", nil)

	od := toolByName(t, cs, "open_docs")
	if od.Title == "" || od.Annotations == nil || !od.Annotations.ReadOnlyHint {
		t.Errorf("open_docs: title %q, annotations %+v, want a title and read-only", od.Title, od.Annotations)
	}
	plain := toolByName(t, cs, "echo-pack__echo")
	if a := plain.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint || a.IdempotentHint || plain.OutputSchema != nil {
		t.Errorf("echo-pack__echo (no grant, nothing declared): %+v %+v, want read-only, not destructive, closed world, not idempotent, no output schema", a, plain.OutputSchema)
	}
	meta := toolByName(t, cs, "echo-meta__echo")
	if meta.Title != "Echo it back" || meta.Annotations == nil || !meta.Annotations.IdempotentHint || meta.OutputSchema == nil {
		t.Errorf("echo-meta__echo: title %q, annotations %+v, output schema %v, want what tools.json declares", meta.Title, meta.Annotations, meta.OutputSchema)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo-meta__echo", Arguments: map[string]any{"message": "structured"}})
	if err != nil || res.IsError {
		t.Fatalf("echo-meta__echo: %+v %v", res, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if string(b) != `{"message":"structured"}` {
		t.Errorf("structured content = %s, want the result object", b)
	}
}

func TestAnnotationsFromTheGrant(t *testing.T) {
	for _, tt := range []struct {
		grant                  []capability.Name
		readOnly, destr, world bool
	}{
		{nil, true, false, false},
		{[]capability.Name{capability.FilesystemRead, capability.EnvRead}, true, false, false},
		{[]capability.Name{capability.FilesystemWrite}, false, true, false},
		{[]capability.Name{capability.TerminalExec}, false, true, false},
		{[]capability.Name{capability.Network}, false, false, true},
	} {
		a := annotationsFor(func(n capability.Name) bool { return slices.Contains(tt.grant, n) })
		if a.ReadOnlyHint != tt.readOnly || *a.DestructiveHint != tt.destr || *a.OpenWorldHint != tt.world || a.IdempotentHint {
			t.Errorf("grant %v: %+v, want read-only %v, destructive %v, open world %v", tt.grant, a, tt.readOnly, tt.destr, tt.world)
		}
	}
}
