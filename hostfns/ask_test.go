package hostfns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
)

// person is an Asker that answers with a fixed reply and keeps the
// questions it saw.
type person struct {
	answer capability.Answer
	err    error
	mu     sync.Mutex
	seen   []capability.Question
}

func (p *person) Name() string { return "test-person" }

func (p *person) Ask(_ context.Context, q capability.Question) (capability.Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, q)
	return p.answer, p.err
}

const nameQuestion = `{"message": "Which name?", "schema": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}, "n": {"type": "integer", "minimum": 1}}, "required": ["name"]}}`

// TestAsk: a question reaches the person only under an ask_person grant;
// every question and its outcome is recorded; an answer that does not
// follow the schema never reaches the guest; with no one to ask, the
// answer is decline.
func TestAsk(t *testing.T) {
	granted := capability.Request{AskPerson: true}
	tests := []struct {
		name      string
		req       capability.Request
		asker     *person // nil: no Asker in the context
		want      string  // the guest's answer
		wantAsked int
		wantRec   []bool // the recorded exercises' Allowed, in order
	}{
		{"granted, accepted", granted, &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "Ada", "n": 2.0}}},
			`{"action":"accept","content":{"n":2,"name":"Ada"}}`, 1, []bool{true, true}},
		{"granted, declined", granted, &person{answer: capability.Answer{Action: "decline"}}, `{"action":"decline"}`, 1, []bool{true, true}},
		{"granted, cancelled", granted, &person{answer: capability.Answer{Action: "cancel"}}, `{"action":"cancel"}`, 1, []bool{true, true}},
		{"not requested: denied, nobody asked", capability.Request{}, &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "Ada"}}},
			`{"action":"denied","error":"capability: ask_person \"question: Which name?\" denied by request: the pack did not ask for ask_person"}`, 0, []bool{false}},
		{"no approver: declined", granted, nil, `{"action":"decline"}`, 0, []bool{true, true}},
		{"answer lacks a required field", granted, &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"n": 1.0}}},
			`{"action":"cancel","error":"hostfns: ask: the answer lacks the required field \"name\""}`, 1, []bool{true, true}},
		{"answer adds a field", granted, &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "Ada", "admin": true}}},
			`{"action":"cancel","error":"hostfns: ask: the answer has a field \"admin\" the question did not ask for"}`, 1, []bool{true, true}},
		{"answer of the wrong type", granted, &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "Ada", "n": 1.5}}},
			`{"action":"cancel","error":"hostfns: ask: the answer's field \"n\": not an integer"}`, 1, []bool{true, true}},
		{"answer too long", granted, &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "Adalovelace"}}},
			`{"action":"cancel","error":"hostfns: ask: the answer's field \"name\": length out of bounds"}`, 1, []bool{true, true}},
		{"asker fails", granted, &person{err: errors.New("client went away")},
			`{"action":"cancel","error":"hostfns: ask: client went away"}`, 1, []bool{true, true}},
		{"unknown action", granted, &person{answer: capability.Answer{Action: "yes"}},
			`{"action":"cancel","error":"hostfns: ask: unknown answer action"}`, 1, []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := newCall(t, tt.req)
			ctx := context.Background()
			if tt.asker != nil {
				ctx = capability.WithAsker(ctx, tt.asker)
			}
			r, err := runProbeIn(ctx, t, c, "base", op{"op": "ask", "argv": []string{nameQuestion}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.Entries, "|"); got != tt.want {
				t.Fatalf("the guest got %s, want %s", got, tt.want)
			}
			if tt.asker != nil && len(tt.asker.seen) != tt.wantAsked {
				t.Fatalf("the person was asked %d times, want %d", len(tt.asker.seen), tt.wantAsked)
			}
			var got []bool
			for _, e := range rec.all() {
				if e.Capability != capability.AskPerson || e.Resource != "question: Which name?" {
					t.Fatalf("recorded %+v, want an ask_person exercise on the question", e)
				}
				if strings.Contains(e.Reason, "Ada") {
					t.Fatalf("the audit holds an answer's value: %q", e.Reason)
				}
				got = append(got, e.Allowed)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantRec) {
				t.Fatalf("recorded %v, want %v:\n%s", got, tt.wantRec, dump(rec.all()))
			}
		})
	}
}

// TestAskUnapproved: a question from code that runs before its call is
// approved (an initializer) is denied and never reaches the person.
func TestAskUnapproved(t *testing.T) {
	c, rec := newCall(t, capability.Request{AskPerson: true})
	c.Approval = capability.Approval{}
	p := &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "x"}}}
	r, err := runProbeIn(capability.WithAsker(context.Background(), p), t, c, "base", op{"op": "ask", "argv": []string{nameQuestion}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.seen) != 0 || len(r.Entries) != 1 || !strings.Contains(r.Entries[0], `"action":"denied"`) {
		t.Fatalf("unapproved call: asked %d, guest got %v", len(p.seen), r.Entries)
	}
	if d := rec.denials(); len(d) != 1 || d[0].Layer != capability.LayerGate {
		t.Fatalf("denials %v, want one by the gate", dump(d))
	}
}

