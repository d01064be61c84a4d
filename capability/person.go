package capability

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
)

// The person-facing interfaces: what a guest asks the person behind a call
// (Asker) and what it tells that person's client while it runs (Notifier).
// They live here, beside Approver, because the same front ends implement
// all three (the terminal, the web app, MCP clients) and none of them needs
// the host functions (hostfns) that consume them.

// The actions of an answer. Accept, Decline and Cancel are the person's
// (as in MCP elicitation); Denied is the host's: the grant, the policy or
// a bound refused the question and nobody was asked.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
	ActionDenied  = "denied"
)

// Question is what a guest asks the person: a message and the form of the
// answer. Schema is the checked schema, re-encoded: an object of primitive
// properties, what MCP elicitation allows.
type Question struct {
	Pack, Tool, Invocation string
	Message                string
	Schema                 json.RawMessage
}

// Answer is the person's reply. Content is set only for ActionAccept; the
// host checks it against the question's schema before the guest sees it.
type Answer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Asker puts a question to the person behind a call: the channel that
// approves the call (MCP elicitation, the web app, the terminal). The
// pipeline takes it from the call's approvers (runtime); without one every
// question is declined. Ask blocks until the person answers or ctx ends.
type Asker interface {
	Name() string
	Ask(ctx context.Context, q Question) (Answer, error)
}

type askerKey struct{}

// WithAsker returns a context whose calls ask a their questions. A nil a
// leaves ctx as it is.
func WithAsker(ctx context.Context, a Asker) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerFrom returns the Asker in ctx, or nil.
func AskerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// Field is one property of a question's form, for an Asker that draws the
// form itself (a terminal, the web app).
type Field struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"` // string, number, integer or boolean
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"` // the choices of a string, if any
	Required    bool     `json:"required"`
}

// Fields lists the form's properties, required ones first, then by name.
// A Question whose schema is not an object of properties has none.
func (q Question) Fields() []Field {
	var s struct {
		Properties map[string]*Field `json:"properties"`
		Required   []string          `json:"required"`
	}
	if json.Unmarshal(q.Schema, &s) != nil {
		return nil
	}
	out := make([]Field, 0, len(s.Properties))
	for name, f := range s.Properties {
		if f == nil {
			continue
		}
		out = append(out, Field{Name: name, Type: f.Type, Title: f.Title, Description: f.Description,
			Enum: f.Enum, Required: slices.Contains(s.Required, name)})
	}
	slices.SortFunc(out, func(a, b Field) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Notifier hears what a guest tells the person's client during a call: its
// log lines (after the call's Logger, within the same log budget) and its
// progress. A front end that has a client to tell sets one for a call
// (WithNotifier; the MCP server forwards them as notifications); without
// one they go only to the Logger, or nowhere. Secrets are masked before a
// Notifier sees anything. Its methods are called from the guest's call, in
// order, and must not block for long.
type Notifier interface {
	// LogEnabled reports whether a log line at level reaches the client.
	LogEnabled(level slog.Level) bool
	// Log passes one log line on.
	Log(level slog.Level, msg string)
	// Progress passes one progress report on.
	Progress(p Progress)
}

// Progress is one progress report of a guest: Progress grows with each
// report; Total, when not 0, is the value at which the work is done.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

type notifierKey struct{}

// WithNotifier returns a context whose calls tell n what their guests log
// and report.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

// NotifierFrom returns the Notifier in ctx, or nil.
func NotifierFrom(ctx context.Context) Notifier {
	n, _ := ctx.Value(notifierKey{}).(Notifier)
	return n
}
