package terminal

import (
	"context"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/approve"
)

// Ask puts a running tool's question (ask_person) to the person, line by
// line (approve.AskByLines). Ctrl-C stops the tool, which cancels the
// question.
func (u *ui) Ask(ctx context.Context, q capability.Question) (capability.Answer, error) {
	if u.opt.DiscardTypeAhead {
		if n := u.drain(); n > 0 {
			u.line("(ignored %d line(s) typed before this question)\n", n)
		}
	}
	u.line("")
	return approve.AskByLines(ctx, q, uiWriter{u}, u.readLine)
}

// readLine prompts and waits for the person's next line.
func (u *ui) readLine(ctx context.Context, prompt string) (string, bool, error) {
	u.printf("%s", prompt)
	select {
	case l, ok := <-u.lines:
		if !ok {
			u.printf("\n")
			return "", true, nil
		}
		u.typed()
		return strings.TrimSpace(l), false, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
}

// uiWriter writes through the ui, which keeps track of unfinished lines.
type uiWriter struct{ u *ui }

func (w uiWriter) Write(p []byte) (int, error) {
	w.u.printf("%s", p)
	return len(p), nil
}
