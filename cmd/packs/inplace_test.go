package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// publicSkills holds the copies of public skills the in-place tests use
// (packs/testdata/public-skills/README.md).
const publicSkills = "../../packs/testdata/public-skills"

// copyTree copies the folder src to dst, which holds none of its files.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	// os.CopyFS makes the folders and copies the files, modes kept.
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// listed returns the packs list --json rows named name.
func listed(t *testing.T, home, name string) []packJSON {
	t.Helper()
	r := withHome(t, home, "list", "--json").mustCode(t, exitOK)
	var all []packJSON
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var out []packJSON
	for _, j := range all {
		if j.Name == name {
			out = append(out, j)
		}
	}
	return out
}

// scriptedChat runs one packs chat --message turn in which the fake model
// makes the calls, one per request; before is called with the index of
// each call just before it is made (after the previous result came back).
// It returns the tool results the model saw, in order.
func scriptedChat(t *testing.T, home, attach string, calls []llm.ToolCall, before func(i int)) []string {
	t.Helper()
	srv := llmtest.NewServer()
	defer srv.Close()
	var mu sync.Mutex
	n := 0
	srv.Respond(func(llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		i := n
		n++
		if i >= len(calls) {
			return llmtest.Turn{Text: "done"}
		}
		if before != nil {
			before(i)
		}
		return llmtest.Turn{ToolCalls: []llm.ToolCall{calls[i]}}
	})
	ws := t.TempDir()
	r := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "m", "--attach", attach, "--workspace", ws, "--message", "go", "--yes")
	if r.code != exitOK {
		t.Fatalf("chat: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != len(calls)+1 {
		t.Fatalf("the model was asked %d times, want %d:\n%s\n%s", len(reqs), len(calls)+1, r.stdout, r.stderr)
	}
	out := make([]string, len(calls))
	for i := range calls {
		msgs := reqs[i+1].Messages
		out[i] = msgs[len(msgs)-1].Content
	}
	return out
}

func toolCall(name string, args map[string]any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{Name: name, Arguments: string(b)}
}

