package chat

import (
	"context"
	"testing"

	"github.com/packs-run/packs/internal/llm"
)

// TestMessageBytesRoundTrip: whatever bytes a message holds (a tool's
// output may hold a NUL or bytes that are not UTF-8) come back from the
// store as they went in, on both backends.
func TestMessageBytesRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, newHarness func(testing.TB, install) *harness) {
		h := newHarness(t, install{})
		s := h.open(Options{})
		ctx := context.Background()
		msgs := []llm.Message{
			{Role: llm.RoleUser, Content: "plain"},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "nul \x00 inside, not UTF-8 \xff\xfe, and é", IsError: true},
		}
		if err := s.appendMessages(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
		got, err := s.db.loadMessages(ctx, s.ID())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[1].Content != msgs[1].Content || got[1].ToolCallID != msgs[1].ToolCallID || !got[1].IsError {
			t.Fatalf("got %#v, want %#v", got, msgs)
		}
	})
}
