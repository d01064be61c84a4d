// Package approve holds the approvers a person answers: for now the
// terminal prompt used by packs run and packs chat. (The web UI and MCP
// elicitation approve through the same capability.Approver interface.)
package approve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/termtext"
)

// maxShown bounds how much of the arguments a card shows, in bytes.
const maxShown = 400

// maxTries is how many unreadable answers end in a denial.
const maxTries = 3

// Terminal asks a person at a terminal about each pending call: y runs it
// once, a allows its class for the rest of the chat, n (or an empty line, or
// the end of input) denies it. Prompts are serialized: concurrent calls wait
// their turn. A read in progress cannot be interrupted by ctx; ctx is checked
// before each question.
type Terminal struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

var _ capability.Approver = (*Terminal)(nil)

// NewTerminal returns an approver that writes cards to out and reads answers
// from in. Pass a *bufio.Reader already wrapping in to share its buffer.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	br, ok := in.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(in)
	}
	return &Terminal{in: br, out: out}
}

// Name is how the audit log names this approver.
func (t *Terminal) Name() string { return "terminal" }

// Approve shows the call and reads the person's answer.
func (t *Terminal) Approve(ctx context.Context, p capability.Pending) (capability.Verdict, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return capability.Deny, err
	}
	if _, err := io.WriteString(t.out, "\n"+Card(p)); err != nil {
		return capability.Deny, fmt.Errorf("approve: terminal: %w", err)
	}
	prompt, hint := "Run it? [y]es once, [n]o: ", "Please answer y or n.\n"
	if p.Chat != "" {
		prompt, hint = "Run it? [y]es once, [a]lways in this chat, [n]o: ", "Please answer y, a or n.\n"
	}
	for range maxTries {
		if err := ctx.Err(); err != nil {
			return capability.Deny, err
		}
		io.WriteString(t.out, prompt)
		line, err := t.in.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return capability.Deny, fmt.Errorf("approve: terminal: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return capability.RunOnce, nil
		case "a", "always":
			if p.Chat != "" {
				return capability.AllowChat, nil
			}
		case "n", "no", "":
			if errors.Is(err, io.EOF) && line == "" {
				io.WriteString(t.out, "\n")
			}
			return capability.Deny, nil
		}
		if errors.Is(err, io.EOF) {
			return capability.Deny, nil
		}
		io.WriteString(t.out, hint)
	}
	return capability.Deny, nil
}

// Card renders a pending call for the person, the same at every terminal
// (packs run, packs recipe run, packs chat): the tool, its arguments on one
// line, the capabilities at stake, what it touches and, for a recipe step,
// its risk.
func Card(p capability.Pending) string {
	var b strings.Builder
	fmt.Fprintf(&b, "+-- tool call: %s", p.Class())
	if p.Pack != "" {
		fmt.Fprintf(&b, " (pack %s)", p.Pack)
	}
	b.WriteString("\n")
	args := termtext.Compact(p.Arguments, maxShown)
	if args == "" {
		args = "{}"
	}
	fmt.Fprintf(&b, "|   arguments: %s\n", args)
	caps := "none"
	if len(p.Capabilities) > 0 {
		var cs []string
		for _, c := range p.Capabilities {
			cs = append(cs, string(c))
		}
		caps = strings.Join(cs, ", ")
	}
	fmt.Fprintf(&b, "|   capabilities: %s\n", caps)
	for _, t := range p.Touches {
		fmt.Fprintf(&b, "|   touches: %s\n", termtext.OneLine(t, 200))
	}
	if p.RiskLevel != "" {
		fmt.Fprintf(&b, "|   risk: %s (the recipe step's risk_level)\n", p.RiskLevel)
	}
	return b.String()
}
