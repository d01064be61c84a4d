package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
)

// TestDisabledPack: a pack the person disabled is not attached (at open,
// by Attach, when a chat that had it is resumed), and a session that
// attached it before runs none of its tools: the call is denied and
// audited. Enabled again, it attaches and runs.
func TestDisabledPack(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	for _, name := range []string{ToolOpenDocs, ToolEnableTools} {
		if r, err := s.Call(ctx, name, json.RawMessage(`{"pack_id":"notes"}`), &person{}); err != nil || r.IsError {
			t.Fatalf("%s before disable: %+v %v", name, r, err)
		}
	}
	if _, err := h.db.SetDisabled(ctx, "notes", true); err != nil {
		t.Fatal(err)
	}

	// Denied: the live session's tool call, enable_tools, a new attach,
	// a new chat, the resumed chat.
	r, err := s.Call(ctx, PackToolName("notes", "echo"), json.RawMessage(`{"text":"hi"}`), &person{})
	if err != nil || !r.IsError || r.ErrorKind != ErrKindDenied {
		t.Errorf("tool call of a disabled pack: %+v %v", r, err)
	}
	r, err = s.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{})
	if err != nil || !r.IsError || r.ErrorKind != ErrKindDenied {
		t.Errorf("enable_tools of a disabled pack: %+v %v", r, err)
	}
	if _, err := Open(ctx, h.deps, Options{Attach: []string{"notes"}}); !errors.Is(err, capability.ErrDenied) || !errors.Is(err, store.ErrPackDisabled) {
		t.Errorf("open with a disabled pack attached: %v", err)
	}
	fresh := h.open(Options{})
	if err := fresh.Attach(ctx, "notes"); !errors.Is(err, store.ErrPackDisabled) {
		t.Errorf("attach a disabled pack: %v", err)
	}
	if len(fresh.Packs()) != 0 || strings.Contains(fresh.SystemPrompt(), "pack_id: notes") {
		t.Errorf("a disabled pack is listed: %+v\n%s", fresh.Packs(), fresh.SystemPrompt())
	}
	resumed := h.open(Options{ID: s.ID()})
	if len(resumed.Packs()) != 0 {
		t.Errorf("the resumed chat kept the disabled pack: %+v", resumed.Packs())
	}
	denied := 0
	for _, e := range h.invocations() {
		var body struct{ Tool, Status string }
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Status == string(capability.StatusDenied) {
			denied++
		}
	}
	if denied != 2 {
		t.Errorf("%d denied calls audited, want 2", denied)
	}

	// Enabled again: it attaches and runs, with its grants.
	if _, err := h.db.SetDisabled(ctx, "notes", false); err != nil {
		t.Fatal(err)
	}
	again := h.open(Options{Attach: []string{"notes"}})
	if r, err := again.Call(ctx, ToolEnableTools, json.RawMessage(`{"pack_id":"notes"}`), &person{}); err != nil || r.IsError {
		t.Fatalf("enable_tools after enable: %+v %v", r, err)
	}
	if r, err := again.Call(ctx, PackToolName("notes", "echo"), json.RawMessage(`{"text":"hi"}`), &person{}); err != nil || r.IsError {
		t.Errorf("tool call after enable: %+v %v", r, err)
	}
}
