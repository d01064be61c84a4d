// Package terminal is packs chat for a person at a terminal: it streams the
// model's replies, shows a card for every tool call that needs the person
// (Run, Deny, or Always for this chat), lists the artifacts tools made, and
// turns Ctrl-C into "stop what is running": the tool during a tool call, the
// reply while the model answers, the chat at the prompt.
//
// Once is the one-turn mode for scripts: no terminal, the reply and every
// tool call with its decision printed as lines.
package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/approve"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/termtext"
	"github.com/packs-run/packs/runtime"
)

// Options configure Run.
type Options struct {
	In       io.Reader
	Out      io.Writer
	Provider llm.Provider
	NoTools  bool
	// Interrupts delivers Ctrl-C (SIGINT). Nil leaves Ctrl-C to the
	// default, which ends the program.
	Interrupts <-chan os.Signal
	// DiscardTypeAhead drops lines typed before a card was shown, so that
	// a "y" typed while the model was still talking cannot approve a call
	// the person has not seen. Set it when In is a terminal; leave it off
	// for scripted input.
	DiscardTypeAhead bool
	// Markdown renders the model's replies (termtext.Markdown), a block at
	// a time as they stream, Width columns wide (0: 80). Set it when Out
	// is a terminal that shows colour; without it a reply is written as
	// the model sent it.
	Markdown bool
	Width    int
	// Keys is the terminal In reads from: a card then takes one key (r, d
	// or a) without Enter. Nil, or a terminal whose mode cannot be
	// changed, leaves cards to line input.
	Keys *os.File
}

// state is what the chat is doing, which decides what Ctrl-C stops.
type state int

const (
	idle  state = iota // at the prompt
	model              // the model is answering
	card               // a tool call waits for the person
	tool               // a tool is running
)

// ui is one interactive chat.
type ui struct {
	s     *chat.Session
	opt   Options
	lines <-chan string // the person's lines; closed at end of input

	wmu sync.Mutex // guards out and midLine
	out io.Writer
	// midLine says the last thing written did not end a line.
	midLine bool
	// speaking says the model's text is being streamed.
	speaking bool

	// md holds the reply's Markdown not yet rendered (Options.Markdown);
	// styled writes what is rendered.
	md     strings.Builder
	styled styledWriter

	// keyMode makes the reader hand over each byte as it comes (a card
	// waiting for one key) instead of whole lines.
	keyMode atomic.Bool

	mu       sync.Mutex
	state    state
	stopTool context.CancelFunc
	stopTurn context.CancelFunc
	denyCard chan struct{}
}

// Run is the interactive chat on s until the person leaves (/exit, end of
// input, or Ctrl-C at the prompt). The chat is saved as it goes; Run prints
// how to resume it.
func Run(ctx context.Context, s *chat.Session, opt Options) error {
	lines := make(chan string)
	u := &ui{s: s, opt: opt, lines: lines, out: opt.Out}
	if opt.Markdown {
		sw, ok := opt.Out.(styledWriter)
		if !ok {
			tw := termtext.NewWriter(opt.Out)
			sw, u.out = tw, tw
		}
		u.styled = sw
	}
	go readInput(opt.In, lines, &u.keyMode)
	u.printf("packs chat %s with %s. Type /help for commands; Ctrl-C stops a tool or a reply.\n", s.ID(), opt.Provider.Name())
	u.showPacks()
	u.showNotices()
	defer u.printf("chat saved: resume it with packs chat --chat %s\n", s.ID())
	for {
		u.printf("you> ")
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				u.printf("\n")
				return nil
			}
			line = strings.TrimSpace(l)
		case <-opt.Interrupts:
			u.printf("\n")
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		u.typed()
		if line == "" {
			continue
		}
		if quit, handled := u.command(ctx, line); handled {
			if quit {
				return nil
			}
			continue
		}
		u.turn(ctx, line)
	}
}

// styledWriter writes rendered Markdown (termtext.Writer).
type styledWriter interface {
	io.Writer
	WriteStyled(termtext.Styled) error
}

