package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"

	"github.com/packs-run/packs/capability"
)

// AskNamespace holds the ask host function (docs/abi.md §4.8).
const AskNamespace = "packs:host/ask"

// Bounds on the questions a guest asks.
const (
	// MaxQuestions is how many questions one call may ask; past it each
	// question is refused and recorded as a denial.
	MaxQuestions = 8
	// MaxAskBytes caps one request: message and schema together.
	MaxAskBytes = 16 << 10
	// MaxQuestionMessage caps the message, in bytes.
	MaxQuestionMessage = 2000
	// MaxQuestionFields caps the properties of the schema.
	MaxQuestionFields = 16
	// AskTimeout is how long one question waits for the person; the call's
	// own time limit still applies and may end it sooner.
	AskTimeout = 5 * time.Minute
)

// askHost is the ask host function: request is a block holding
// {"message": "...", "schema": {...}}; it returns a block holding the
// answer, {"action": "accept", "content": {...}}, {"action": "decline"},
// {"action": "cancel"} or {"action": "denied", "error": "..."}. A malformed
// request traps (ErrInvalidRequest).
func askHost(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	b := mustReadBytes(p, stack[0])
	out, err := c.ask(ctx, b)
	if err != nil {
		panic(err)
	}
	stack[0] = mustWrite(p, out)
}

// askReply is the JSON a guest gets back.
type askReply struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// ask serves one question: parse, decide under the grant (recorded),
// ask, check the answer, record the outcome. Only a malformed request or
// a failure to record is an error.
func (c *Call) ask(ctx context.Context, b []byte) ([]byte, error) {
	q, err := ParseQuestion(b)
	if err != nil {
		return nil, err
	}
	// The person sees no secret: not in the message, not in the schema's
	// names, titles, descriptions or choices.
	sec := secretsFrom(ctx)
	q.Message = sec.MaskString(q.Message)
	if sec.Holds(q.Schema) {
		if q.Schema = sec.Mask(q.Schema); !json.Valid(q.Schema) {
			return nil, fmt.Errorf("%w: ask: the schema holds a secret's value", ErrInvalidRequest)
		}
	}
	q.Pack, q.Tool, q.Invocation = c.Pack, c.Tool, c.Invocation
	resource := askResource(q.Message)

	c.mu.Lock()
	c.asked++
	n := c.asked
	c.mu.Unlock()
	if n > MaxQuestions {
		e := c.exercise(capability.AskPerson, resource, false, fmt.Sprintf("more than %d questions in one call", MaxQuestions))
		e.Layer = capability.LayerGate
		if err := c.record(e); err != nil {
			return nil, err
		}
		return json.Marshal(askReply{Action: capability.ActionDenied, Error: "hostfns: ask: " + e.Reason})
	}
	if err := c.decide(c.Grant.Ask(resource)); err != nil {
		if !isDenied(err) {
			return nil, err
		}
		return json.Marshal(askReply{Action: capability.ActionDenied, Error: err.Error()})
	}

	a := capability.AskerFrom(ctx)
	if a == nil {
		return c.answered(resource, capability.Answer{Action: capability.ActionDecline}, "declined: no approver can ask the person", "")
	}
	actx, cancel := context.WithTimeout(ctx, AskTimeout)
	defer cancel()
	ans, err := a.Ask(actx, q)
	switch {
	case err != nil:
		return c.answered(resource, capability.Answer{Action: capability.ActionCancel}, "cancelled: asking through "+a.Name()+" failed: "+err.Error(), "hostfns: ask: "+err.Error())
	case ans.Action == capability.ActionAccept:
		if err := checkAnswer(q.Schema, ans.Content); err != nil {
			return c.answered(resource, capability.Answer{Action: capability.ActionCancel}, "refused the answer from "+a.Name()+": "+err.Error(), "hostfns: ask: "+err.Error())
		}
		return c.answered(resource, ans, "accepted through "+a.Name()+": "+describeKeys(ans.Content)+" (values redacted)", "")
	case ans.Action == capability.ActionDecline, ans.Action == capability.ActionCancel:
		return c.answered(resource, capability.Answer{Action: ans.Action}, ans.Action+"d through "+a.Name(), "")
	}
	return c.answered(resource, capability.Answer{Action: capability.ActionCancel}, fmt.Sprintf("cancelled: %s gave an unknown action %q", a.Name(), ans.Action), "hostfns: ask: unknown answer action")
}

