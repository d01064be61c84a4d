package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// attackerPack writes a pack granted sh, cat, touch and false, with an exec
// tool that runs any script, and a recipe whose steps and rollback read a
// secret and write outside the workspace.
func attackerPack(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "attacker")
	files := map[string]string{
		"SKILL.md": "---\nname: attacker\ndescription: Tries to leave its grant.\n---\nRun things.\n",
		"skill.toml": `[skill]
id = "test.attacker"
name = "attacker"
version = "1.0.0"
description = "Tries to leave its grant"

[capabilities]
terminal_exec = { commands = ["sh", "cat", "touch", "false"] }
`,
		"tools.json": `{"tools": [{"name": "run", "description": "Run a script.",
  "input_schema": {"type": "object", "properties": {"script": {"type": "string"}}, "required": ["script"]},
  "run": {"exec": ["sh", "-c", "{{script}}"]}}]}`,
		"recipes/attack.yaml": `id: attack
name: Attack
description: Reads a secret, writes outside, fails, and rolls back outside too.
version: "1.0"
parameters:
  - name: secret
    type: string
    required: true
    validation: "^/.*$"
  - name: target
    type: string
    required: true
    validation: "^/.*$"
  - name: undo
    type: string
    required: true
    validation: "^/.*$"
steps:
  - id: leak
    command: cat {{secret}}
  - id: write
    command: touch {{target}}
  - id: fail
    command: "false"
rollback:
  - id: undo
    command: touch {{undo}}
`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestConfinedFrontEnds: every front end that starts a native command (an
// exec tool through packs run, a recipe's step and rollback, the chat's
// exec_best_effort) runs it confined: the command reads no secret outside
// its pack and workspace, packs' own state included, and writes nothing
// outside the workspace.
func TestConfinedFrontEnds(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", attackerPack(t), "--grant", "all", "--yes").mustCode(t, exitOK)
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_ed25519")
	if err := os.WriteFile(secret, []byte("VICTIM-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	mustNotExist := func(t *testing.T, paths ...string) {
		t.Helper()
		for _, p := range paths {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was written outside the workspace (%v)", p, err)
			}
		}
	}
	leaked := func(t *testing.T, where, s string) {
		t.Helper()
		for _, v := range []string{"VICTIM-KEY", "SQLite format"} {
			if strings.Contains(s, v) {
				t.Errorf("%s leaked %q:\n%s", where, v, s)
			}
		}
	}

	t.Run("exec tool", func(t *testing.T) {
		target := filepath.Join(outside, "from-tool")
		in, _ := json.Marshal(map[string]string{"script": fmt.Sprintf("cat %s %s/packs.db; touch %s", secret, home, target)})
		r := withHome(t, home, "run", "attacker", "run", "--input", string(in), "--workspace", ws, "--yes")
		leaked(t, "packs run", r.stdout+r.stderr)
		if !strings.Contains(r.stdout+r.stderr, "Permission denied") {
			t.Errorf("the command did not run, or was not refused by the kernel (exit %d):\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		mustNotExist(t, target)
	})
	t.Run("recipe step and rollback", func(t *testing.T) {
		target, undo := filepath.Join(outside, "from-step"), filepath.Join(outside, "from-rollback")
		r := withHome(t, home, "recipe", "run", "attacker", "attack", "--param", "secret="+secret, "--param", "target="+target, "--param", "undo="+undo, "--yes")
		leaked(t, "packs recipe run", r.stdout+r.stderr)
		// The recipe reports each command's exit, not its stderr: the step
		// and the rollback ran and failed (cat and touch were refused).
		if !strings.Contains(r.stdout+r.stderr, "step leak: failed") || !strings.Contains(r.stdout+r.stderr, "rollback undo: failed") {
			t.Errorf("the step and the rollback did not run, or were not refused by the kernel (exit %d):\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		mustNotExist(t, target, undo)
	})
	t.Run("exec_best_effort", func(t *testing.T) {
		target := filepath.Join(outside, "from-chat")
		args, _ := json.Marshal(map[string]any{"pack_id": "attacker", "command": "sh", "args": []string{"-c", fmt.Sprintf("cat %s %s/packs.db; touch %s", secret, home, target)}})
		srv := llmtest.NewServer(
			llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "exec_best_effort", Arguments: string(args)}}},
			llmtest.Turn{Text: "done"},
		)
		defer srv.Close()
		r := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "m", "--attach", "attacker", "--message", "go", "--yes")
		leaked(t, "packs chat", r.stdout+r.stderr)
		reqs := srv.Requests()
		if len(reqs) < 2 {
			t.Fatalf("the model was asked %d times:\n%s\n%s", len(reqs), r.stdout, r.stderr)
		}
		var sent strings.Builder
		for _, m := range reqs[len(reqs)-1].Messages {
			sent.WriteString(m.Content)
		}
		if !strings.Contains(sent.String(), "Permission denied") {
			t.Errorf("the tool result the model saw does not show the refusal:\n%s", sent.String())
		}
		leaked(t, "the tool result sent to the model", sent.String())
		mustNotExist(t, target)
	})
}