// readInput sends each line of r, then closes lines. While keyMode is
// set, each byte is sent as it comes, as a line of its own.
func readInput(r io.Reader, lines chan<- string, keyMode *atomic.Bool) {
	defer close(lines)
	buf := make([]byte, 4096)
	var partial []byte
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if c == '\n' {
				lines <- strings.TrimRight(string(partial), "\r")
				partial = partial[:0]
				continue
			}
			partial = append(partial, c)
			if keyMode.Load() {
				lines <- string(partial)
				partial = partial[:0]
			}
		}
		if err != nil {
			if len(partial) > 0 {
				lines <- strings.TrimRight(string(partial), "\r")
			}
			return
		}
	}
}

func (u *ui) printf(format string, args ...any) {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	s := fmt.Sprintf(format, args...)
	io.WriteString(u.out, s)
	if s != "" {
		u.midLine = !strings.HasSuffix(s, "\n")
	}
}

// typed notes that the person ended a line with Enter.
func (u *ui) typed() {
	u.wmu.Lock()
	u.midLine, u.speaking = false, false
	u.wmu.Unlock()
}

// line starts output on a fresh line.
func (u *ui) line(format string, args ...any) {
	u.wmu.Lock()
	u.renderMarkdown(true)
	if u.midLine {
		io.WriteString(u.out, "\n")
		u.midLine = false
	}
	u.speaking = false
	u.wmu.Unlock()
	u.printf(format, args...)
}

const help = `commands:
  /packs           the attached packs and what the model has opened
  /attach NAME     attach an installed pack to this chat
  /detach NAME     detach a pack
  /artifacts       the files tools made in this chat's workspace
  /exit            leave (the chat is saved)
  /<pack> TEXT     send TEXT and ask the model to use that pack
`

// command runs a chat command. handled is false for a line that is a
// message; quit is true for /exit.
func (u *ui) command(ctx context.Context, line string) (quit, handled bool) {
	word, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch word {
	case "/help":
		u.printf("%s", help)
	case "/exit", "/quit":
		return true, true
	case "/packs":
		u.showPacks()
	case "/attach", "/detach":
		if arg == "" {
			u.printf("usage: %s NAME\n", word)
			break
		}
		var err error
		if word == "/attach" {
			err = u.s.Attach(ctx, arg)
		} else {
			err = u.s.Detach(ctx, arg)
		}
		if err != nil {
			u.printf("error: %v\n", err)
			break
		}
		u.showPacks()
	case "/artifacts":
		arts, err := u.s.Artifacts(ctx)
		if err != nil {
			u.printf("error: %v\n", err)
			break
		}
		if len(arts) == 0 {
			u.printf("no artifacts yet\n")
		}
		for _, a := range arts {
			u.printf("  %s\n", artifactLine(a))
		}
		if len(arts) > 0 {
			u.printf("  in %s\n", u.s.Workspace())
		}
	default:
		return false, false
	}
	return false, true
}

func (u *ui) showPacks() {
	ps := u.s.Packs()
	if len(ps) == 0 {
		u.printf("no packs attached: /attach NAME, or start a message with /NAME\n")
		return
	}
	for _, p := range ps {
		var tags []string
		if p.Mandated {
			tags = append(tags, "mandated")
		}
		if p.Opened {
			tags = append(tags, "docs open")
		}
		if p.Enabled {
			tags = append(tags, "tools enabled")
		} else if p.HasTools {
			tags = append(tags, "has tools")
		}
		tags = append(tags, fmt.Sprintf("~%d tokens", chat.MetadataTokens(p.Name, p.Description, p.HasTools)))
		u.printf("  pack %s [%s]: %s\n", p.Name, strings.Join(tags, ", "), termtext.OneLine(p.Description, 100))
	}
}

func (u *ui) showNotices() {
	for _, n := range u.s.Notices() {
		u.line("note: %s\n", n)
	}
}

func (u *ui) setState(st state, stopTool context.CancelFunc) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state, u.stopTool = st, stopTool
}