// TestInPlaceScriptSkill: a public skill with a Python script, kept in
// Codex's user folder (~/.codex/skills), is used in place: discovered,
// attached, its docs read at once; its script is refused until the person
// grants python3, then runs confined (it cannot write its own folder); an
// edit of the folder refuses the next call and says what changed, the one
// after is refused for want of a grant, and a new grant lets it run;
// packs add of the folder installs it keeping the grant.
func TestInPlaceScriptSkill(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	t.Setenv("HOME", user)
	dir := filepath.Join(user, ".codex", "skills", "webapp-testing")
	copyTree(t, filepath.Join(publicSkills, "anthropic-skills", "skills", "webapp-testing"), dir)
	script := filepath.Join(dir, "scripts", "with_server.py")

	rows := listed(t, home, "webapp-testing")
	if len(rows) != 1 || rows[0].Status != statusDiscovered || !rows[0].Attachable || rows[0].Location != "user" || rows[0].Dir != dir ||
		len(rows[0].Requested) != 1 || rows[0].Requested[0].Capability != "terminal_exec" || rows[0].Requested[0].Granted {
		t.Fatalf("list: %+v", rows)
	}

	help := toolCall("exec_best_effort", map[string]any{"pack_id": "webapp-testing", "command": "python3",
		"args": []string{"scripts/with_server.py", "--help"}, "cwd_policy": "pack_root"})
	docs := toolCall("open_docs", map[string]any{"pack_id": "webapp-testing"})
	write := toolCall("exec_best_effort", map[string]any{"pack_id": "webapp-testing", "command": "python3",
		"args": []string{"-c", "open('scripts/with_server.py', 'a').write('#')"}, "cwd_policy": "pack_root"})

	// Before any grant: the docs read, the script does not run.
	got := scriptedChat(t, home, "webapp-testing", []llm.ToolCall{docs, help}, nil)
	if !strings.Contains(got[0], "Web Application Testing") {
		t.Errorf("open_docs: %s", got[0])
	}
	if strings.Contains(got[1], "usage:") || !strings.Contains(got[1], "denied") {
		t.Errorf("the script ran, or was not denied, without a grant: %s", got[1])
	}

	withHome(t, home, "grant", "webapp-testing", "terminal_exec").mustCode(t, exitOK)
	if rows := listed(t, home, "webapp-testing"); len(rows) != 1 || len(rows[0].Granted) != 1 {
		t.Errorf("list after the grant: %+v", rows)
	}
	if caps := withHome(t, home, "capabilities", "webapp-testing").mustCode(t, exitOK); !strings.Contains(caps.stdout, "python3") {
		t.Errorf("capabilities of the pack used in place:\n%s", caps.stdout)
	}

	// Granted: it runs, confined; then the folder is edited mid-chat.
	got = scriptedChat(t, home, "webapp-testing", []llm.ToolCall{help, write, help, help}, func(i int) {
		if i == 2 {
			f, err := os.OpenFile(script, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			f.WriteString("\n# edited\n")
			f.Close()
		}
	})
	if !strings.Contains(got[0], "usage: with_server.py") {
		t.Errorf("the granted script: %s", got[0])
	}
	if !strings.Contains(got[1], "Read-only") && !strings.Contains(got[1], "Permission denied") {
		t.Errorf("writing its own folder: %s", got[1])
	}
	if b, _ := os.ReadFile(script); strings.HasSuffix(string(b), "#") {
		t.Errorf("the script wrote its own folder")
	}
	if !strings.Contains(got[2], "changed") || !strings.Contains(got[2], "scripts/with_server.py") || strings.Contains(got[2], "usage:") {
		t.Errorf("the call after the edit: %s", got[2])
	}
	if !strings.Contains(got[3], "grant it again") || !strings.Contains(got[3], "scripts/with_server.py") || strings.Contains(got[3], "usage:") {
		t.Errorf("the next call: %s", got[3])
	}
	info := withHome(t, home, "info", "webapp-testing").mustCode(t, exitOK)
	if !strings.Contains(info.stdout, "changed scripts/with_server.py") || !strings.Contains(info.stdout, dir) {
		t.Errorf("info after the edit:\n%s", info.stdout)
	}

	// Granted again, at the new content: it runs.
	withHome(t, home, "grant", "webapp-testing", "terminal_exec").mustCode(t, exitOK)
	if got := scriptedChat(t, home, "webapp-testing", []llm.ToolCall{help}, nil); !strings.Contains(got[0], "usage: with_server.py") {
		t.Errorf("after the new grant: %s", got[0])
	}

	// Installed from the same folder: the grant is kept.
	add := withHome(t, home, "add", dir, "--yes").mustCode(t, exitOK)
	if !strings.Contains(add.stdout, "keeps the grants") {
		t.Errorf("add:\n%s", add.stdout)
	}
	rows = listed(t, home, "webapp-testing")
	if len(rows) != 2 || rows[0].Origin != originInstalled || len(rows[0].Granted) != 1 || rows[1].Status != statusHidden {
		t.Fatalf("list after add: %+v", rows)
	}
	if got := scriptedChat(t, home, "webapp-testing", []llm.ToolCall{help}, nil); !strings.Contains(got[0], "usage: with_server.py") {
		t.Errorf("installed: %s", got[0])
	}
}

// TestInPlaceKnowledgeSkill: a public knowledge-only skill in a project's
// .claude/skills is used in place from that project: listed as a project
// pack, attached, its SKILL.md and the docs it names read without any
// grant; an edit of the folder refuses the next read and says so, the
// read after that sees the new content; packs add of the folder installs
// it.
func TestInPlaceKnowledgeSkill(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", t.TempDir())
	dir := filepath.Join(project, ".claude", "skills", "internal-comms")
	copyTree(t, filepath.Join(publicSkills, "anthropic-skills", "skills", "internal-comms"), dir)
	t.Chdir(project)

	rows := listed(t, home, "internal-comms")
	if len(rows) != 1 || !rows[0].Attachable || rows[0].Location != "project" || len(rows[0].Requested) != 0 {
		t.Fatalf("list: %+v", rows)
	}
	docs := toolCall("open_docs", map[string]any{"pack_id": "internal-comms"})
	read := toolCall("read_file", map[string]any{"pack_id": "internal-comms", "path": "examples/3p-updates.md"})
	got := scriptedChat(t, home, "internal-comms", []llm.ToolCall{docs, read, read, read}, func(i int) {
		if i == 2 {
			if err := os.WriteFile(filepath.Join(dir, "examples", "3p-updates.md"), []byte("# 3P, edited\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	if !strings.Contains(got[0], "internal communications") {
		t.Errorf("open_docs: %s", got[0])
	}
	if !strings.Contains(got[1], "Progress") {
		t.Errorf("read_file: %s", got[1])
	}
	if !strings.Contains(got[2], "changed") || strings.Contains(got[2], "edited") {
		t.Errorf("the read after the edit: %s", got[2])
	}
	if !strings.Contains(got[3], "3P, edited") {
		t.Errorf("the read after that: %s", got[3])
	}
	withHome(t, home, "add", dir, "--yes").mustCode(t, exitOK)
	if rows := listed(t, home, "internal-comms"); len(rows) != 2 || rows[0].Origin != originInstalled || rows[1].HiddenBy != "installed" {
		t.Errorf("list after add: %+v", rows)
	}
}

// TestInPlaceMarketplace: a repository of several public skills with a
// Claude Code plugin marketplace, named in config.toml's [discover] paths:
// its skills are used in place (the script one granted, run, edited, asked
// again); packs add of the repository lists them by plugin and asks to
// choose; --skill installs the chosen one keeping its grant; --all from
// git installs the rest.
func TestInPlaceMarketplace(t *testing.T) {
	home, repo := t.TempDir(), t.TempDir()
	t.Setenv("HOME", t.TempDir())
	copyTree(t, filepath.Join(publicSkills, "anthropic-skills"), repo)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[discover]\npaths = [\""+filepath.Join(repo, "skills")+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"brand-guidelines", "internal-comms", "webapp-testing"} {
		if rows := listed(t, home, name); len(rows) != 1 || !rows[0].Attachable || rows[0].Location != "given" {
			t.Errorf("%s: %+v", name, rows)
		}
	}
	help := toolCall("exec_best_effort", map[string]any{"pack_id": "webapp-testing", "command": "python3",
		"args": []string{"scripts/with_server.py", "--help"}, "cwd_policy": "pack_root"})
	docs := toolCall("open_docs", map[string]any{"pack_id": "webapp-testing"})
	withHome(t, home, "grant", "webapp-testing", "terminal_exec").mustCode(t, exitOK)
	script := filepath.Join(repo, "skills", "webapp-testing", "scripts", "with_server.py")
	got := scriptedChat(t, home, "webapp-testing", []llm.ToolCall{docs, help, help, help}, func(i int) {
		if i == 2 {
			if err := os.WriteFile(script, []byte("print('replaced')\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	if !strings.Contains(got[0], "Web Application Testing") || !strings.Contains(got[1], "usage: with_server.py") {
		t.Errorf("docs and the granted script: %s\n%s", got[0], got[1])
	}
	if strings.Contains(got[2], "replaced") || !strings.Contains(got[2], "changed") {
		t.Errorf("the call after the edit: %s", got[2])
	}
	if strings.Contains(got[3], "replaced") || !strings.Contains(got[3], "grant it again") {
		t.Errorf("the next call: %s", got[3])
	}
	// Put the script back: the content granted, so the grant holds again.
	back := filepath.Join(repo, "skills", "webapp-testing")
	if err := os.RemoveAll(back); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(publicSkills, "anthropic-skills", "skills", "webapp-testing"), back)
	if got := scriptedChat(t, home, "webapp-testing", []llm.ToolCall{help}, nil); !strings.Contains(got[0], "usage: with_server.py") {
		t.Errorf("the granted content back: %s", got[0])
	}

	r := withHome(t, home, "add", repo, "--yes").mustCode(t, exitFailure)
	for _, want := range []string{"marketplace anthropic-agent-skills", "example-skills", "brand-guidelines", "webapp-skills", "--skill NAME"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("add without a choice does not say %q:\n%s", want, r.stderr)
		}
	}
	r = withHome(t, home, "add", repo, "--skill", "webapp-testing", "--yes").mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "keeps the grants") {
		t.Errorf("add --skill:\n%s", r.stdout)
	}
	if rows := listed(t, home, "webapp-testing"); len(rows) != 2 || rows[0].Origin != originInstalled || len(rows[0].Granted) != 1 {
		t.Errorf("list after add --skill: %+v", rows)
	}
	withHome(t, home, "add", repo, "--skill", "pdf", "--yes").mustCode(t, exitUsage)

	// From git, every skill: the one installed is updated in place (same
	// content, so nothing changes), the others are new.
	bare := t.TempDir()
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q")
	gitIn("add", ".")
	gitIn("commit", "-qm", "skills")
	gitIn("clone", "-q", "--bare", repo, bare)
	withHome(t, home, "add", "git+file://"+bare, "--all", "--grant", "none", "--yes").mustCode(t, exitOK)
	for _, name := range []string{"brand-guidelines", "internal-comms"} {
		if rows := listed(t, home, name); len(rows) < 1 || rows[0].Origin != originInstalled || !strings.HasSuffix(rows[0].Source, ":skills/"+name) {
			t.Errorf("%s after add --all: %+v", name, rows)
		}
	}
}

// TestInPlaceAgent: an agent may name a pack used in place; a chat
// started from it attaches the pack from its folder.
func TestInPlaceAgent(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	t.Setenv("HOME", user)
	copyTree(t, filepath.Join(publicSkills, "anthropic-skills", "skills", "internal-comms"), filepath.Join(user, ".agents", "skills", "internal-comms"))
	withHome(t, home, "agent", "create", "writer", "--prompt", "Write updates.", "--capability", "internal-comms").mustCode(t, exitOK)
	withHome(t, home, "agent", "create", "nobody", "--capability", "no-such-skill").mustCode(t, exitUsage)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{toolCall("open_docs", map[string]any{"pack_id": "internal-comms"})}},
		llmtest.Turn{Text: "done"},
	)
	defer srv.Close()
	r := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "m", "--agent", "writer", "--message", "go", "--yes").mustCode(t, exitOK)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times:\n%s\n%s", len(reqs), r.stdout, r.stderr)
	}
	if last := reqs[1].Last().Content; !strings.Contains(last, "internal communications") {
		t.Errorf("open_docs through the agent: %s", last)
	}
}

// TestInPlaceRun: packs run runs a tool of a pack used in place through
// the same gate: denied until the person grants what it asks for, then
// run; after an edit, refused until granted again.
func TestInPlaceRun(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	t.Setenv("HOME", user)
	dir := filepath.Join(user, ".claude", "skills", "hello")
	writeFiles(t, dir, map[string]string{
		"SKILL.md":   "---\nname: hello\ndescription: Says hello.\nallowed-tools: Bash(echo *)\n---\nRun hello.\n",
		"tools.json": `{"tools": [{"name": "hi", "description": "Say hi.", "input_schema": {"type": "object"}, "run": {"exec": ["echo", "hi"]}}]}`,
	})
	withHome(t, home, "run", "hello", "hi", "--yes").mustCode(t, exitDenied)
	withHome(t, home, "grant", "hello", "terminal_exec").mustCode(t, exitOK)
	if r := withHome(t, home, "run", "hello", "hi", "--yes").mustCode(t, exitOK); !strings.Contains(r.stdout, "hi") {
		t.Errorf("run: %s", r.stdout)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := withHome(t, home, "run", "hello", "hi", "--yes").mustCode(t, exitDenied)
	if !strings.Contains(r.stderr, "terminal_exec") || !strings.Contains(r.stderr, "added notes.md") {
		t.Errorf("after an edit: %s", r.stderr)
	}
}
