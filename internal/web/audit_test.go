package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallSummary: an audit row says who decided what, and does not blame
// the approver for what refused the call later (issue 12, defect 6).
func TestCallSummary(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"ok", `{"approver":"web","decision":"run_once","status":"ok","exit_code":0,"duration_ms":3.2}`,
			"approved by web (run once); ok, 3.2 ms"},
		{"a person's wait and the run", `{"approver":"web","decision":"run_once","status":"ok","exit_code":0,"duration_ms":12050,"waited_ms":12000,"ran_ms":41.3}`,
			"approved by web (run once); ok, waited 12 s for you, ran 41 ms"},
		{"approved by attach", `{"approver":"attach","decision":"run_once","by_attach":true,"status":"ok","exit_code":0,"duration_ms":0.5,"waited_ms":0.02,"ran_ms":0.3}`,
			"approved by attach (by attaching the pack to the chat); ok, ran 0.3 ms"},
		{"approved, then denied by a capability", `{"approver":"web:by-hand","decision":"run_once","status":"denied","reason":"capability: filesystem_read \"/var/log/app.log\" denied by user: not granted"}`,
			`approved by web:by-hand (run once); denied by capability filesystem_read "/var/log/app.log" (user): not granted`},
		{"approved, then refused for another reason", `{"approver":"web","decision":"allow_chat","remembered":true,"status":"denied","reason":"packs: notes: modified since install"}`,
			"approved by web (allowed for this chat earlier); denied after approval: packs: notes: modified since install"},
		{"denied by the person", `{"approver":"web","decision":"deny","status":"denied","reason":"capability: denied by gate: denied by web"}`,
			"denied by web"},
		{"denied before anyone was asked", `{"approver":"","decision":"deny","status":"denied","reason":"capability: terminal_exec \"rm\" denied by user: not granted"}`,
			`denied before approval by capability terminal_exec "rm" (user): not granted`},
		{"blocked by the policy", `{"approver":"","decision":"deny","status":"denied","reason":"capability: denied by policy: the policy p.toml blocks pack notes"}`,
			"denied before approval by the policy: the policy p.toml blocks pack notes"},
		{"refused before the gate", `{"approver":"","decision":"deny","status":"invalid_input","reason":"chat: bad arguments"}`,
			"refused before approval (invalid_input): chat: bad arguments"},
		{"the tool failed with its own exit status", `{"approver":"web","decision":"run_once","status":"tool_error","exit_code":3,"reason":"runtime: tool failed"}`,
			"approved by web (run once); tool_error, exit status 3: runtime: tool failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := callSummary(json.RawMessage(tt.body)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

type auditRow struct {
	Pack, Tool, Summary string
	Body                json.RawMessage
}

// TestAuditRowsNamePack: a call to a pack's tool that is not enabled yet
// is still the pack's row; a tool's own exit status is what the row keeps.
func TestAuditRowsNamePack(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	var r toolResultJSON
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}, &r)
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}, &r)
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__fail", "arguments": map[string]any{}}, &r)
	var au struct{ Items []auditRow }
	e.must(http.StatusOK, "GET", "/v1/audit?kind=invocation", nil, &au)
	if len(au.Items) != 3 {
		t.Fatalf("got %d rows, want 3: %+v", len(au.Items), au.Items)
	}
	if got := au.Items[0]; got.Pack != "notes" || got.Tool != "notes__echo" && got.Tool != "echo" {
		t.Errorf("echo before enable_tools: got pack %q tool %q, want pack notes", got.Pack, got.Tool)
	}
	fail := au.Items[2]
	var b struct {
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal(fail.Body, &b); err != nil {
		t.Fatal(err)
	}
	if b.ExitCode != 3 || !strings.Contains(fail.Summary, "exit status 3") {
		t.Errorf("fail exits 3: got exit_code %d, summary %q", b.ExitCode, fail.Summary)
	}
}

// TestApprovedThenRefused: a call the person approved that was refused
// later (here: the pack's files changed after install) says so; the tool
// card and the audit row name the approver as the one who approved.
func TestApprovedThenRefused(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	e.install()
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	var r toolResultJSON
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "enable_tools", "arguments": map[string]string{"pack_id": "notes"}}, &r)
	skill := filepath.Join(e.app.Home.PacksDir(), "notes", "SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: notes\ndescription: changed\n---\nchanged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, "POST", "/v1/chats/"+c.ID+"/calls", map[string]any{"name": "notes__echo", "arguments": map[string]string{"text": "hi"}}, &r)
	if !r.IsError || !r.Approved || r.Approver != "web:by-hand" || r.ErrorKind != "denied" {
		t.Fatalf("echo after the pack changed: got %+v", r)
	}
	var au struct{ Items []auditRow }
	e.must(http.StatusOK, "GET", "/v1/audit?kind=invocation&limit=1", nil, &au)
	if len(au.Items) != 1 || !strings.HasPrefix(au.Items[0].Summary, "approved by web:by-hand (run once); denied after approval: ") {
		t.Errorf("the row says %+v", au.Items)
	}
}
