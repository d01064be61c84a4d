package chat

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

var protocols = []string{llm.ProviderOpenAI, llm.ProviderAnthropic}

// TestProgressiveDisclosure scripts spec 000's five stages against a fake
// model speaking each real wire protocol, and checks what every request to
// the model contained.
func TestProgressiveDisclosure(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			h := newHarness(t, install{notesPack: nil})
			srv := llmtest.NewServer(
				calls(call(ToolOpenDocs, `{"pack_id":"notes"}`)),
				calls(call(ToolReadFile, `{"pack_id":"notes","path":"references/REFERENCE.md"}`)),
				calls(call(ToolEnableTools, `{"pack_id":"notes"}`)),
				calls(call("notes__echo", `{"text":"hi"}`)),
				llmtest.Turn{Text: "Echoed: hi."},
			)
			defer srv.Close()
			s := h.open(Options{Attach: []string{"notes"}})
			who := &person{}
			reply, err := s.Send(context.Background(), provider(t, srv, protocol, time.Minute), "please echo hi", TurnOptions{Approver: who})
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 5 {
				t.Fatalf("got %d model requests, want 5", len(reqs))
			}
			base := []string{ToolOpenDocs, ToolReadFile, ToolEnableTools, ToolExec}

			// Stage 1: metadata only.
			r := reqs[0]
			for _, want := range []string{"Capability Packs (attached; metadata only):", "- pack_id: notes\n  name: notes\n",
				"description: Keep short notes in the chat workspace.", "has_tools_json: true", "first call open_docs(pack_id)"} {
				if !strings.Contains(r.System, want) {
					t.Errorf("request 1: system prompt lacks %q:\n%s", want, r.System)
				}
			}
			for _, leak := range []string{"NOTES-BODY-3c9e", "NOTES-REFERENCE-51d0", h.home.Dir(), "SKILL.md"} {
				if strings.Contains(r.System, leak) {
					t.Errorf("request 1: system prompt shows %q", leak)
				}
			}
			if got := r.ToolNames(); !reflect.DeepEqual(got, base) {
				t.Errorf("request 1: got tools %v, want %v", got, base)
			}
			if len(r.Messages) != 1 || r.Messages[0].Content != "please echo hi" {
				t.Errorf("request 1: got messages %+v", r.Messages)
			}

			// Stage 2: open_docs put the entry doc in the conversation.
			r = reqs[1]
			open := r.Messages[1].ToolCalls[0]
			doc := toolResult(t, r.Messages, open.ID).Content
			if !strings.Contains(doc, "NOTES-BODY-3c9e") || !strings.Contains(doc, `"other_docs":["references/REFERENCE.md"]`) {
				t.Errorf("request 2: open_docs result %s lacks the body or the doc list", doc)
			}
			if strings.Contains(doc, "description: Keep") {
				t.Errorf("request 2: open_docs result repeats the frontmatter: %s", doc)
			}
			if !strings.Contains(r.System, "Docs already opened in this conversation: notes") {
				t.Errorf("request 2: system prompt does not say notes is open:\n%s", r.System)
			}

			// Stage 3: read_file.
			r = reqs[2]
			read := toolResult(t, r.Messages, r.Messages[len(r.Messages)-2].ToolCalls[0].ID)
			var page FilePage
			if err := json.Unmarshal([]byte(read.Content), &page); err != nil || !strings.Contains(page.Content, "NOTES-REFERENCE-51d0") || page.MIME != "text/markdown" || page.Truncated {
				t.Errorf("request 3: read_file result %s (%v)", read.Content, err)
			}
			if slices.ContainsFunc(r.ToolNames(), func(n string) bool { return strings.HasPrefix(n, "notes__") }) {
				t.Errorf("request 3: pack tools offered before enable_tools: %v", r.ToolNames())
			}

			// Stage 4: enable_tools; the NEXT request offers the tools.
			r = reqs[3]
			enabled := toolResult(t, r.Messages, r.Messages[len(r.Messages)-2].ToolCalls[0].ID).Content
			if !strings.Contains(enabled, `"enabled":true`) || !strings.Contains(enabled, `"name":"notes__echo"`) {
				t.Errorf("request 4: enable_tools result %s", enabled)
			}
			want := append(slices.Clone(base), "notes__echo", "notes__note", "notes__spin", "notes__fail")
			if got := r.ToolNames(); !reflect.DeepEqual(got, want) {
				t.Errorf("request 4: got tools %v, want %v", got, want)
			}
			if !r.HasTool("notes__echo") || !strings.Contains(string(r.Tools[4].InputSchema), `"required":["text"]`) {
				t.Errorf("request 4: notes__echo offered without its schema: %s", r.Tools[4].InputSchema)
			}

			// Stage 5: the pack tool ran after approval.
			r = reqs[4]
			echo := toolResult(t, r.Messages, r.Messages[len(r.Messages)-2].ToolCalls[0].ID)
			if echo.IsError || echo.Content != `{"result":{"echo":{"text":"hi"}}}` {
				t.Errorf("request 5: echo result %+v", echo)
			}

			if reply.Text != "Echoed: hi." || len(reply.Calls) != 4 || reply.Steps != 5 {
				t.Errorf("got reply %q with %d calls in %d steps", reply.Text, len(reply.Calls), reply.Steps)
			}
			asked := who.asked()
			var classes []string
			for _, p := range asked {
				classes = append(classes, p.Class())
				if p.Chat != s.ID() || p.Invocation == "" {
					t.Errorf("pending %+v lacks chat or invocation", p)
				}
			}
			// The person attached notes: reading it and listing its tools
			// was approved by that act; its tool still asks.
			if want := []string{"notes__echo"}; !reflect.DeepEqual(classes, want) {
				t.Errorf("the person was asked about %v, want %v", classes, want)
			}
			rows := h.invocations()
			if len(rows) != 4 {
				t.Fatalf("got %d audited invocations, want 4", len(rows))
			}
			for i, row := range rows {
				approver := `"approver":"attach","decision":"run_once","by_attach":true`
				if i == 3 {
					approver = `"approver":"test-person"`
				}
				if row.Invocation != reply.Calls[i].Invocation || row.Pack != "notes" || !strings.Contains(string(row.Body), approver) {
					t.Errorf("audit row %d: %+v %s, want %s", i, row, row.Body, approver)
				}
			}
			if rows[3].Tool != "echo" || !strings.Contains(string(rows[3].Body), `"status":"ok"`) {
				t.Errorf("audit row of the pack tool: %+v %s", rows[3], rows[3].Body)
			}
		})
	}
}

