package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/llm"
)

// TestFlatModeListsPackToolsAtOnce: with Tools set (packs mcp --tools), a
// pack's tools are listed from the first tools/list under their own names,
// and a call goes through the same gate and audit as in progressive mode.
func TestFlatModeListsPackToolsAtOnce(t *testing.T) {
	e := newEnv(t, "[approval]\nauto_approve = [\"echo-pack__echo\"]\n")
	e.srv.cfg.Tools = []string{"echo-pack"}
	cs := e.connect(t, "flat-client", nil)
	if got, want := toolNames(t, cs), []string{"echo", "enable_tools", "open_docs", "read_file"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	text, isErr := callText(t, cs, "echo", map[string]any{"message": "flat"})
	if isErr || !strings.Contains(text, `"flat"`) {
		t.Fatalf("echo = %q (error %v)", text, isErr)
	}
	rows := e.auditRows(t)
	if len(rows) != 2 {
		t.Fatalf("audit rows = %v, want enable_tools (at start) and echo", rows)
	}
	if rows[0]["tool"] != "enable_tools" || rows[0]["pack"] != "echo-pack" || rows[0]["approver"] != flatApproverName || rows[0]["status"] != "ok" {
		t.Errorf("first row %v, want enable_tools of echo-pack approved by %s", rows[0], flatApproverName)
	}
	if rows[1]["tool"] != "echo" || rows[1]["pack"] != "echo-pack" || rows[1]["client"] != "mcp:flat-client" || !strings.HasPrefix(rows[1]["approver"].(string), "policy") {
		t.Errorf("second row %v, want echo-pack's echo by mcp:flat-client, approved by the policy", rows[1])
	}
}

func TestFlatModeHonoursThePolicy(t *testing.T) {
	e := newEnv(t, "[approval]\nnever_approve = [\"enable_tools\"]\n")
	e.srv.cfg.Tools = []string{"echo-pack"}
	cs := e.connect(t, "flat-client", nil)
	if got := toolNames(t, cs); slices.Contains(got, "echo") || slices.Contains(got, "echo-pack__echo") {
		t.Errorf("tools = %v: the policy never approves enable_tools, so no pack tool is offered", got)
	}
}

func TestFlatNames(t *testing.T) {
	s := &Server{cfg: Config{Tools: []string{"a", "b"}}}
	obj := json.RawMessage(`{"type":"object"}`)
	var in []llm.Tool
	for _, n := range []string{"open_docs", "read_file", "a__query", "a__open_docs", "a__x", "b__x", "b__y", "c__z"} {
		in = append(in, llm.Tool{Name: n, InputSchema: obj})
	}
	got := s.flatNames(in)
	want := map[string]string{
		"open_docs": "open_docs", "read_file": "read_file",
		"a__query":     "query",
		"a__open_docs": "a__open_docs",         // a base tool has the name
		"a__x":         "a__x", "b__x": "b__x", // two flat packs have it
		"b__y": "y",
		"c__z": "c__z", // not a flat pack
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s offered as %q, want %q", k, got[k], v)
		}
	}
}
