package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/secrets"
	"github.com/packs-run/packs/internal/web"
)

// notesPack is the chat orchestrator's test pack (WASI tools echo, note,
// spin, fail).
const notesPack = "../../internal/chat/testdata/notes"

func installedNotes(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	withHome(t, home, "add", notesPack, "--grant", "none").mustCode(t, exitOK)
	return home
}

var chatIDRE = regexp.MustCompile(`chat (chat_[0-9a-f]+) `)

// TestChatMessage runs one turn through the CLI contract's --message mode
// against a fake model: each tool call is printed with its decision, then
// the reply; --chat resumes the conversation.
func TestChatMessage(t *testing.T) {
	home := installedNotes(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "enable_tools", Arguments: `{"pack_id":"notes"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"hi"}`}}},
		llmtest.Turn{Text: "It said hi."},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"again"}`}}},
		llmtest.Turn{Text: "Denied, fine."},
	)
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-cli-secret-77")
	r := withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--model", "m1", "--attach", "notes", "--message", "echo hi", "--yes").mustCode(t, exitOK)
	// --attach approves listing the pack's tools; --yes the tool's call.
	want := "tool enable_tools {\"pack_id\":\"notes\"}: approved by attach: ok\n" +
		"tool notes__echo {\"text\":\"hi\"}: approved by --yes: ok\n" +
		"It said hi.\n"
	if r.stdout != want {
		t.Errorf("got:\n%s\nwant:\n%s", r.stdout, want)
	}
	m := chatIDRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no chat id on stderr: %q", r.stderr)
	}
	req := srv.Requests()[0]
	if req.Model != "m1" || req.Header.Get("Authorization") != "Bearer sk-cli-secret-77" {
		t.Errorf("got model %q, authorization %q", req.Model, req.Header.Get("Authorization"))
	}

	// Resumed, without --yes: nobody approves, the call is denied.
	r = withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--chat", m[1], "--message", "echo again").mustCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "tool notes__echo {\"text\":\"again\"}: denied: ") || !strings.HasSuffix(r.stdout, "Denied, fine.\n") {
		t.Errorf("got:\n%s", r.stdout)
	}
	if got := srv.Requests()[3]; len(got.Messages) != 7 || !got.HasTool("notes__echo") {
		t.Errorf("the resumed chat sent %d messages and tools %v", len(got.Messages), got.ToolNames())
	}
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "sk-cli-secret-77") {
				t.Errorf("%s holds the API key", p)
			}
		}
		return nil
	})
}

func TestChatAnthropicAndConfig(t *testing.T) {
	home := installedNotes(t)
	srv := llmtest.NewServer(llmtest.Turn{Text: "from anthropic"}, llmtest.Turn{Text: "from the config file"})
	defer srv.Close()
	withHome(t, home, "chat", "--provider", "anthropic", "--base-url", srv.AnthropicURL(), "--message", "hi").mustCode(t, exitOK)
	if got := srv.Requests()[0]; got.Protocol != "anthropic" || got.Model != llm.DefaultAnthropicModel {
		t.Errorf("got %s request for %q", got.Protocol, got.Model)
	}
	config := "[llm]\nprovider = \"openai\"\nbase_url = \"" + srv.OpenAIURL() + "\"\nmodel = \"from-file\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	r := withHome(t, home, "chat", "--message", "hi").mustCode(t, exitOK)
	if got := srv.Requests()[1]; got.Model != "from-file" || r.stdout != "from the config file\n" {
		t.Errorf("got model %q, stdout %q", got.Model, r.stdout)
	}
}

func TestChatUsageErrors(t *testing.T) {
	home := installedNotes(t)
	cases := []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"yes without message", "", []string{"--yes"}, "--yes goes with --message"},
		{"unknown chat", "", []string{"--chat", "chat_0000", "--message", "x"}, "no chat \"chat_0000\""},
		{"bad provider", "", []string{"--provider", "gemini", "--message", "x"}, "use openai or anthropic"},
		{"bad url", "", []string{"--base-url", "localhost:11434", "--message", "x"}, "use an http:// or https:// URL"},
		{"config unknown key", "[llm]\nmodle = \"x\"\n", []string{"--message", "x"}, "config.toml:2: unknown key \"llm.modle\""},
		{"config syntax", "[llm\n", []string{"--message", "x"}, "config.toml:1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(home, "config.toml")
			os.Remove(cfg)
			if c.config != "" {
				if err := os.WriteFile(cfg, []byte(c.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			r := withHome(t, home, append([]string{"chat"}, c.args...)...).mustCode(t, exitUsage)
			if line := r.oneLineError(t); !strings.Contains(line, c.want) {
				t.Errorf("got %q, want it to say %q", line, c.want)
			}
		})
	}
}

// TestChatUnreachableModel: a model that cannot be reached is one line
// that names the URL, and exit status 1.
func TestChatUnreachableModel(t *testing.T) {
	home := installedNotes(t)
	r := withHome(t, home, "chat", "--base-url", "http://127.0.0.1:1/v1", "--message", "hi").mustCode(t, exitFailure)
	if line := r.oneLineError(t); !strings.Contains(line, "http://127.0.0.1:1/v1") {
		t.Errorf("got %q", line)
	}
}

// TestChatSavedModel: packs chat uses the model saved on the web app's
// Settings page of the same home, its key from the secret store; a flag
// still wins.
func TestChatSavedModel(t *testing.T) {
	const key = "sk-from-settings-31f"
	home := installedNotes(t)
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.RequireKey(key)
	srv.Respond(func(r llmtest.Request) llmtest.Turn { return llmtest.Turn{Text: "from " + r.Model} })
	saved := `{"version": 1, "provider": "openai", "base_url": "` + srv.OpenAIURL() + `", "model": "saved-model", "max_tokens": 321}`
	if err := os.WriteFile(filepath.Join(home, web.ModelFile), []byte(saved), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := secrets.Open(home).Set(web.ModelKeySecret, []byte(key)); err != nil {
		t.Fatal(err)
	}
	r := withHome(t, home, "chat", "--message", "hi").mustCode(t, exitOK)
	if got := srv.Requests()[0]; r.stdout != "from saved-model\n" || got.MaxTokens != 321 {
		t.Errorf("got %q, max tokens %d", r.stdout, got.MaxTokens)
	}
	r = withHome(t, home, "chat", "--model", "flag-model", "--message", "hi").mustCode(t, exitOK)
	if r.stdout != "from flag-model\n" {
		t.Errorf("with --model: got %q", r.stdout)
	}
}