// TestConversationGoesOn: a denial, a tool that times out and a tool that
// fails each come back to the model as an error result, the turn finishes,
// and the next message works.
func TestConversationGoesOn(t *testing.T) {
	cases := []struct {
		name     string
		tool     string
		deny     bool
		wantKind string
		wantText string // in the error message
	}{
		{"denied", "notes__echo", true, ErrKindDenied, "denied by test-person"},
		{"timeout", "notes__spin", false, ErrKindTimeout, "time limit"},
		{"tool error", "notes__fail", false, ErrKindToolFailed, "exit status 3"},
	}
	for _, protocol := range protocols {
		for _, c := range cases {
			t.Run(protocol+"/"+c.name, func(t *testing.T) {
				h := newHarness(t, install{notesPack: nil})
				srv := llmtest.NewServer(
					calls(call(ToolEnableTools, `{"pack_id":"notes"}`)),
					calls(call(c.tool, `{"text":"x"}`)),
					llmtest.Turn{Text: "That did not work."},
					llmtest.Turn{Text: "Still here."},
				)
				defer srv.Close()
				s := h.open(Options{Attach: []string{"notes"}})
				who := &person{decide: func(p capability.Pending) capability.Verdict {
					if c.deny && p.Class() == c.tool {
						return capability.Deny
					}
					return capability.RunOnce
				}}
				p := provider(t, srv, protocol, time.Minute)
				start := time.Now()
				reply, err := s.Send(context.Background(), p, "try it", TurnOptions{Approver: who})
				if err != nil {
					t.Fatal(err)
				}
				if c.name == "timeout" && time.Since(start) > 10*time.Second {
					t.Errorf("the timed-out call took %v, want about its 1s limit", time.Since(start))
				}
				last := reply.Calls[len(reply.Calls)-1]
				if !last.IsError || last.ErrorKind != c.wantKind {
					t.Fatalf("got %+v, want an error of kind %s", last, c.wantKind)
				}
				e := decodeError(t, last.Content)
				if !strings.Contains(e["message"].(string), c.wantText) {
					t.Errorf("got message %q, want it to say %q", e["message"], c.wantText)
				}
				if c.name == "tool error" && (e["exit_code"] != float64(3) || !strings.Contains(e["stderr"].(string), "the note is empty")) {
					t.Errorf("tool error lacks exit code or stderr: %v", e)
				}
				third := srv.Requests()[2]
				got := toolResult(t, third.Messages, third.Messages[len(third.Messages)-2].ToolCalls[0].ID)
				if !strings.Contains(got.Content, `"kind":"`+c.wantKind+`"`) {
					t.Errorf("the model was sent %+v", got)
				}
				if protocol == llm.ProviderAnthropic && !got.IsError {
					t.Error("anthropic: the tool result is not marked is_error")
				}
				if reply.Text != "That did not work." {
					t.Errorf("got reply %q", reply.Text)
				}
				reply, err = s.Send(context.Background(), p, "and now?", TurnOptions{Approver: who})
				if err != nil || reply.Text != "Still here." {
					t.Fatalf("the next turn: %q, %v", reply.Text, err)
				}
				if n := len(srv.Requests()[3].Messages); n != 7 {
					t.Errorf("the next request carries %d messages, want the whole conversation of 7", n)
				}
				status := map[string]string{ErrKindDenied: "denied", ErrKindTimeout: "limit", ErrKindToolFailed: "tool_error"}[c.wantKind]
				rows := h.invocations()
				if body := string(rows[len(rows)-1].Body); !strings.Contains(body, `"status":"`+status+`"`) {
					t.Errorf("audit row %s, want status %s", body, status)
				}
			})
		}
	}
}

// TestModelFailureKeepsTheConversation: a model request that times out
// fails the turn, and the chat goes on with the message kept.
func TestModelFailureKeepsTheConversation(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	srv := llmtest.NewServer(llmtest.Turn{Text: "late", Delay: time.Minute}, llmtest.Turn{Text: "back"})
	defer srv.Close()
	s := h.open(Options{Attach: []string{"notes"}})
	_, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, 200*time.Millisecond), "first", TurnOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	reply, err := s.Send(context.Background(), provider(t, srv, llm.ProviderOpenAI, time.Minute), "second", TurnOptions{})
	if err != nil || reply.Text != "back" {
		t.Fatalf("got %q, %v", reply.Text, err)
	}
	msgs := srv.Requests()[1].Messages
	if len(msgs) != 2 || msgs[0].Content != "first" || msgs[1].Content != "second" {
		t.Errorf("got %+v, want both messages", msgs)
	}
}
