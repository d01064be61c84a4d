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

// TestScriptSkill: a skill whose work is a Python script (wasm-examples/
// py-report, in the shape of the public Agent Skills) runs end to end
// through exec_best_effort with python3 granted: it reads its own folder
// and the workspace and writes its report there; a file outside is not
// readable, and its own folder is not writable.
func TestScriptSkill(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", filepath.Join("..", "..", "wasm-examples", "py-report"), "--grant", "all", "--yes").mustCode(t, exitOK)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "sales.csv"), []byte("region,units,price\nnorth,3,2.5\nsouth,5,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.csv")
	if err := os.WriteFile(outside, []byte("key\nVICTIM-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(args ...string) string {
		b, _ := json.Marshal(map[string]any{"pack_id": "py-report", "command": "python3", "args": args, "cwd_policy": "pack_root"})
		return string(b)
	}
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "exec_best_effort", Arguments: call("scripts/report.py", "sales.csv")}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "exec_best_effort", Arguments: call("scripts/report.py", outside)}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "exec_best_effort", Arguments: call("-c", "open('scripts/report.py', 'a').write('#')")}}},
		llmtest.Turn{Text: "done"},
	)
	defer srv.Close()
	r := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "m", "--attach", "py-report", "--workspace", ws, "--message", "report on sales.csv", "--yes").mustCode(t, exitOK)
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model was asked %d times, want 4:\n%s\n%s", len(reqs), r.stdout, r.stderr)
	}
	result := func(i int) string { // the tool result of turn i, as the model got it
		msgs := reqs[i].Messages
		return msgs[len(msgs)-1].Content
	}
	if got := result(1); !strings.Contains(got, `\"rows\": 2`) || !strings.Contains(got, `\"total\": 8.0`) {
		t.Errorf("the report's result: %s", got)
	}
	report, err := os.ReadFile(filepath.Join(ws, "report.md"))
	if err != nil || !strings.Contains(string(report), "| units | 8 | 4 | 3 | 5 |") {
		t.Errorf("report.md = %q, %v", report, err)
	}
	if got := result(2); strings.Contains(got, "VICTIM-KEY") || !strings.Contains(got, "Permission denied") {
		t.Errorf("reading a file outside: %s", got)
	}
	if got := result(3); !strings.Contains(got, "Permission denied") && !strings.Contains(got, "Read-only") {
		t.Errorf("writing the pack's own folder: %s", got)
	}
	// The pack still runs: its content matches its lock entry.
	if r := withHome(t, home, "info", "py-report"); r.code != exitOK || strings.Contains(r.stdout, "modified") {
		t.Errorf("the pack changed: %s %s", r.stdout, r.stderr)
	}
}