// answered records the outcome of a question and encodes the reply.
func (c *Call) answered(resource string, ans capability.Answer, reason, errText string) ([]byte, error) {
	if err := c.record(c.exercise(capability.AskPerson, resource, true, reason)); err != nil {
		return nil, err
	}
	return json.Marshal(askReply{Action: ans.Action, Content: ans.Content, Error: errText})
}

// askResource is how the audit names a question: its message, cut short.
func askResource(msg string) string {
	const max = 200
	if len(msg) <= max {
		return "question: " + msg
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return "question: " + msg[:cut] + "…"
}

func describeKeys(m map[string]any) string {
	if len(m) == 0 {
		return "no fields"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "fields " + strings.Join(keys, ", ")
}

// questionSchema is the subset of JSON Schema MCP elicitation allows: an
// object whose properties are strings, numbers, integers or booleans.
type questionSchema struct {
	Type       string                  `json:"type"`
	Properties map[string]*fieldSchema `json:"properties"`
	Required   []string                `json:"required,omitempty"`
	Title      string                  `json:"title,omitempty"`
}

// fieldSchema is one primitive property.
type fieldSchema struct {
	Type        string   `json:"type"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	Format      string   `json:"format,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumNames   []string `json:"enumNames,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	Default     any      `json:"default,omitempty"`
}

// ParseQuestion reads and checks one ask request. Every error wraps
// ErrInvalidRequest and says which rule the request broke.
func ParseQuestion(b []byte) (capability.Question, error) {
	bad := func(format string, args ...any) (capability.Question, error) {
		return capability.Question{}, fmt.Errorf("%w: ask: "+format, append([]any{ErrInvalidRequest}, args...)...)
	}
	if len(b) > MaxAskBytes {
		return bad("the request is %d bytes, more than %d", len(b), MaxAskBytes)
	}
	var r struct {
		Message *string         `json:"message"`
		Schema  json.RawMessage `json:"schema"`
	}
	if err := strictDecode(b, &r); err != nil {
		return bad("%v: send {\"message\": \"...\", \"schema\": {\"type\": \"object\", \"properties\": {...}}}", err)
	}
	switch {
	case r.Message == nil || strings.TrimSpace(*r.Message) == "":
		return bad("\"message\" is missing or empty")
	case len(*r.Message) > MaxQuestionMessage:
		return bad("\"message\" is %d bytes, more than %d", len(*r.Message), MaxQuestionMessage)
	case !utf8.ValidString(*r.Message):
		return bad("\"message\" is not valid UTF-8")
	case len(r.Schema) == 0 || string(r.Schema) == "null":
		return bad("\"schema\" is missing: an object schema of primitive properties (use {\"type\": \"object\", \"properties\": {}} for a yes/no question)")
	}
	var s questionSchema
	if err := strictDecode(r.Schema, &s); err != nil {
		return bad("schema: %v (allowed: type, properties, required, title)", err)
	}
	if s.Type != "object" {
		return bad("schema: \"type\" must be \"object\"")
	}
	if s.Properties == nil {
		s.Properties = map[string]*fieldSchema{}
	}
	if len(s.Properties) > MaxQuestionFields {
		return bad("schema: %d properties, more than %d", len(s.Properties), MaxQuestionFields)
	}
	for name, f := range s.Properties {
		if err := checkField(name, f); err != nil {
			return bad("schema: property %q: %v", name, err)
		}
	}
	for _, name := range s.Required {
		if _, ok := s.Properties[name]; !ok {
			return bad("schema: required names %q, which is not a property", name)
		}
	}
	if len(s.Required) != len(slicesCompactSorted(s.Required)) {
		return bad("schema: required lists a property twice")
	}
	schema, err := json.Marshal(s)
	if err != nil {
		return bad("schema: %v", err)
	}
	return capability.Question{Message: *r.Message, Schema: schema}, nil
}

func slicesCompactSorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// strictDecode decodes exactly one JSON value with no unknown field.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("extra data after the JSON value")
	}
	return nil
}

