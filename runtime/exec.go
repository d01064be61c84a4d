package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns"
	"github.com/packs-run/packs/packs"
)

// runExec runs an exec tool: its argv, placeholders filled from the
// validated input, through hostfns.Exec (grant check, no shell, scrubbed
// environment, workspace as cwd, process-group kill on timeout).
func (r *Runtime) runExec(ctx context.Context, inv Invocation, input []byte, lim capability.Limits, log *slog.Logger) (Result, error) {
	argv, err := expandArgv(inv.Tool, input)
	if err != nil {
		return Result{}, err
	}
	call := &hostfns.Call{
		Pack: inv.Pack.Name, Tool: inv.Tool.Name, Invocation: inv.ID, Grant: inv.Grant, Recorder: inv.Recorder,
		PackRoot: inv.Pack.Dir, Workspace: inv.Workspace, Logger: log,
	}
	out, err := hostfns.Exec(ctx, call, argv, hostfns.ExecOptions{
		Timeout:   lim.Timeout,
		MaxOutput: lim.OutputBytes,
		Environ:   os.Environ(),
	})
	res := Result{Stderr: out.Stderr, ExitCode: out.ExitCode, Duration: out.Duration, Truncated: out.Truncated}
	switch {
	case errors.Is(err, hostfns.ErrTimeout):
		return res, fmt.Errorf("%w: %w", ErrTimeout, err)
	case err != nil:
		return res, err
	case out.ExitCode != 0:
		return res, &ToolError{Pack: inv.Pack.Name, Tool: inv.Tool.Name, ExitCode: out.ExitCode, Message: lastLine(out.Stderr), Stderr: out.Stderr}
	}
	res.Output = jsonResult(out.Stdout)
	return res, nil
}

// expandArgv fills the "{{name}}" placeholders of t's argv from input (a
// JSON object that passed t's schema). Every argv element stays exactly one
// element, whatever the values hold: spaces, quotes, ";" or "$(...)" reach
// the program verbatim, as no shell ever sees them. A string is inserted as
// is; a number, boolean, array or object as its JSON text. A placeholder
// whose property is absent or null is an error wrapping
// packs.ErrInvalidInput: mark the property required, or drop the
// placeholder.
func expandArgv(t *packs.Tool, input []byte) ([]string, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(input, &args); err != nil {
		return nil, &packs.InputError{Tool: t.Name, Problems: []packs.InputProblem{{Reason: "an exec tool's input must be a JSON object: " + err.Error()}}}
	}
	argv := make([]string, len(t.Run.Exec))
	for i, tmpl := range t.Run.Exec {
		var b strings.Builder
		rest := tmpl
		for {
			open := strings.Index(rest, "{{")
			if open < 0 {
				b.WriteString(rest)
				break
			}
			end := strings.Index(rest[open:], "}}")
			if end < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:open])
			name := strings.TrimSpace(rest[open+2 : open+end])
			v, err := argValue(args[name])
			if err != nil {
				return nil, &packs.InputError{Tool: t.Name, Problems: []packs.InputProblem{{Field: "/" + name, Reason: err.Error()}}}
			}
			b.WriteString(v)
			rest = rest[open+end+2:]
		}
		argv[i] = b.String()
	}
	return argv, nil
}

// argValue is the text a placeholder becomes.
func argValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", errors.New("the command line needs this value: pass it")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", err
	}
	return compact.String(), nil
}
