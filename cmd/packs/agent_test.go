package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// docPack writes a pack without tools whose [skill] table has the extra
// lines, and returns its folder.
func docPack(t *testing.T, name, skill string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, body := range map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: The " + name + " pack.\n---\nBody.\n",
		"skill.toml": "[skill]\n" + skillID(name, skill) + "version = \"1.0.0\"\n" + skill,
	} {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// skillID is the id line a test pack gets unless its extra lines set one.
func skillID(name, skill string) string {
	if strings.Contains(skill, "id = ") {
		return ""
	}
	return "id = \"test." + name + "\"\n"
}

// TestAgentCommands: packs agent create, list, show, edit and rm, with the
// CLI contract's exit codes, --json in the API's shape, and errors that
// name the capability and say what to do.
func TestAgentCommands(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "fresh")
	withHome(t, fresh, "agent", "list", "--json").mustCode(t, exitOK)
	withHome(t, fresh, "agent", "show", "x").mustCode(t, exitFailure)
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("agent list and show created the state directory: %v", err)
	}
	home := installedNotes(t)
	withHome(t, home, "add", docPack(t, "old", "status = \"deprecated\"\n"), "--grant", "none").mustCode(t, exitOK)
	withHome(t, home, "add", docPack(t, "soon", "status = \"coming_soon\"\n"), "--grant", "none").mustCode(t, exitOK)
	r := withHome(t, home, "agent", "list").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "no agents: create one with packs agent create") {
		t.Errorf("empty list: %q", r.stdout)
	}
	promptFile := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(promptFile, []byte("You keep notes.\nBriefly.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = withHome(t, home, "agent", "create", "Note Taker", "--prompt-file", promptFile, "--capability", "notes,old", "--model", "m7", "--json").mustCode(t, exitOK)
	var ag app.AgentJSON
	if err := json.Unmarshal([]byte(r.stdout), &ag); err != nil {
		t.Fatalf("create --json: %v: %q", err, r.stdout)
	}
	if ag.Name != "Note Taker" || ag.SystemPrompt != "You keep notes.\nBriefly.\n" || ag.Model != "m7" || ag.Status != "active" ||
		!slices.Equal(ag.Capabilities, []string{"notes", "old"}) || !strings.HasPrefix(ag.ID, "agent_") {
		t.Errorf("created: %+v", ag)
	}
	if !strings.Contains(r.stderr, `packs: warning: capability "old" is deprecated`) {
		t.Errorf("no deprecation warning: %q", r.stderr)
	}

	bad := []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"agent", "create", "X", "--capability", "teleport"}, exitUsage, []string{`"teleport"`, "packs list"}},
		{[]string{"agent", "create", "X", "--capability", "soon"}, exitUsage, []string{`"soon"`, "coming_soon"}},
		{[]string{"agent", "create", "note taker"}, exitUsage, []string{"packs agent edit"}},
		{[]string{"agent", "create", "X", "--prompt", "a", "--prompt-file", promptFile}, exitUsage, []string{"not both"}},
		{[]string{"agent", "create"}, exitUsage, []string{"agent NAME"}},
		{[]string{"agent", "show", "nobody"}, exitFailure, []string{`"nobody"`, "packs agent list"}},
		{[]string{"agent", "edit", "nobody", "--model", "x"}, exitFailure, []string{"packs agent list"}},
		{[]string{"agent", "rm", "nobody"}, exitFailure, []string{"packs agent list"}},
		{[]string{"agent"}, exitUsage, []string{"create, list, show, edit or rm"}},
		{[]string{"chat", "--agent", "nobody", "--message", "hi"}, exitUsage, []string{`"nobody"`, "packs agent list"}},
		{[]string{"chat", "--agent", "Note Taker", "--chat", "chat_00", "--message", "hi"}, exitUsage, []string{"--agent starts a new chat"}},
	}
	for _, tc := range bad {
		r := withHome(t, home, tc.args...).mustCode(t, tc.code)
		for _, w := range tc.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, r.stderr, w)
			}
		}
	}

	r = withHome(t, home, "agent", "edit", "note taker", "--capability", "notes", "--max-tokens", "99", "--name", "Scribe").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "changed agent Scribe") {
		t.Errorf("edit: %q", r.stdout)
	}
	r = withHome(t, home, "agent", "show", "Scribe").mustCode(t, exitOK)
	for _, w := range []string{"name:         Scribe", "model:        m7", "max tokens:   99", "capabilities: notes\n", "  You keep notes.\n  Briefly.\n"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("show lacks %q:\n%s", w, r.stdout)
		}
	}
	r = withHome(t, home, "agent", "list", "--json").mustCode(t, exitOK)
	var list []app.AgentJSON
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0].ID != ag.ID || list[0].MaxTokens != 99 {
		t.Errorf("list --json: %q (%v)", r.stdout, err)
	}

	// packs chat --agent: the agent's packs, prompt and model settings.
	// The agent's capabilities are attached by the person's choice of
	// agent: reading notes needs no --yes; its tool, with nobody to ask,
	// is denied.
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "open_docs", Arguments: `{"pack_id":"notes"}`}, {Name: "enable_tools", Arguments: `{"pack_id":"notes"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"hi"}`}}},
		llmtest.Turn{Text: "noted"})
	defer srv.Close()
	r = withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--agent", "Scribe", "--message", "hi", "--json").mustCode(t, exitOK)
	req := srv.Requests()[0]
	if req.Model != "m7" || req.MaxTokens != 99 || !strings.Contains(req.System, "- pack_id: notes") || !strings.Contains(req.System, "You keep notes.") {
		t.Errorf("chat --agent: model %q, max_tokens %d, system:\n%s", req.Model, req.MaxTokens, req.System)
	}
	var turn chatResult
	decodeOne(t, r.stdout, &turn)
	if len(turn.Calls) != 3 {
		t.Fatalf("chat --agent: %d calls, want 3: %+v", len(turn.Calls), turn)
	}
	for _, c := range turn.Calls[:2] {
		if !c.Approved || !c.ByAttach || c.Approver != "attach" {
			t.Errorf("chat --agent: %s: %+v, want approved by attach", c.Name, c)
		}
	}
	if c := turn.Calls[2]; c.Approved || c.ErrorKind != "denied" {
		t.Errorf("chat --agent: the tool's call with nobody to ask: %+v, want denied", c)
	}

	withHome(t, home, "agent", "rm", "Scribe").mustCode(t, exitOK)
	withHome(t, home, "agent", "show", ag.ID).mustCode(t, exitFailure)
}

