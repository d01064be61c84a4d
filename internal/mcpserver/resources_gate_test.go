package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourceReadIsGatedAndAudited: resources/read is a read the client
// triggers, so it goes through the gate and the audit log exactly as the
// read_file tool does. A client whose read_file call is denied cannot get
// the same file through resources/read, and every read leaves a row.
func TestResourceReadIsGatedAndAudited(t *testing.T) {
	ctx := context.Background()
	const uri = "pack://echo-pack/references/NOTES.md"

	t.Run("denied", func(t *testing.T) {
		e := newEnv(t, "")
		cs := e.connect(t, "no-elicitation", nil)
		if text, isErr := callText(t, cs, "read_file", map[string]any{"pack_id": "echo-pack", "path": "references/NOTES.md"}); !isErr {
			t.Fatalf("read_file was not denied: %s", text)
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil {
			t.Fatalf("resources/read returned the file the gate denied to read_file: %+v", res.Contents[0].Text)
		}
		rows := e.auditRows(t)
		if len(rows) != 2 {
			t.Fatalf("audit rows = %v, want one for the tool call and one for the resource read", rows)
		}
		for _, r := range rows {
			if r["tool"] != "read_file" || r["status"] != "denied" || r["pack"] != "echo-pack" {
				t.Errorf("audit row %v: want a denied read_file of echo-pack", r)
			}
		}
	})
	t.Run("approved by the policy", func(t *testing.T) {
		e := newEnv(t, autoApproveEcho)
		cs := e.connect(t, "reader", nil)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || !strings.Contains(res.Contents[0].Text, "MARKER-NOTES-7f3a") {
			t.Fatalf("resources/read = %+v, %v", res, err)
		}
		rows := e.auditRows(t)
		if len(rows) != 1 || rows[0]["tool"] != "read_file" || rows[0]["status"] != "ok" || !strings.HasPrefix(rows[0]["approver"].(string), "policy") {
			t.Fatalf("audit rows = %v, want one read_file approved by the policy", rows)
		}
	})
}
