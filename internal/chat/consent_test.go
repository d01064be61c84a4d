package chat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestAttachIsConsent: in a chat where the person attached a pack, the
// calls that only read it (open_docs, read_file of its files,
// enable_tools) are approved by that act, with nobody to ask, also after
// the chat is resumed, and the audit row says so. Its own tools still ask.
func TestAttachIsConsent(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	ctx := context.Background()
	s := h.open(Options{Attach: []string{"notes"}})
	reads := []struct{ tool, args string }{
		{ToolOpenDocs, `{"pack_id":"notes"}`},
		{ToolReadFile, `{"pack_id":"notes","path":"references/REFERENCE.md"}`},
		{ToolEnableTools, `{"pack_id":"notes"}`},
	}
	for _, c := range reads {
		r, err := s.Call(ctx, c.tool, json.RawMessage(c.args), nil)
		if err != nil || r.IsError || !r.Decision.ByAttach || r.Decision.Approver != capability.AttachApprover {
			t.Errorf("%s of an attached pack, nobody to ask: %+v %v, want approved by attach", c.tool, r, err)
		}
	}
	rows := h.invocations()
	if len(rows) != len(reads) {
		t.Fatalf("got %d audited calls, want %d", len(rows), len(reads))
	}
	for _, row := range rows {
		if !strings.Contains(string(row.Body), `"approver":"attach","decision":"run_once","by_attach":true`) {
			t.Errorf("audit row of %s does not say approved by attach: %s", row.Tool, row.Body)
		}
	}
	// The pack's own tool exercises its grant: it still asks.
	who := &person{decide: func(capability.Pending) capability.Verdict { return capability.RunOnce }}
	if r, err := s.Call(ctx, PackToolName("notes", "echo"), json.RawMessage(`{"text":"hi"}`), who); err != nil || r.IsError || r.Decision.ByAttach || len(who.asked()) != 1 {
		t.Errorf("notes__echo: %+v %v, asked %d times; want asked once", r, err, len(who.asked()))
	}
	if r, _ := s.Call(ctx, PackToolName("notes", "echo"), json.RawMessage(`{"text":"hi"}`), nil); !r.IsError || r.Decision.Approved {
		t.Errorf("notes__echo with nobody to ask: %+v, want denied", r.Decision)
	}
	resumed := h.open(Options{ID: s.ID()})
	if r, err := resumed.Call(ctx, ToolOpenDocs, json.RawMessage(`{"pack_id":"notes"}`), nil); err != nil || r.IsError || !r.Decision.ByAttach {
		t.Errorf("open_docs in the resumed chat: %+v %v, want approved by attach", r, err)
	}
}

// TestAttachIsConsentOnlyThere: a pack the person did not attach to the
// call's chat is asked about as before: attached by the policy's mandate,
// by an MCP server's configuration, or in another chat.
func TestAttachIsConsentOnlyThere(t *testing.T) {
	ctx := context.Background()
	openDocs := json.RawMessage(`{"pack_id":"notes"}`)
	denied := func(t *testing.T, s *Session) {
		t.Helper()
		r, err := s.Call(ctx, ToolOpenDocs, openDocs, nil)
		if err != nil || !r.IsError || r.ErrorKind != ErrKindDenied || r.Decision.Approved {
			t.Errorf("open_docs with nobody to ask: %+v %v, want denied", r, err)
		}
		who := &person{decide: func(capability.Pending) capability.Verdict { return capability.RunOnce }}
		if r, err := s.Call(ctx, ToolOpenDocs, openDocs, who); err != nil || r.IsError || r.Decision.ByAttach || len(who.asked()) != 1 {
			t.Errorf("open_docs: %+v %v, asked %d times; want asked once", r, err, len(who.asked()))
		}
	}
	t.Run("mandated by the policy", func(t *testing.T) {
		h := newHarness(t, install{notesPack: nil})
		h.deps.Pipeline = h.pipeline(policy(t, "[packs]\nmandated = [\"notes\"]\n"))
		denied(t, h.open(Options{}))
	})
	t.Run("attached by an MCP server", func(t *testing.T) {
		h := newHarness(t, install{notesPack: nil})
		s := h.open(Options{Via: ViaMCP, Attach: []string{"notes"}})
		denied(t, s)
		if again := h.open(Options{ID: s.ID()}); again.Via() != ViaMCP {
			t.Errorf("a resumed MCP chat is via %q, want %q", again.Via(), ViaMCP)
		}
	})
	t.Run("attached in another chat", func(t *testing.T) {
		h := newHarness(t, install{notesPack: nil})
		a := h.open(Options{Attach: []string{"notes"}})
		b := h.open(Options{Attach: []string{"notes"}})
		if ok, err := (consent{a}).Attached(ctx, b.ID(), "notes"); ok || err != nil {
			t.Errorf("chat %s's attach consented in chat %s: %v %v", a.ID(), b.ID(), ok, err)
		}
		if ok, err := (consent{a}).Attached(ctx, a.ID(), "notes"); !ok || err != nil {
			t.Errorf("chat %s's own attach: %v %v, want consent", a.ID(), ok, err)
		}
	})
}
