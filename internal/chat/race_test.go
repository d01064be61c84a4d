package chat

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
)

// TestConcurrentBaseTools: an MCP client may send tool calls at once;
// enable_tools replacing a pack while open_docs, read_file and a pack tool
// read it must not race (run with -race).
func TestConcurrentBaseTools(t *testing.T) {
	h := newHarness(t, install{notesPack: nil})
	s := h.open(Options{Attach: []string{"notes"}})
	ctx := context.Background()
	calls := []struct{ name, args string }{
		{ToolEnableTools, `{"pack_id":"notes"}`},
		{ToolOpenDocs, `{"pack_id":"notes"}`},
		{ToolReadFile, `{"pack_id":"notes","path":"SKILL.md"}`},
		{"notes__echo", `{"text":"x"}`},
	}
	var wg sync.WaitGroup
	for i := range 4 {
		for _, c := range calls {
			wg.Go(func() {
				if _, err := s.Call(ctx, c.name, json.RawMessage(c.args), &yes{}); err != nil {
					t.Errorf("call %d %s: %v", i, c.name, err)
				}
			})
		}
	}
	wg.Wait()
	if st := s.Packs(); len(st) != 1 || !st[0].Enabled || !st[0].Opened {
		t.Fatalf("pack state after the calls: %+v", st)
	}
}