// turn sends one message and waits for the reply, handling Ctrl-C.
func (u *ui) turn(ctx context.Context, text string) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u.mu.Lock()
	u.state, u.stopTurn = model, cancel
	u.mu.Unlock()
	type result struct {
		reply chat.Reply
		err   error
	}
	done := make(chan result, 1)
	go func() {
		r, err := u.s.Send(tctx, u.opt.Provider, text, chat.TurnOptions{Approver: u, Observer: u, NoTools: u.opt.NoTools})
		done <- result{r, err}
	}()
	for {
		select {
		case r := <-done:
			u.setState(idle, nil)
			u.finish(r.reply, r.err)
			return
		case <-u.opt.Interrupts:
			u.interrupt()
		}
	}
}

// interrupt handles Ctrl-C while a turn runs.
func (u *ui) interrupt() {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.state == card && u.denyCard != nil:
		close(u.denyCard)
		u.denyCard = nil
	case u.state == tool && u.stopTool != nil:
		u.stopTool()
		u.stopTool = nil
		u.line("stopping the tool (the chat goes on)\n")
	case u.stopTurn != nil:
		u.stopTurn()
		u.line("stopping the reply\n")
	}
}

func (u *ui) finish(r chat.Reply, err error) {
	switch {
	case errors.Is(err, context.Canceled):
		u.line("stopped; your message is kept in the chat\n")
	case errors.Is(err, chat.ErrToolBudget):
		u.line("error: %v\nuse /detach NAME, then send your message again\n", err)
	case err != nil:
		u.line("error: %v\n", err)
	default:
		u.line("")
	}
	if arts := r.Artifacts(); len(arts) > 0 {
		u.printf("artifacts in %s:\n", u.s.Workspace())
		for _, a := range arts {
			u.printf("  %s\n", artifactLine(a))
		}
	}
	u.showNotices()
}

// Text streams the model's answer: as it comes, or (Options.Markdown)
// rendered a block at a time, each block once a blank line outside a code
// fence ends it.
func (u *ui) Text(delta string) {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	if !u.speaking {
		if u.midLine {
			io.WriteString(u.out, "\n")
		}
		io.WriteString(u.out, "assistant> ")
		u.speaking = true
		u.midLine = true
	}
	if u.styled == nil {
		io.WriteString(u.out, delta)
		u.midLine = !strings.HasSuffix(delta, "\n")
		return
	}
	u.md.WriteString(delta)
	u.renderMarkdown(false)
}

// renderMarkdown writes the Markdown held so far: all of it when all is
// set, else the blocks a blank line outside a code fence has ended. The
// caller holds wmu.
func (u *ui) renderMarkdown(all bool) {
	if u.styled == nil || u.md.Len() == 0 {
		return
	}
	held := u.md.String()
	cut := len(held)
	if !all {
		cut = blocksEnd(held)
	}
	if cut == 0 {
		return
	}
	u.styled.WriteStyled(termtext.Markdown(held[:cut], u.opt.Width))
	u.midLine = false
	u.md.Reset()
	u.md.WriteString(held[cut:])
}

// blocksEnd is where the complete blocks of the Markdown s end: just
// after its last blank line outside a code fence, or 0.
func blocksEnd(s string) int {
	end, fence, at := 0, "", 0
	for {
		i := strings.IndexByte(s[at:], '\n')
		if i < 0 {
			return end
		}
		line := s[at : at+i]
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		case fence == "" && strings.TrimSpace(line) == "":
			end = at + i + 1
		}
		at += i + 1
	}
}

// ToolStart notes the running call so Ctrl-C can stop it.
func (u *ui) ToolStart(c llm.ToolCall, stop context.CancelFunc) {
	u.setState(tool, stop)
}

// ToolDone shows how a call ended.
func (u *ui) ToolDone(r chat.ToolResult) {
	u.setState(model, nil)
	u.line("  -> %s\n", resultLine(r))
	for _, b := range r.Blocks {
		if b.Type != runtime.BlockText {
			u.printf("     %s\n", b.Describe())
		}
	}
	for _, a := range r.Artifacts {
		u.printf("     artifact %s\n", artifactLine(a))
	}
}

// Notice shows a note about the chat.
func (u *ui) Notice(msg string) { u.line("note: %s\n", msg) }

