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
	"unicode/utf8"

	"github.com/packs-run/packs/capability"
)

// maxShown bounds how much of the arguments a card shows.
const maxShown = 2000

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
	if _, err := io.WriteString(t.out, card(p)); err != nil {
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

// card describes a pending call in a few lines.
func card(p capability.Pending) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n── tool call: %s", p.Class())
	if p.BaseTool && p.Pack != "" {
		fmt.Fprintf(&b, " (pack %s)", p.Pack)
	}
	fmt.Fprintf(&b, "  [%s]\n", p.Invocation)
	args := strings.TrimSpace(string(p.Arguments))
	if args == "" {
		args = "{}"
	}
	if len(args) > maxShown {
		n := maxShown
		for n > 0 && !utf8.RuneStart(args[n]) {
			n--
		}
		args = fmt.Sprintf("%s… (%d more bytes)", args[:n], len(args)-n)
	}
	fmt.Fprintf(&b, "   arguments: %s\n", strings.ToValidUTF8(args, "\uFFFD"))
	if len(p.Capabilities) > 0 {
		names := make([]string, len(p.Capabilities))
		for i, n := range p.Capabilities {
			names[i] = string(n)
		}
		fmt.Fprintf(&b, "   may use:   %s\n", strings.Join(names, ", "))
	} else {
		b.WriteString("   may use:   nothing beyond its pack and workspace\n")
	}
	if len(p.Touches) > 0 {
		fmt.Fprintf(&b, "   touches:   %s\n", strings.Join(p.Touches, ", "))
	}
	if p.RiskLevel != "" {
		fmt.Fprintf(&b, "   risk:      %s (the recipe step's risk_level)\n", p.RiskLevel)
	}
	return b.String()
}
