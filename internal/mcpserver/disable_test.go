package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestDisabledPackIsNotServed: a pack disabled while a client is connected
// runs no tool (the call is denied and audited), and a client that
// connects afterwards is not offered it at all. Enabled again, it is.
func TestDisabledPackIsNotServed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, autoApproveEcho)
	cs := e.connect(t, "before", nil)
	if text, isErr := callText(t, cs, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	if _, err := e.app.SetEnabled(ctx, "echo-pack", false); err != nil {
		t.Fatal(err)
	}
	text, isErr := callText(t, cs, "echo-pack__echo", map[string]any{"message": "hi"})
	if !isErr || !strings.Contains(text, "disabled") {
		t.Errorf("echo of a disabled pack = %q (error %v), want a denial that says it is disabled", text, isErr)
	}
	rows := e.auditRows(t)
	if last := rows[len(rows)-1]; last["tool"] != "echo" || last["status"] != "denied" {
		t.Errorf("last audit row = %v, want echo denied", last)
	}

	after := e.connect(t, "after", nil)
	if text, isErr := callText(t, after, "open_docs", map[string]any{"pack_id": "echo-pack"}); !isErr {
		t.Errorf("open_docs of a disabled pack in a new session = %q, want an error", text)
	}
	res, err := after.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		if strings.Contains(r.URI, "echo-pack") {
			t.Errorf("a disabled pack's resource is listed: %s", r.URI)
		}
	}

	if _, err := e.app.SetEnabled(ctx, "echo-pack", true); err != nil {
		t.Fatal(err)
	}
	again := e.connect(t, "again", nil)
	if text, isErr := callText(t, again, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools after enable: %s", text)
	}
	if names := toolNames(t, again); !slices.Contains(names, "echo-pack__echo") {
		t.Errorf("tools after enable = %v", names)
	}
}