// Name is how the terminal's approvals are recorded.
func (u *ui) Name() string { return "person at the terminal" }

// openCard puts the terminal in card state for a question (what names it
// in the notice about type-ahead): a line typed before the card is not an
// answer to it. It returns the channel Ctrl-C closes to deny, and the
// function that restores the state before.
func (u *ui) openCard(what string) (chan struct{}, func()) {
	deny := make(chan struct{})
	u.mu.Lock()
	prev := u.state
	u.state, u.denyCard = card, deny
	u.mu.Unlock()
	if u.opt.DiscardTypeAhead {
		if n := u.drain(); n > 0 {
			u.line("(ignored %d line(s) typed before this %s)\n", n, what)
		}
	}
	return deny, func() {
		u.mu.Lock()
		u.state, u.denyCard = prev, nil
		u.mu.Unlock()
	}
}

// Approve shows the call's card and waits for Run, Deny or Always.
func (u *ui) Approve(ctx context.Context, p capability.Pending) (capability.Verdict, error) {
	deny, closeCard := u.openCard("card")
	defer closeCard()
	u.line("%s", approve.Card(p))
	oneKey, stopKeys := u.startKeys()
	defer stopKeys()
	for {
		if oneKey {
			u.printf("[r]un, [d]eny, or [a]lways for this chat? (one key) ")
		} else {
			u.printf("[r]un, [d]eny, or [a]lways for this chat? ")
		}
		select {
		case l, ok := <-u.lines:
			if !ok {
				u.printf("\n")
				return capability.Deny, nil
			}
			if oneKey {
				u.printf("%s\n", termtext.OneLine(l, 8)) // the terminal does not echo it
			}
			u.typed()
			switch strings.ToLower(strings.TrimSpace(l)) {
			case "\x04": // Ctrl-D: no answer
				u.line("denied\n")
				return capability.Deny, nil
			case "r", "run", "y", "yes":
				u.line("  running %s (Ctrl-C stops it)\n", p.Class())
				return capability.RunOnce, nil
			case "a", "always":
				u.line("  running %s (Ctrl-C stops it); %s is allowed for the rest of this chat\n", p.Class(), p.Class())
				return capability.AllowChat, nil
			case "d", "deny", "n", "no":
				return capability.Deny, nil
			}
		case <-deny:
			u.line("denied\n")
			return capability.Deny, nil
		case <-ctx.Done():
			return capability.Deny, ctx.Err()
		}
	}
}

// startKeys makes the card take one key without Enter when In is a
// terminal whose mode can be set (Options.Keys); stop puts line input
// back.
func (u *ui) startKeys() (oneKey bool, stop func()) {
	if u.opt.Keys == nil {
		return false, func() {}
	}
	restore, err := oneKeyMode(u.opt.Keys)
	if err != nil {
		return false, func() {}
	}
	u.keyMode.Store(true)
	return true, func() {
		u.keyMode.Store(false)
		restore()
	}
}

// drain discards the lines already typed, and reports how many.
func (u *ui) drain() int {
	n := 0
	for {
		select {
		case _, ok := <-u.lines:
			if !ok {
				return n
			}
			n++
		case <-time.After(10 * time.Millisecond):
			return n
		}
	}
}

// resultLine says how a call ended, with who decided.
func resultLine(r chat.ToolResult) string {
	d := r.Decision
	who := d.Approver
	if d.Remembered {
		who += ", allowed for this chat"
	}
	switch {
	case !d.Approved:
		return fmt.Sprintf("%s: refused: %s", r.Name, termtext.OneLine(r.ErrorMessage(), 300))
	case r.IsError:
		return fmt.Sprintf("%s: approved by %s: %s: %s", r.Name, who, r.ErrorKind, termtext.OneLine(r.ErrorMessage(), 300))
	}
	return fmt.Sprintf("%s: approved by %s: ok (%s, %s)", r.Name, who, size(int64(len(r.Content))), capability.DescribeTiming(r.Waited, r.RunTime))
}

func artifactLine(a chat.Artifact) string {
	return fmt.Sprintf("%s (%s, %s)", a.Path, a.MIME, size(a.Size))
}

func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
