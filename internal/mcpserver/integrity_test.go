package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/echo-tampered.wasm is testdata/echo-pack/bin/echo.wat with one
// more export (see echo-tampered.wat): a module a tamperer could drop in.

// TestModifiedModuleRefusedAtTheCall: in a live session, after
// enable_tools, a module overwritten in the installed pack is refused at its
// next call, as packs run refuses it, and nothing of it runs. The pack's
// integrity is checked at every call, not only at attach and enable_tools.
func TestModifiedModuleRefusedAtTheCall(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	cs := e.connect(t, "tamper", nil)
	if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	if text, isErr := callText(t, cs, "echo-pack__echo", map[string]any{"message": "before"}); isErr {
		t.Fatalf("echo before the change: %s", text)
	}
	dir, err := e.app.Home.PackDir("echo-pack")
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(dir, "bin", "echo.wasm")
	// Another build of the module: it still echoes, with other bytes.
	tampered, err := os.ReadFile("testdata/echo-tampered.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(module, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := callText(t, cs, "echo-pack__echo", map[string]any{"message": "after"})
	if !isErr || !strings.Contains(text, `"kind":"denied"`) || !strings.Contains(text, "no longer match packs.lock") || strings.Contains(text, `"result"`) {
		t.Fatalf("echo after the module changed: %s, want a denial saying the files no longer match packs.lock", text)
	}
	rows := e.auditRows(t)
	if last := rows[len(rows)-1]; last["tool"] != "echo" || last["status"] != "denied" {
		t.Fatalf("last audit row %v, want the refused echo", last)
	}
}