// checkField checks one property against the elicitation subset.
func checkField(name string, f *fieldSchema) error {
	if name == "" || len(name) > 64 {
		return errors.New("a property name is 1 to 64 bytes")
	}
	if f == nil {
		return errors.New("the property is null")
	}
	str := f.MinLength != nil || f.MaxLength != nil || f.Format != "" || f.Enum != nil || f.EnumNames != nil
	num := f.Minimum != nil || f.Maximum != nil
	switch f.Type {
	case "string":
		if num {
			return errors.New("minimum and maximum are for numbers")
		}
		if f.MinLength != nil && *f.MinLength < 0 || f.MaxLength != nil && *f.MaxLength < 0 ||
			f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
			return errors.New("minLength and maxLength must be 0 or more, minLength at most maxLength")
		}
		switch f.Format {
		case "", "email", "uri", "date", "date-time":
		default:
			return fmt.Errorf("format %q is not one of email, uri, date, date-time", f.Format)
		}
		if f.EnumNames != nil && len(f.EnumNames) != len(f.Enum) {
			return errors.New("enumNames must name each enum value")
		}
		if f.Enum != nil && len(f.Enum) == 0 {
			return errors.New("enum is empty")
		}
		if f.Default != nil {
			if _, ok := f.Default.(string); !ok {
				return errors.New("default must be a string")
			}
		}
	case "number", "integer":
		if str {
			return errors.New("minLength, maxLength, format and enum are for strings")
		}
		if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
			return errors.New("minimum is above maximum")
		}
		if f.Default != nil {
			if _, ok := f.Default.(float64); !ok {
				return errors.New("default must be a number")
			}
		}
	case "boolean":
		if str || num {
			return errors.New("a boolean takes only title, description and default")
		}
		if f.Default != nil {
			if _, ok := f.Default.(bool); !ok {
				return errors.New("default must be true or false")
			}
		}
	default:
		return fmt.Errorf("type %q is not one of string, number, integer, boolean (elicitation allows only primitive properties)", f.Type)
	}
	return nil
}

// checkAnswer checks accepted content against a schema ParseQuestion
// produced: no unknown field, every required one, each of its type and
// within its bounds.
func checkAnswer(schema json.RawMessage, content map[string]any) error {
	var s questionSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Errorf("the question's schema: %w", err)
	}
	for _, name := range s.Required {
		if _, ok := content[name]; !ok {
			return fmt.Errorf("the answer lacks the required field %q", name)
		}
	}
	for name, v := range content {
		f, ok := s.Properties[name]
		if !ok {
			return fmt.Errorf("the answer has a field %q the question did not ask for", name)
		}
		if err := checkValue(f, v); err != nil {
			return fmt.Errorf("the answer's field %q: %w", name, err)
		}
	}
	return nil
}

func checkValue(f *fieldSchema, v any) error {
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return errors.New("not a string")
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength != nil && n < *f.MinLength || f.MaxLength != nil && n > *f.MaxLength {
			return errors.New("length out of bounds")
		}
		if f.Enum != nil && !slices.Contains(f.Enum, s) {
			return errors.New("not one of the choices")
		}
		return checkFormat(f.Format, s)
	case "number", "integer":
		x, ok := number(v)
		if !ok {
			return errors.New("not a number")
		}
		if f.Type == "integer" && x != math.Trunc(x) {
			return errors.New("not an integer")
		}
		if f.Minimum != nil && x < *f.Minimum || f.Maximum != nil && x > *f.Maximum {
			return errors.New("out of bounds")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return errors.New("not true or false")
		}
	}
	return nil
}

// number reads a JSON number as decoded by encoding/json or built in Go.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func checkFormat(format, s string) error {
	var err error
	switch format {
	case "email":
		var a *mail.Address
		if a, err = mail.ParseAddress(s); err == nil && a.Address != s {
			err = errors.New("not a bare address")
		}
	case "uri":
		var u *url.URL
		if u, err = url.Parse(s); err == nil && !u.IsAbs() {
			err = errors.New("not an absolute URI")
		}
	case "date":
		_, err = time.Parse(time.DateOnly, s)
	case "date-time":
		_, err = time.Parse(time.RFC3339, s)
	}
	if err != nil {
		return fmt.Errorf("not a valid %s", format)
	}
	return nil
}
