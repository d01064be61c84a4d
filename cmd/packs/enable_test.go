package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// TestEnableDisable is the CLI contract of packs enable and packs disable:
// a disabled pack stays installed (files, packs.lock, grants untouched),
// packs list shows it, packs run is denied (exit 3), packs chat refuses to
// attach it, packs mcp does not serve it; enabled again, it runs.
func TestEnableDisable(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", "[capabilities]\nenv_read = [\"ECHO_*\"]\n"), "--grant", "env_read", "--yes").mustCode(t, exitOK)
	withHome(t, home, "add", notesPack, "--grant", "none", "--yes").mustCode(t, exitOK)
	run := []string{"run", "echo", "t", "--input", `{"text":"hi"}`, "--yes"}
	withHome(t, home, run...).mustCode(t, exitOK)
	lockBefore, err := os.ReadFile(filepath.Join(home, "packs.lock"))
	if err != nil {
		t.Fatal(err)
	}

	if r := withHome(t, home, "disable", "echo").mustCode(t, exitOK); r.stdout != "disabled echo\n" {
		t.Errorf("disable: %q", r.stdout)
	}
	if r := withHome(t, home, "disable", "echo", "--json").mustCode(t, exitOK); strings.TrimSpace(r.stdout) != "{\n  \"name\": \"echo\",\n  \"enabled\": false,\n  \"changed\": false\n}" {
		t.Errorf("disable --json again: %q", r.stdout)
	}
	// Installed as it was.
	lockAfter, err := os.ReadFile(filepath.Join(home, "packs.lock"))
	if err != nil || string(lockAfter) != string(lockBefore) {
		t.Errorf("disable changed packs.lock (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(home, "packs", "echo", "tools.json")); err != nil {
		t.Errorf("disable removed the files: %v", err)
	}
	var echo packJSON
	for _, p := range listJSON(t, home) {
		if p.Name == "echo" {
			echo = p
		}
	}
	if !echo.Disabled || echo.Status != app.StatusOK || len(echo.Granted) != 1 {
		t.Errorf("list --json: %+v, want echo disabled, ok, its grant kept", echo)
	}
	if l := withHome(t, home, "list").mustCode(t, exitOK); !strings.Contains(l.stdout, "echo") || !strings.Contains(strings.Split(l.stdout, "\n")[1], "disabled") {
		t.Errorf("list:\n%s", l.stdout)
	}

	if info := withHome(t, home, "info", "echo").mustCode(t, exitOK); !strings.Contains(info.stdout, "disabled:") || !strings.Contains(info.stdout, "packs enable echo") {
		t.Errorf("info of a disabled pack:\n%s", info.stdout)
	}

	// packs run: denied, and audited.
	r := withHome(t, home, run...).mustCode(t, exitDenied)
	if line := r.oneLineError(t); !strings.Contains(line, "disabled") || !strings.Contains(line, "packs enable echo") {
		t.Errorf("run of a disabled pack: %q", line)
	}
	a, err := app.Open(context.Background(), app.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var last struct{ Status, Reason string }
	for e, err := range audit.Entries(context.Background(), a.DB, audit.Filter{Pack: "echo", Kind: audit.KindInvocation}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(e.Body, &last); err != nil {
			t.Fatal(err)
		}
	}
	if last.Status != "denied" || !strings.Contains(last.Reason, "disabled") {
		t.Errorf("the denied run is audited as %+v", last)
	}
	// packs mcp: not served.
	served, err := servedPacks(context.Background(), a, nil, nil)
	a.Close()
	if err != nil || strings.Join(served, ",") != "notes" {
		t.Errorf("served packs = %v (%v), want notes only", served, err)
	}

	// packs chat: --attach refuses it.
	srv := llmtest.NewServer(llmtest.Turn{Text: "never"})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	c := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "m", "--attach", "echo", "--message", "hi", "--yes")
	if c.code == exitOK || !strings.Contains(c.stderr, "disabled") || len(srv.Requests()) != 0 {
		t.Errorf("chat --attach of a disabled pack: exit %d, %d model requests\n%s", c.code, len(srv.Requests()), c.stderr)
	}

	// Enabled again: it runs with the grants it had.
	if r := withHome(t, home, "enable", "echo").mustCode(t, exitOK); r.stdout != "enabled echo\n" {
		t.Errorf("enable: %q", r.stdout)
	}
	if r := withHome(t, home, run...).mustCode(t, exitOK); r.stdout != `{"text":"hi"}`+"\n" {
		t.Errorf("run after enable: %q", r.stdout)
	}

	// packs remove clears the state: added again, the pack is enabled.
	withHome(t, home, "disable", "echo").mustCode(t, exitOK)
	withHome(t, home, "remove", "echo").mustCode(t, exitOK)
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, exitOK)
	withHome(t, home, run...).mustCode(t, exitOK)
}