// TestAskBounds: past MaxQuestions a call's questions are denied and
// recorded; secrets are masked out of the message the person sees.
func TestAskBounds(t *testing.T) {
	c, rec := newCall(t, capability.Request{AskPerson: true})
	p := &person{answer: capability.Answer{Action: "decline"}}
	qs := make([]string, MaxQuestions+2)
	for i := range qs {
		qs[i] = `{"message": "token s3cr3t-value?", "schema": {"type": "object"}}`
	}
	ctx := WithSecrets(capability.WithAsker(context.Background(), p), NewSecrets(map[string][]byte{"TOKEN": []byte("s3cr3t-value")}))
	r, err := runProbeIn(ctx, t, c, "base", op{"op": "ask", "argv": qs})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.seen) != MaxQuestions {
		t.Fatalf("the person was asked %d questions, want %d", len(p.seen), MaxQuestions)
	}
	if strings.Contains(p.seen[0].Message, "s3cr3t") {
		t.Fatalf("the person saw a secret: %q", p.seen[0].Message)
	}
	if last := r.Entries[len(r.Entries)-1]; !strings.Contains(last, `"action":"denied"`) {
		t.Fatalf("question %d got %s, want denied", len(qs), last)
	}
	if d := rec.denials(); len(d) != 2 {
		t.Fatalf("%d denials recorded, want 2:\n%s", len(d), dump(rec.all()))
	}
}

// TestParseQuestion: the request parser takes the elicitation subset of
// JSON Schema and refuses the rest with ErrInvalidRequest, saying why.
func TestParseQuestion(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"yes/no", `{"message": "Go on?", "schema": {"type": "object"}}`, ""},
		{"every primitive", `{"message": "m", "schema": {"type": "object", "properties": {
			"s": {"type": "string", "format": "email", "minLength": 3},
			"e": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"},
			"n": {"type": "number", "minimum": 0, "maximum": 1},
			"i": {"type": "integer"}, "b": {"type": "boolean", "default": true}}, "required": ["s"]}}`, ""},
		{"not JSON", `{message`, "invalid"},
		{"no message", `{"schema": {"type": "object"}}`, `"message" is missing`},
		{"blank message", `{"message": "  ", "schema": {"type": "object"}}`, `"message" is missing`},
		{"no schema", `{"message": "m"}`, `"schema" is missing`},
		{"unknown key", `{"message": "m", "schema": {"type": "object"}, "timeout": 9}`, "unknown field"},
		{"not an object", `{"message": "m", "schema": {"type": "string"}}`, `"type" must be "object"`},
		{"nested object", `{"message": "m", "schema": {"type": "object", "properties": {"o": {"type": "object"}}}}`, "primitive"},
		{"array", `{"message": "m", "schema": {"type": "object", "properties": {"a": {"type": "array"}}}}`, "primitive"},
		{"unknown keyword", `{"message": "m", "schema": {"type": "object", "properties": {"s": {"type": "string", "pattern": ".*"}}}}`, "unknown field"},
		{"ref", `{"message": "m", "schema": {"$ref": "#/x", "type": "object"}}`, "unknown field"},
		{"bad format", `{"message": "m", "schema": {"type": "object", "properties": {"s": {"type": "string", "format": "regex"}}}}`, "format"},
		{"required unknown", `{"message": "m", "schema": {"type": "object", "required": ["x"]}}`, "not a property"},
		{"required twice", `{"message": "m", "schema": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x", "x"]}}`, "twice"},
		{"string bounds on a number", `{"message": "m", "schema": {"type": "object", "properties": {"n": {"type": "number", "maxLength": 3}}}}`, "for strings"},
		{"enumNames mismatch", `{"message": "m", "schema": {"type": "object", "properties": {"e": {"type": "string", "enum": ["a"], "enumNames": []}}}}`, "enumNames"},
		{"default of the wrong type", `{"message": "m", "schema": {"type": "object", "properties": {"b": {"type": "boolean", "default": "yes"}}}}`, "default"},
		{"trailing data", `{"message": "m", "schema": {"type": "object"}} {}`, "extra data"},
		{"message too long", fmt.Sprintf(`{"message": %q, "schema": {"type": "object"}}`, strings.Repeat("a", MaxQuestionMessage+1)), "more than"},
		{"request too large", fmt.Sprintf(`{"message": "m", "schema": {"type": "object", "title": %q}}`, strings.Repeat("a", MaxAskBytes)), "more than"},
		{"too many fields", manyFields(MaxQuestionFields + 1), "properties, more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseQuestion([]byte(tt.in))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ParseQuestion: %v", err)
			case tt.wantErr != "" && (!errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ParseQuestion: %v, want ErrInvalidRequest saying %q", err, tt.wantErr)
			}
		})
	}
}

