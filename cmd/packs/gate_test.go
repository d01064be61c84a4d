package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
)

// TestRunNeedsTheGate is packs run's part of issue 4 ("a call cannot run
// without a decision, by any path"): without --yes and with no person at a
// terminal, neither a WASI tool nor an exec tool runs, and the audit log
// holds the denial; with --yes (the positive control) both leave their
// file in the workspace. Only the approver differs between the two.
func TestRunNeedsTheGate(t *testing.T) {
	t.Setenv("PACKS_POLICY", "")
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "files", "wasi_files.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, exitOK)
	execPack := filepath.Join(t.TempDir(), "toucher")
	writeFiles(t, execPack, map[string]string{
		"SKILL.md":   "---\nname: toucher\ndescription: Touches a file in the workspace.\n---\n# toucher\n",
		"skill.toml": "[capabilities]\nterminal_exec = { commands = [\"touch\"] }\n",
		"tools.json": `[{"name": "t", "description": "Touches touched.txt.", "input_schema": {"type": "object"}, "run": {"exec": ["touch", "touched.txt"]}}]`,
	})
	withHome(t, home, "add", execPack, "--grant", "terminal_exec", "--yes").mustCode(t, exitOK)

	for _, tool := range []struct{ pack, file string }{{"files", "out.txt"}, {"toucher", "touched.txt"}} {
		for _, c := range []struct {
			name string
			yes  bool
		}{{"without --yes", false}, {"with --yes", true}} {
			t.Run(tool.pack+" "+c.name, func(t *testing.T) {
				ws := t.TempDir()
				args := []string{"run", tool.pack, "t", "--workspace", ws}
				want, status := exitDenied, audit.StatusDenied
				if c.yes {
					args, want, status = append(args, "--yes"), exitOK, audit.StatusOK
				}
				withHome(t, home, args...).mustCode(t, want)
				_, err := os.Stat(filepath.Join(ws, tool.file))
				if c.yes && err != nil {
					t.Errorf("approved, but %s is missing: %v", tool.file, err)
				}
				if !c.yes && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s ran without a decision: %s exists (%v)", tool.pack, tool.file, err)
				}
				if got := lastRunStatus(t, home, tool.pack); got != status {
					t.Errorf("audit status %q, want %q", got, status)
				}
			})
		}
	}
}

// lastRunStatus reads the status of pack's newest invocation row.
func lastRunStatus(t *testing.T, home, pack string) audit.Status {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var last audit.Entry
	for e, err := range audit.Entries(ctx, a.DB, audit.Filter{Pack: pack, Kind: audit.KindInvocation}) {
		if err != nil {
			t.Fatal(err)
		}
		last = e
	}
	var body struct{ Status audit.Status }
	if err := json.Unmarshal(last.Body, &body); err != nil {
		t.Fatalf("pack %s has no invocation row: %v", pack, err)
	}
	return body.Status
}