// TestEnableDisableRefusals: exit codes of packs enable and packs disable.
func TestEnableDisableRefusals(t *testing.T) {
	home := installedNotes(t)
	policy := filepath.Join(t.TempDir(), "policy.toml")
	writeFiles(t, filepath.Dir(policy), map[string]string{"policy.toml": "[packs]\nmandated = [\"notes\"]\n"})
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"not installed", []string{"disable", "nope"}, exitFailure, "not installed"},
		{"enable not installed", []string{"enable", "nope"}, exitFailure, "not installed"},
		{"no name", []string{"disable"}, exitUsage, ""},
		{"two names", []string{"enable", "a", "b"}, exitUsage, ""},
		{"mandated", []string{"--policy", policy, "disable", "notes"}, exitDenied, "mandates"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := withHome(t, home, tc.args...).mustCode(t, tc.code)
			if line := r.oneLineError(t); !strings.Contains(line, tc.says) {
				t.Errorf("error %q does not say %q", line, tc.says)
			}
		})
	}
	// The mandated pack is still enabled, and enabling an enabled pack is
	// no change.
	r := withHome(t, home, "enable", "notes", "--json").mustCode(t, exitOK)
	var got toggleResult
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got != (toggleResult{Name: "notes", Enabled: true}) {
		t.Errorf("enable --json: %+v %v", got, err)
	}
}

// TestChatLeavesDisabledMandatedPack: a pack the policy mandates but the
// person disabled before is left out with a notice, not a failure.
func TestChatLeavesDisabledMandatedPack(t *testing.T) {
	home := installedNotes(t)
	withHome(t, home, "disable", "notes").mustCode(t, exitOK)
	policy := filepath.Join(t.TempDir(), "policy.toml")
	writeFiles(t, filepath.Dir(policy), map[string]string{"policy.toml": "[packs]\nmandated = [\"notes\"]\n"})
	srv := llmtest.NewServer(llmtest.Turn{Text: "hello"})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	r := withHome(t, home, "--policy", policy, "chat", "--base-url", srv.OpenAIURL(), "--model", "m", "--message", "hi").mustCode(t, exitOK)
	if !strings.Contains(r.stderr, "disabled") || len(srv.Requests()) != 1 {
		t.Fatalf("want a notice and one model request; stderr:\n%s", r.stderr)
	}
	if sent := srv.Requests()[0].System; !strings.Contains(sent, "Capability Packs") || strings.Contains(sent, "pack_id: notes") {
		t.Errorf("the model was offered the disabled pack:\n%s", sent)
	}
}

// TestRecipeOfDisabledPack: packs recipe run of a disabled pack runs no
// step: every step's call is denied (exit 3) and the workspace is as it was.
func TestRecipeOfDisabledPack(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", filepath.Join("..", "..", "wasm-examples", "git-flow"), "--grant", "terminal_exec", "--yes").mustCode(t, exitOK)
	ws := gitRepo(t, map[string]string{"good.patch": "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1,2 @@\n hello\n+world\n"})
	withHome(t, home, "disable", "git-flow").mustCode(t, exitOK)
	r := withHome(t, home, "recipe", "run", "git-flow", "feature-branch", "--workspace", ws, "--yes",
		"--param", "branch=feature/a", "--param", "patch=good.patch", "--param", "message=m").mustCode(t, exitDenied)
	if !strings.Contains(r.stderr, "disabled") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	head, err := os.ReadFile(filepath.Join(ws, ".git", "HEAD"))
	if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/main" {
		t.Errorf("a step ran: HEAD %q, %v", head, err)
	}
}