// TestAgentCreateDefaultsMaxTokens: an agent made without --max-tokens gets
// the configured limit (config.toml's [llm] max_tokens here) written out,
// not 0: show and --json say it, and its chats send it. --max-tokens still
// wins.
func TestAgentCreateDefaultsMaxTokens(t *testing.T) {
	home := installedNotes(t)
	if err := os.WriteFile(filepath.Join(home, configFile), []byte("[llm]\nmax_tokens = 321\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := withHome(t, home, "agent", "create", "Plain", "--capability", "notes", "--json").mustCode(t, exitOK)
	var ag app.AgentJSON
	if err := json.Unmarshal([]byte(r.stdout), &ag); err != nil || ag.MaxTokens != 321 {
		t.Errorf("create without --max-tokens: max_tokens %d (%v), want the configured 321", ag.MaxTokens, err)
	}
	if r := withHome(t, home, "agent", "show", "Plain").mustCode(t, exitOK); !strings.Contains(r.stdout, "max tokens:   321\n") {
		t.Errorf("show:\n%s", r.stdout)
	}
	srv := llmtest.NewServer(llmtest.Turn{Text: "hello"})
	defer srv.Close()
	withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--agent", "Plain", "--message", "hi").mustCode(t, exitOK)
	if got := srv.Requests()[0].MaxTokens; got != 321 {
		t.Errorf("the chat sent max_tokens %d, want 321", got)
	}
	r = withHome(t, home, "agent", "create", "Short", "--max-tokens", "50", "--json").mustCode(t, exitOK)
	if err := json.Unmarshal([]byte(r.stdout), &ag); err != nil || ag.MaxTokens != 50 {
		t.Errorf("create --max-tokens 50: max_tokens %d (%v)", ag.MaxTokens, err)
	}
}
