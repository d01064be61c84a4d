package terminal

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/runtime"
)

var notesPack, _ = filepath.Abs(filepath.Join("..", "testdata", "notes"))

// env is a state directory opened with real components.
type env struct {
	deps  chat.Deps
	close func()
}

// installNotes installs the notes pack into a new state directory.
func installNotes(t *testing.T, dir string, caps ...capability.Name) {
	t.Helper()
	ctx := context.Background()
	home, err := dist.OpenHome(ctx, dir, dist.HomeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := home.Stage(ctx, notesPack, dist.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit(ctx, caps); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, home.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, n := range caps {
		if err := db.PutGrant(ctx, "notes", "", capability.UserGrant{Capability: n, Scope: capability.ScopePersistent}); err != nil {
			t.Fatal(err)
		}
	}
}

// openEnv opens the state directory dir.
func openEnv(dir string) (*env, error) {
	ctx := context.Background()
	home, err := dist.OpenHome(ctx, dir, dist.HomeOptions{})
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, home.DBPath())
	if err != nil {
		return nil, err
	}
	log, err := audit.Open(ctx, db, audit.Options{})
	if err != nil {
		db.Close()
		return nil, err
	}
	rt, err := runtime.New(ctx, runtime.Config{CacheDir: home.CacheDir()})
	if err != nil {
		log.Close()
		db.Close()
		return nil, err
	}
	pl, err := (&app.App{DB: db, Home: home}).NewPipeline(rt, log, nil)
	if err != nil {
		rt.Close(ctx)
		log.Close()
		db.Close()
		return nil, err
	}
	return &env{
		deps: chat.Deps{Store: db, Catalog: chat.HomeCatalog{Home: home, DB: db}, Pipeline: pl, Workspaces: home.WorkspacesDir()},
		close: func() {
			rt.Close(ctx)
			log.Close()
			db.Close()
		},
	}, nil
}

func newEnv(t *testing.T, caps ...capability.Name) *env {
	t.Helper()
	dir := t.TempDir()
	installNotes(t, dir, caps...)
	e, err := openEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

func openAI(t *testing.T, srv *llmtest.Server) llm.Provider {
	t.Helper()
	p, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.OpenAIURL(), Model: "fake", MaxTokens: 100, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tc(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

func TestOnce(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("open_docs", `{"pack_id":"notes"}`)}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("enable_tools", `{"pack_id":"notes"}`)}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__note", `{}`)}},
		llmtest.Turn{Text: "Wrote note.md."},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__note", `{}`)}},
		llmtest.Turn{Text: "Could not write it."},
	)
	defer srv.Close()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	opt := OnceOptions{Out: &out, Err: &errOut, Provider: openAI(t, srv), Attach: []string{"notes"}, Yes: true}
	if err := Once(context.Background(), s, "write a note", opt); err != nil {
		t.Fatal(err)
	}
	// --attach is the person's consent to read notes and list its tools;
	// --yes approves the tool's call.
	want := `tool open_docs {"pack_id":"notes"}: approved by attach: ok
tool enable_tools {"pack_id":"notes"}: approved by attach: ok
tool notes__note {}: approved by --yes: ok
artifact note.md text/markdown 7 bytes
Wrote note.md.
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.Contains(errOut.String(), "chat "+s.ID()) {
		t.Errorf("stderr %q lacks the chat id", errOut.String())
	}
	// Without --yes nobody approves: the call is denied and said so.
	out.Reset()
	opt.Yes = false
	if err := Once(context.Background(), s, "again", opt); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), `tool notes__note {}: denied: capability: denied by gate`) || !strings.HasSuffix(out.String(), "Could not write it.\n") {
		t.Errorf("got:\n%s", out.String())
	}
}

// TestRunLines drives the interactive chat through its input: a message,
// enable_tools approved by the attach (no card), a card answered "a"
// (always for this chat), a second call of the same class that is not
// asked about, the commands, and /exit.
func TestRunLines(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("enable_tools", `{"pack_id":"notes"}`)}},
		llmtest.Turn{Text: "Let me echo it.", ToolCalls: []llm.ToolCall{tc("notes__echo", `{"text":"one"}`)}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__echo", `{"text":"two"}`)}},
		llmtest.Turn{Text: "Both echoed."},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__note", `{}`)}},
		llmtest.Turn{Text: "Not written."},
	)
	defer srv.Close()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{Attach: []string{"notes"}})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{"echo one and two", "a", "/packs", "/artifacts", "write a note", "x", "d", "/detach nope", "/exit", "never read"}, "\n") + "\n"
	var out bytes.Buffer
	if err := Run(context.Background(), s, Options{In: strings.NewReader(in), Out: &out, Provider: openAI(t, srv)}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"packs chat " + s.ID() + " with openai.",
		"pack notes [has tools, ~46 tokens]: Keep short notes",
		"you>   -> enable_tools: approved by attach: ok (",
		"assistant> Let me echo it.\n+-- tool call: notes__echo (pack notes)\n|   arguments: {\"text\":\"one\"}\n",
		"[r]un, [d]eny, or [a]lways for this chat? ",
		"  -> notes__echo: approved by person at the terminal: ok (",
		"  -> notes__echo: approved by person at the terminal, allowed for this chat: ok (",
		"assistant> Both echoed.\n",
		"no artifacts yet",
		"[r]un, [d]eny, or [a]lways for this chat? [r]un, [d]eny, or [a]lways for this chat? ",
		"  -> notes__note: refused: capability: denied by gate: denied by person at the terminal",
		"assistant> Not written.",
		"error: chat: not found: pack nope is not attached",
		"chat saved: resume it with packs chat --chat " + s.ID(),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "pack notes [tools enabled, ~46 tokens]") {
		t.Errorf("/packs does not list notes with its tools enabled:\n%s", got)
	}
	if n := strings.Count(got, "+-- tool call:"); n != 2 {
		t.Errorf("got %d cards, want 2 (enable_tools was approved by the attach, the second echo allowed for the chat)", n)
	}
	if len(srv.Requests()) != 6 {
		t.Errorf("got %d requests: input after /exit was sent", len(srv.Requests()))
	}
}

// A reader that never ends, for tests that stop the chat by other means.
type blockingReader struct{ done chan struct{} }

func (b blockingReader) Read([]byte) (int, error) { <-b.done; return 0, io.EOF }

// TestCtrlCAtPromptLeaves: an interrupt at the prompt ends the chat.
func TestCtrlCAtPromptLeaves(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewServer()
	defer srv.Close()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	intr := make(chan os.Signal, 1)
	intr <- os.Interrupt
	in := blockingReader{done: make(chan struct{})}
	defer close(in.done)
	var out bytes.Buffer
	if err := Run(context.Background(), s, Options{In: in, Out: &out, Provider: openAI(t, srv), Interrupts: intr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "chat saved") {
		t.Errorf("got %q", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe to read while the chat writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTypeAheadIsDiscarded: a "y" typed before a card appears does not
// approve the call.
func TestTypeAheadIsDiscarded(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("enable_tools", `{"pack_id":"notes"}`)}},
		llmtest.Turn{Text: "Echoing.", ToolCalls: []llm.ToolCall{tc("notes__echo", `{"text":"hi"}`)}},
		llmtest.Turn{Text: "Not echoed."},
	)
	defer srv.Close()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{Attach: []string{"notes"}})
	if err != nil {
		t.Fatal(err)
	}
	in, w := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), s, Options{In: in, Out: out, Provider: openAI(t, srv), DiscardTypeAhead: true})
	}()
	io.WriteString(w, "echo hi\ny\n")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "[r]un, [d]eny") {
		if time.Now().After(deadline) {
			t.Fatalf("no card:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	io.WriteString(w, "d\n/exit\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "(ignored 1 line(s) typed before this card)") || !strings.Contains(got, "notes__echo: refused: ") {
		t.Errorf("the type-ahead was not discarded:\n%s", got)
	}
}

// TestToolDoneShowsBlocks: a content tool's images, sounds and files get a
// line each under the call's result line; its text is the model's to tell.
func TestToolDoneShowsBlocks(t *testing.T) {
	var out bytes.Buffer
	u := &ui{out: &out}
	u.ToolDone(chat.ToolResult{Name: "media__show", Decision: chat.Decision{Approved: true, Approver: "you"}, Content: "{}", Blocks: []runtime.Block{
		{Type: runtime.BlockText, Text: "a dot"},
		{Type: runtime.BlockImage, MIMEType: "image/png", Data: make([]byte, 2048)},
		{Type: runtime.BlockResource, URI: "file:///a.csv", MIMEType: "text/csv", Text: "x,y"},
	}})
	got := out.String()
	for _, want := range []string{"\n     [image image/png, 2.0 KiB]\n", "\n     [resource file:///a.csv, text/csv, 3 B]\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "a dot") {
		t.Errorf("output %q repeats the text block", got)
	}
}

// TestCardSaysWaitedAndRan: the result line of a call the person answered
// after a while says how long it waited for them and how long it ran.
func TestCardSaysWaitedAndRan(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("enable_tools", `{"pack_id":"notes"}`)}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{tc("notes__echo", `{"text":"hi"}`)}},
		llmtest.Turn{Text: "Echoed."},
	)
	defer srv.Close()
	s, err := chat.Open(context.Background(), e.deps, chat.Options{Attach: []string{"notes"}})
	if err != nil {
		t.Fatal(err)
	}
	in, w := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), s, Options{In: in, Out: out, Provider: openAI(t, srv)}) }()
	io.WriteString(w, "echo hi\n")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "[r]un, [d]eny") {
		if time.Now().After(deadline) {
			t.Fatalf("no card:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	const delay = 300 * time.Millisecond
	time.Sleep(delay)
	io.WriteString(w, "r\n/exit\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !regexp.MustCompile(`  -> enable_tools: approved by attach: ok \(\d+ B, ran [\d.]+ ms\)`).MatchString(got) {
		t.Errorf("enable_tools was not approved by the attach at once:\n%s", got)
	}
	m := regexp.MustCompile(`notes__echo: approved by person at the terminal: ok \(\d+ B, waited ([\d.]+) (ms|s) for you, ran ([\d.]+) ms\)`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("the result line does not say the wait and the run:\n%s", got)
	}
	waited, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "s" {
		waited *= 1000
	}
	ran, _ := strconv.ParseFloat(m[3], 64)
	if waited < float64(delay.Milliseconds()) || ran >= waited {
		t.Errorf("waited %v ms, ran %v ms: want waited ≥ %v, ran < waited", waited, ran, delay)
	}
}
