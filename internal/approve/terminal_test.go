package approve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/approve"
)

func pending(chat string) capability.Pending {
	return capability.Pending{
		Invocation: "inv-1", Chat: chat, Pack: "web-reader", Tool: "fetch",
		Arguments:    json.RawMessage(`{"url":"https://api.example.com/x"}`),
		Capabilities: []capability.Name{capability.Network}, Touches: []string{"api.example.com"},
	}
}

func TestTerminalAnswers(t *testing.T) {
	tests := []struct {
		name, input, chat string
		want              capability.Verdict
		prompts           int
	}{
		{"yes", "y\n", "", capability.RunOnce, 1},
		{"YES", " YES \n", "", capability.RunOnce, 1},
		{"no", "n\n", "", capability.Deny, 1},
		{"empty line denies", "\n", "", capability.Deny, 1},
		{"end of input denies", "", "", capability.Deny, 1},
		{"yes without newline", "y", "", capability.RunOnce, 1},
		{"always in a chat", "a\n", "c1", capability.AllowChat, 1},
		{"always outside a chat asks again", "a\ny\n", "", capability.RunOnce, 2},
		{"garbage then yes", "maybe\nsure\ny\n", "c1", capability.RunOnce, 3},
		{"garbage three times denies", "x\nx\nx\ny\n", "", capability.Deny, 3},
		{"garbage then end", "what", "", capability.Deny, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			term := approve.NewTerminal(strings.NewReader(tt.input), &out)
			got, err := term.Approve(context.Background(), pending(tt.chat))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("verdict = %v, want %v\n%s", got, tt.want, out.String())
			}
			if n := strings.Count(out.String(), "Run it?"); n != tt.prompts {
				t.Errorf("asked %d times, want %d", n, tt.prompts)
			}
		})
	}
}

func TestCard(t *testing.T) {
	got := approve.Card(capability.Pending{Pack: "web", Tool: "fetch", Arguments: []byte(`{ "url" : "https://example.com/` + strings.Repeat("a", 500) + `" }`),
		Capabilities: []capability.Name{capability.Network}, Touches: []string{"network example.com"}})
	want := "+-- tool call: web__fetch (pack web)\n|   arguments: {\"url\":\"https://example.com/" + strings.Repeat("a", 400-len(`{"url":"https://example.com/`)) + "…\n|   capabilities: network\n|   touches: network example.com\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	got = approve.Card(capability.Pending{Pack: "git-flow", Tool: "git-flow__recipe_r", BaseTool: true, Arguments: []byte(`{}`), RiskLevel: capability.RiskCritical})
	if !strings.HasSuffix(got, "|   risk: critical (the recipe step's risk_level)\n") {
		t.Errorf("a recipe step's card does not show its risk:\n%s", got)
	}
}

func TestTerminalCard(t *testing.T) {
	var out bytes.Buffer
	p := pending("c1")
	p.Arguments = json.RawMessage(`{"text":"` + strings.Repeat("é", 3000) + `"}`)
	term := approve.NewTerminal(strings.NewReader("n\n"), &out)
	if _, err := term.Approve(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"+-- tool call: web-reader__fetch", "capabilities: network", "touches: api.example.com", "…\n", "[a]lways in this chat"} {
		if !strings.Contains(s, want) {
			t.Errorf("card lacks %q:\n%s", want, s)
		}
	}
	if len(s) > 2500 {
		t.Errorf("card is %d bytes: arguments were not cut", len(s))
	}
	out.Reset()
	base := capability.Pending{Invocation: "i", Pack: "json-tools", Tool: "open_docs", BaseTool: true}
	approve.NewTerminal(strings.NewReader("n\n"), &out).Approve(context.Background(), base)
	if s := out.String(); !strings.Contains(s, "open_docs (pack json-tools)") || !strings.Contains(s, "arguments: {}") || !strings.Contains(s, "capabilities: none") {
		t.Errorf("base tool card:\n%s", s)
	}
	out.Reset()
	step := capability.Pending{Invocation: "rcp_0123456789abcdef.step.push", Pack: "git-flow", Tool: "git-flow__recipe_r", BaseTool: true, RiskLevel: capability.RiskHigh}
	approve.NewTerminal(strings.NewReader("n\n"), &out).Approve(context.Background(), step)
	if s := out.String(); !strings.Contains(s, "risk: high (the recipe step's risk_level)") {
		t.Errorf("a recipe step's card does not show its risk:\n%s", s)
	}
}

func TestTerminalThroughGate(t *testing.T) {
	var out bytes.Buffer
	term := approve.NewTerminal(strings.NewReader("a\n"), &out)
	gate := capability.NewGate(term)
	for i, inv := range []string{"i1", "i2", "i3"} {
		p := pending("chat-1")
		p.Invocation = inv
		a, err := gate.Decide(context.Background(), p)
		if err != nil || a.Covers(p.Call()) != nil || a.Approver() != "terminal" || a.Remembered() != (i > 0) {
			t.Fatalf("call %d: %v, remembered %v", i, err, a.Remembered())
		}
	}
	if n := strings.Count(out.String(), "Run it?"); n != 1 {
		t.Errorf("asked %d times for one class in one chat, want 1", n)
	}
	p := pending("")
	p.Invocation = "i4"
	if _, err := gate.Decide(context.Background(), p); !errors.Is(err, capability.ErrRejected) {
		t.Errorf("input exhausted: %v, want a rejection", err)
	}
}

func TestTerminalCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	term := approve.NewTerminal(strings.NewReader("y\n"), io.Discard)
	if v, err := term.Approve(ctx, pending("")); v != capability.Deny || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v, %v", v, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("tty gone") }

func TestTerminalWriteFails(t *testing.T) {
	term := approve.NewTerminal(strings.NewReader("y\n"), failingWriter{})
	if v, err := term.Approve(context.Background(), pending("")); v != capability.Deny || err == nil {
		t.Errorf("broken terminal: %v, %v; want a denial with an error", v, err)
	}
}

// TestTerminalSerializes makes sure concurrent calls never interleave their
// cards and answers.
func TestTerminalSerializes(t *testing.T) {
	var out bytes.Buffer
	term := approve.NewTerminal(strings.NewReader(strings.Repeat("y\n", 8)), &out)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v, err := term.Approve(context.Background(), pending("")); v != capability.RunOnce || err != nil {
				t.Errorf("%v, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(out.String(), "+-- tool call"); n != 8 {
		t.Errorf("%d cards, want 8", n)
	}
}
