package terminal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// The test binary doubles as the chat program that TestPseudoTerminal
// runs inside tmux.
const (
	helperEnv = "PACKS_TERMINAL_HELPER_HOME"
	modelEnv  = "PACKS_TERMINAL_HELPER_MODEL"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helper(dir, os.Getenv(modelEnv)))
	}
	os.Exit(m.Run())
}

// helper is packs chat in miniature: the notes pack attached, the fake
// model at baseURL, the terminal on stdin and stdout, Ctrl-C handled.
func helper(dir, baseURL string) int {
	e, err := openEnv(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.close()
	p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: baseURL, Model: "fake", MaxTokens: 100, Timeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	s, err := chat.Open(ctx, e.deps, chat.Options{Attach: []string{"notes"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	if err := Run(ctx, s, Options{In: os.Stdin, Out: os.Stdout, Provider: p, Interrupts: intr, DiscardTypeAhead: true,
		Markdown: true, Width: 160, Keys: os.Stdin}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// tmux runs tmux against a private server.
type tmux struct {
	t      *testing.T
	socket string
}

func (x tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (x tmux) screen() string { return x.run("capture-pane", "-p", "-J", "-S", "-200", "-t", "chat") }

// waitFor waits until the screen shows want count times.
func (x tmux) waitFor(want string, count int) string {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := x.screen()
		if strings.Count(s, want) >= count {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the screen never showed %q (%d times):\n%s", want, count, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPseudoTerminal drives the chat in a real pseudo-terminal (tmux):
// the reply streams with its Markdown rendered, the cards take one key
// without Enter, and Ctrl-C during a tool call stops that tool while the
// chat goes on.
func TestPseudoTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: install it to run the pseudo-terminal test")
	}
	dir := t.TempDir()
	installNotes(t, dir)
	srv := llmtest.NewServer(
		llmtest.Turn{Text: "Enabling the notes tools.", ToolCalls: []llm.ToolCall{tc("enable_tools", `{"pack_id":"notes"}`)}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__spin", `{}`)}},
		llmtest.Turn{Text: "The spin was **stopped**; what next?\n\n- `retry`\n- give up\n"},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__spin", `{}`)}},
		llmtest.Turn{Text: "Not spinning."},
	)
	defer srv.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	x := tmux{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	x.run("new-session", "-d", "-s", "chat", "-x", "160", "-y", "50",
		"-e", helperEnv+"="+dir, "-e", modelEnv+"="+srv.OpenAIURL(),
		exe+" -test.run=^$; echo HELPER-EXIT-$?; sleep 60")
	defer exec.Command("tmux", "-S", x.socket, "kill-server").Run()

	x.waitFor("you> ", 1)
	x.run("send-keys", "-t", "chat", "spin for me", "Enter")
	// enable_tools of the attached pack is approved by the attach: no card.
	x.waitFor("+-- tool call: notes__spin (pack notes)", 1)
	x.waitFor("(one key) ", 1)
	start := time.Now()
	x.run("send-keys", "-t", "chat", "r")
	x.waitFor("running notes__spin (Ctrl-C stops it)", 1)
	x.run("send-keys", "-t", "chat", "C-c")
	screen := x.waitFor("you> ", 2)
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("the tool ran %v: Ctrl-C did not stop it before its 1s limit", d)
	}
	for _, want := range []string{
		"assistant> Enabling the notes tools.",
		"  -> enable_tools: approved by attach: ok",
		"stopping the tool (the chat goes on)",
		"  -> notes__spin: approved by person at the terminal: stopped: runtime: call cancelled",
		"assistant> The spin was stopped; what next?",
		"• retry\n• give up",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if styled := x.run("capture-pane", "-p", "-e", "-J", "-S", "-200", "-t", "chat"); !strings.Contains(styled, "\x1b[1mstopped") {
		t.Errorf("the reply's bold is not bold:\n%q", styled)
	}
	if strings.Contains(screen, "HELPER-EXIT") {
		t.Fatalf("Ctrl-C ended the chat:\n%s", screen)
	}
	last := srv.Requests()[2]
	if m := last.Messages[len(last.Messages)-1]; m.Role != llm.RoleTool || !strings.Contains(m.Content, `"kind":"stopped"`) {
		t.Errorf("the model was sent %+v", m)
	}
	// Ctrl-C at a card waiting for one key still denies the call.
	x.run("send-keys", "-t", "chat", "spin again", "Enter")
	x.waitFor("(one key) ", 2)
	x.run("send-keys", "-t", "chat", "C-c")
	screen = x.waitFor("assistant> Not spinning.", 1)
	if !strings.Contains(screen, "  -> notes__spin: refused") {
		t.Errorf("Ctrl-C at the card did not deny the call:\n%s", screen)
	}
	x.run("send-keys", "-t", "chat", "/exit", "Enter")
	screen = x.waitFor("HELPER-EXIT-0", 1)
	if !strings.Contains(screen, "chat saved: resume it with packs chat --chat chat_") {
		t.Errorf("no resume hint:\n%s", screen)
	}
}