func manyFields(n int) string {
	props := map[string]any{}
	for i := range n {
		props[fmt.Sprintf("f%d", i)] = map[string]string{"type": "boolean"}
	}
	b, _ := json.Marshal(map[string]any{"message": "m", "schema": map[string]any{"type": "object", "properties": props}})
	return string(b)
}

// TestCheckAnswer: the formats and bounds of the schema hold for accepted
// content.
func TestCheckAnswer(t *testing.T) {
	q, err := ParseQuestion([]byte(`{"message": "m", "schema": {"type": "object", "properties": {
		"email": {"type": "string", "format": "email"}, "uri": {"type": "string", "format": "uri"},
		"date": {"type": "string", "format": "date"}, "at": {"type": "string", "format": "date-time"},
		"pick": {"type": "string", "enum": ["a", "b"]}, "x": {"type": "number", "minimum": 0, "maximum": 1},
		"ok": {"type": "boolean"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content map[string]any
		ok      bool
	}{
		{"all good", map[string]any{"email": "a@b.example", "uri": "https://x.example/", "date": "2026-11-24", "at": "2026-11-24T07:00:00Z", "pick": "b", "x": 0.5, "ok": false}, true},
		{"empty", map[string]any{}, true},
		{"bad email", map[string]any{"email": "Ada <a@b.example>"}, false},
		{"relative uri", map[string]any{"uri": "/etc/passwd"}, false},
		{"bad date", map[string]any{"date": "24/11/2026"}, false},
		{"bad date-time", map[string]any{"at": "2026-11-24"}, false},
		{"not a choice", map[string]any{"pick": "c"}, false},
		{"above maximum", map[string]any{"x": 2.0}, false},
		{"string for a bool", map[string]any{"ok": "true"}, false},
		{"null", map[string]any{"ok": nil}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkAnswer(q.Schema, tt.content); (err == nil) != tt.ok {
				t.Fatalf("checkAnswer(%v) = %v, want ok=%v", tt.content, err, tt.ok)
			}
		})
	}
}

// FuzzParseQuestion: no request makes the parser panic; what it accepts
// is within the bounds and re-parses to the same schema.
func FuzzParseQuestion(f *testing.F) {
	for _, s := range []string{nameQuestion, `{"message": "m", "schema": {"type": "object"}}`, `null`, `{"message": "m", "schema": {"type": "object", "properties": {"a": null}}}`,
		`{"message": "m", "schema": {"type": "object", "properties": {"s": {"type": "string", "minLength": 5, "maxLength": 1}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseQuestion(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
			}
			return
		}
		if q.Message == "" || len(q.Message) > MaxQuestionMessage {
			t.Fatalf("accepted message of %d bytes", len(q.Message))
		}
		req, err := json.Marshal(map[string]any{"message": q.Message, "schema": q.Schema})
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseQuestion(req)
		if err != nil || string(again.Schema) != string(q.Schema) {
			t.Fatalf("the checked schema %s does not re-parse: %v", q.Schema, err)
		}
		_ = checkAnswer(q.Schema, map[string]any{"a": "x"})
	})
}

// TestAskMasksSchema: a secret in the question's schema (a title, a
// description, a choice, a property's name) never reaches the person.
func TestAskMasksSchema(t *testing.T) {
	c, _ := newCall(t, capability.Request{AskPerson: true})
	approve(t, c)
	p := &person{answer: capability.Answer{Action: "decline"}}
	ctx := WithSecrets(capability.WithAsker(context.Background(), p), NewSecrets(map[string][]byte{"TOKEN": []byte("s3cr3t value")}))
	q := `{"message": "Pick", "schema": {"type": "object", "title": "s3cr3t value", "properties": {"s3cr3t value": {"type": "string", "description": "s3cr3t%20value", "enum": ["s3cr3t+value"]}}}}`
	if _, err := c.ask(ctx, []byte(q)); err != nil {
		t.Fatal(err)
	}
	if len(p.seen) != 1 {
		t.Fatalf("the person was asked %d questions, want 1", len(p.seen))
	}
	if got := string(p.seen[0].Schema); strings.Contains(got, "s3cr3t") {
		t.Errorf("the person saw a secret in the schema: %s", got)
	}
}
