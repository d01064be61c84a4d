package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/packs-run/packs/capability"
)

var _ capability.Asker = (*Terminal)(nil)

// Ask puts a tool's question (ask_person) to the person at the terminal,
// as AskByLines does.
func (t *Terminal) Ask(ctx context.Context, q capability.Question) (capability.Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return AskByLines(ctx, q, t.out, t.readLine)
}

// ReadLine writes prompt and returns the person's next line, trimmed; eof
// reports the end of input.
type ReadLine func(ctx context.Context, prompt string) (line string, eof bool, err error)

// AskByLines puts a tool's question to a person who answers line by line
// (the terminal of packs run, packs chat): first whether to answer at all
// (n declines, the end of input or anything else cancels), then one line
// per field. A line that is not of the field's type is asked again, up to
// maxTries; an empty line leaves an optional field out. The host checks
// the whole answer against the question's schema.
func AskByLines(ctx context.Context, q capability.Question, out io.Writer, read ReadLine) (capability.Answer, error) {
	cancel := capability.Answer{Action: capability.ActionCancel}
	if err := ctx.Err(); err != nil {
		return cancel, err
	}
	fmt.Fprintf(out, "\n── question from %s__%s  [%s]\n   %s\n", q.Pack, q.Tool, q.Invocation, strings.ToValidUTF8(q.Message, "\uFFFD"))
	line, eof, err := read(ctx, "Answer it? [y]es, [n]o: ")
	switch {
	case err != nil:
		return cancel, err
	case eof && line == "":
		return cancel, nil
	}
	switch strings.ToLower(line) {
	case "y", "yes":
	case "n", "no":
		return capability.Answer{Action: capability.ActionDecline}, nil
	default:
		return cancel, nil
	}
	content := map[string]any{}
	for _, f := range q.Fields() {
		v, ok, err := askField(ctx, f, out, read)
		if err != nil || !ok {
			return cancel, err
		}
		if v != nil {
			content[f.Name] = v
		}
	}
	return capability.Answer{Action: capability.ActionAccept, Content: content}, nil
}

// askField reads one field; ok is false when the person gave up (the end
// of input, or maxTries unreadable lines). A nil value leaves it out.
func askField(ctx context.Context, f capability.Field, out io.Writer, read ReadLine) (any, bool, error) {
	label := f.Name
	if f.Title != "" {
		label = f.Title
	}
	kind := f.Type
	if len(f.Enum) > 0 {
		kind = "one of " + strings.Join(f.Enum, ", ")
	}
	if f.Required {
		kind += ", required"
	}
	if f.Description != "" {
		fmt.Fprintf(out, "   %s\n", f.Description)
	}
	for range maxTries {
		line, eof, err := read(ctx, fmt.Sprintf("   %s (%s): ", label, kind))
		if err != nil {
			return nil, false, err
		}
		if line == "" {
			if eof {
				return nil, false, nil
			}
			if !f.Required {
				return nil, true, nil
			}
			io.WriteString(out, "   This field is required.\n")
			continue
		}
		if v, ok := parseField(f.Type, line); ok {
			return v, true, nil
		}
		fmt.Fprintf(out, "   Please give a %s.\n", f.Type)
		if eof {
			return nil, false, nil
		}
	}
	return nil, false, nil
}

// parseField reads line as a value of JSON Schema type typ.
func parseField(typ, line string) (any, bool) {
	switch typ {
	case "number":
		x, err := strconv.ParseFloat(line, 64)
		return x, err == nil
	case "integer":
		x, err := strconv.ParseInt(line, 10, 64)
		return float64(x), err == nil
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, true
		case "n", "no", "false":
			return false, true
		}
		return nil, false
	}
	return line, true
}

// readLine writes prompt and reads one trimmed line; eof reports the end
// of input.
func (t *Terminal) readLine(ctx context.Context, prompt string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	io.WriteString(t.out, prompt)
	line, err := t.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, fmt.Errorf("approve: terminal: %w", err)
	}
	return strings.TrimSpace(line), err != nil, nil
}
