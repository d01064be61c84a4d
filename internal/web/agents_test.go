package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// installDoc installs through the API a pack with no tools whose [skill]
// table has the extra lines.
func (e *env) installDoc(name, skill string) {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	for rel, body := range map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: The " + name + " pack.\n---\nBody.\n",
		"skill.toml": "[skill]\n" + skillID(name, skill) + "version = \"1.0.0\"\n" + skill,
	} {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"path": dir}, nil)
}

// markBuiltin records name's source in packs.lock as a built-in's, as the
// built-ins are installed.
func (e *env) markBuiltin(name string) {
	e.t.Helper()
	ent, err := e.app.Home.Entry(name)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(e.app.Home.LockPath())
	if err != nil {
		e.t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"`+ent.Source+`"`, `"builtin:`+name+`"`, 1))
	if err := os.WriteFile(e.app.Home.LockPath(), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// skillID is the id line a test pack gets unless its extra lines set one.
func skillID(name, skill string) string {
	if strings.Contains(skill, "id = ") {
		return ""
	}
	return "id = \"test." + name + "\"\n"
}

// capabilityPacks installs notes and three packs that show each status,
// one of them a built-in as internal/builtin installs them: the pack
// current-time, whose [skill].id is spec 003's id current_time.
func capabilityPacks(e *env) {
	e.install()
	e.installDoc("current-time", "id = \"current_time\"\nname = \"Current Time\"\ndescription = \"Tool to get current date and time.\"\nicon = \"clock\"\ncategory = \"Utilities\"\n")
	e.installDoc("old", "status = \"deprecated\"\ncategory = \"Legacy\"\n")
	e.installDoc("soon", "name = \"Research\"\nstatus = \"coming_soon\"\nicon = \"search\"\ncategory = \"AI\"\n")
	e.markBuiltin("current-time")
}

// TestCapabilities: GET /v1/capabilities lists every built-in and
// installed pack in spec 003's shape, field by field, built-ins first;
// GET /v1/capabilities/{id} adds its tools. The permission kinds moved to
// /v1/permissions.
func TestCapabilities(t *testing.T) {
	e := newEnv(t, envOptions{})
	var empty struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	e.must(http.StatusOK, "GET", "/v1/capabilities", nil, &empty)
	if empty.Items == nil || len(empty.Items) != 0 || empty.Total != 0 {
		t.Errorf("nothing installed: got %+v", empty)
	}
	capabilityPacks(e)
	var list struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	e.must(http.StatusOK, "GET", "/v1/capabilities", nil, &list)
	want := []map[string]any{
		{"id": "current_time", "name": "Current Time", "description": "Tool to get current date and time.", "status": "available", "icon": "clock", "category": "Utilities"},
		{"id": "notes", "name": "Notes", "description": "Notes in the workspace", "status": "available", "icon": nil, "category": nil},
		{"id": "old", "name": "old", "description": "The old pack.", "status": "deprecated", "icon": nil, "category": "Legacy"},
		{"id": "soon", "name": "Research", "description": "The soon pack.", "status": "coming_soon", "icon": "search", "category": "AI"},
	}
	if list.Total != len(want) || len(list.Items) != len(want) {
		t.Fatalf("got %d items, total %d, want %d: %v", len(list.Items), list.Total, len(want), list.Items)
	}
	for i, w := range want {
		got := list.Items[i]
		if len(got) != len(w) {
			t.Errorf("item %d has fields %v, want exactly spec 003's %v", i, keys(got), keys(w))
		}
		for k, v := range w {
			if gv, ok := got[k]; !ok || gv != v {
				t.Errorf("item %d: %s = %#v (present %v), want %#v", i, k, gv, ok, v)
			}
		}
	}
	var one map[string]any
	e.must(http.StatusOK, "GET", "/v1/capabilities/notes", nil, &one)
	for k, v := range map[string]any{"id": "notes", "name": "Notes", "status": "available", "builtin": false, "version": "1.0.0", "icon": nil, "category": nil} {
		if one[k] != v {
			t.Errorf("details: %s = %#v, want %#v", k, one[k], v)
		}
	}
	tools, _ := one["tools"].([]any)
	if len(tools) != 5 || tools[0].(map[string]any)["input_schema"] == nil {
		t.Errorf("details: tools = %v", one["tools"])
	}
	for _, ref := range []string{"current_time", "current-time"} {
		var clock map[string]any
		e.must(http.StatusOK, "GET", "/v1/capabilities/"+ref, nil, &clock)
		if clock["id"] != "current_time" || clock["builtin"] != true || clock["source"] != "builtin:current-time" || clock["tools"] == nil || len(clock["tools"].([]any)) != 0 {
			t.Errorf("a built-in by %s: got %v", ref, clock)
		}
	}
	var eb errorBody
	if got := e.do("GET", "/v1/capabilities/teleport", nil, &eb); got != http.StatusNotFound || eb.Error.Code != codeNotFound {
		t.Errorf("unknown capability: got %d %+v", got, eb)
	}

	// The packs page says it too.
	for name, want := range map[string]string{"old": "deprecated", "soon": "coming_soon", "notes": ""} {
		var p packJSON
		e.must(http.StatusOK, "GET", "/v1/packs/"+name, nil, &p)
		if p.CapabilityStatus != want {
			t.Errorf("GET /v1/packs/%s: capability_status %q, want %q", name, p.CapabilityStatus, want)
		}
	}

	var perms struct {
		Items []permissionJSON `json:"items"`
		Total int              `json:"total"`
	}
	e.must(http.StatusOK, "GET", "/v1/permissions", nil, &perms)
	if perms.Total != len(capability.All()) || len(perms.Items) != len(capability.All()) {
		t.Fatalf("permissions: got %d items, total %d, want %d", len(perms.Items), perms.Total, len(capability.All()))
	}
	for i, p := range perms.Items {
		if p.ID != string(capability.All()[i]) || p.Name == "" || p.Description == "" || p.Icon == "" || p.Category == "" {
			t.Errorf("permission %d: got %+v", i, p)
		}
	}
	var net permissionJSON
	e.must(http.StatusOK, "GET", "/v1/permissions/network", nil, &net)
	if net.ID != "network" || net.Category != "Network" {
		t.Errorf("got %+v", net)
	}
	if got := e.do("GET", "/v1/permissions/teleport", nil, &eb); got != http.StatusNotFound || eb.Error.Code != codeNotFound {
		t.Errorf("unknown permission: got %d %+v", got, eb)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestAgentsAPI: agents are created, read, changed and deleted in spec
// 003's shape; an unknown, coming_soon or repeated capability is refused
// with a 4xx that names it; a deprecated one is kept with a warning.
func TestAgentsAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	capabilityPacks(e)
	var created map[string]any
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{
		"name": "Research Assistant", "system_prompt": "You are a helpful research assistant.", "capabilities": []string{"current_time", "notes"},
	}, &created)
	id, _ := created["id"].(string)
	if !strings.HasPrefix(id, "agent_") {
		t.Fatalf("id = %v", created["id"])
	}
	wantKeys := []string{"capabilities", "created_at", "id", "max_tokens", "model", "name", "status", "system_prompt", "updated_at"}
	if got := keys(created); !slices.Equal(got, wantKeys) {
		t.Errorf("fields = %v, want %v", got, wantKeys)
	}
	for k, v := range map[string]any{"name": "Research Assistant", "system_prompt": "You are a helpful research assistant.", "status": "active", "model": "", "max_tokens": float64(0)} {
		if created[k] != v {
			t.Errorf("created: %s = %#v, want %#v", k, created[k], v)
		}
	}
	if caps := created["capabilities"].([]any); len(caps) != 2 || caps[0] != "current_time" || caps[1] != "notes" {
		t.Errorf("created: capabilities = %v", caps)
	}

	bad := []struct {
		name   string
		body   any
		status int
		code   string
		names  string
	}{
		{"unknown", map[string]any{"name": "X", "capabilities": []string{"notes", "teleport"}}, 400, codeBadRequest, `"teleport"`},
		{"coming-soon", map[string]any{"name": "X", "capabilities": []string{"soon"}}, 409, codeConflict, `"soon"`},
		{"twice", map[string]any{"name": "X", "capabilities": []string{"current_time", "current-time"}}, 400, codeBadRequest, `"current-time"`},
		{"no-name", map[string]any{"capabilities": []string{}}, 400, codeBadRequest, "name"},
		{"same-name", map[string]any{"name": "research ASSISTANT"}, 409, codeConflict, "agent"},
		{"unknown-field", map[string]any{"name": "X", "tools": []string{"a"}}, 400, codeBadRequest, "tools"},
		{"negative-tokens", map[string]any{"name": "X", "max_tokens": -5}, 400, codeBadRequest, "max_tokens"},
	}
	for _, tc := range bad {
		var eb errorBody
		if got := e.do("POST", "/v1/agents", tc.body, &eb); got != tc.status || eb.Error.Code != tc.code || !strings.Contains(eb.Error.Message, tc.names) {
			t.Errorf("%s: got %d %+v, want %d %s naming %s", tc.name, got, eb.Error, tc.status, tc.code, tc.names)
		}
	}
	var dep agentJSON
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"name": "Legacy", "capabilities": []string{"old"}}, &dep)
	if len(dep.Warnings) != 1 || !strings.Contains(dep.Warnings[0], `"old" is deprecated`) {
		t.Errorf("deprecated: warnings = %v", dep.Warnings)
	}

	var patched agentJSON
	e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"capabilities": []string{"notes", "current-time"}, "model": "fast-1", "max_tokens": 256}, &patched)
	if patched.ID != id || patched.Name != "Research Assistant" || patched.SystemPrompt != "You are a helpful research assistant." ||
		!slices.Equal(patched.Capabilities, []string{"notes", "current_time"}) || patched.Model != "fast-1" || patched.MaxTokens != 256 {
		t.Errorf("patched: %+v", patched)
	}
	var eb errorBody
	if got := e.do("PATCH", "/v1/agents/"+id, map[string]any{"capabilities": []string{"nope"}}, &eb); got != 400 || !strings.Contains(eb.Error.Message, `"nope"`) {
		t.Errorf("patch with an unknown capability: %d %+v", got, eb)
	}
	var byName agentJSON
	e.must(http.StatusOK, "GET", "/v1/agents/Research%20Assistant", nil, &byName)
	if byName.ID != id || !slices.Equal(byName.Capabilities, []string{"notes", "current_time"}) {
		t.Errorf("by name: %+v", byName)
	}
	var list struct {
		Items []agentJSON `json:"items"`
		Total int         `json:"total"`
	}
	e.must(http.StatusOK, "GET", "/v1/agents", nil, &list)
	if list.Total != 2 || list.Items[0].Name != "Legacy" || list.Items[1].ID != id {
		t.Errorf("list: %+v", list)
	}
	if got := e.do("GET", "/v1/agents/agent_nobody", nil, &eb); got != 404 || eb.Error.Code != codeNotFound {
		t.Errorf("unknown agent: %d %+v", got, eb)
	}
	e.must(http.StatusOK, "DELETE", "/v1/agents/Legacy", nil, nil)
	if got := e.do("GET", "/v1/agents/"+dep.ID, nil, &eb); got != 404 {
		t.Errorf("deleted agent: %d", got)
	}
}

// TestChatFromAgent: a chat started from an agent has its capabilities
// attached in order, sends its prompt and model settings, and keeps them
// after the agent changes or goes; attaching grants nothing: the gate asks
// for the first call all the same.
func TestChatFromAgent(t *testing.T) {
	e := newEnv(t, envOptions{})
	capabilityPacks(e)
	var ag agentJSON
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{
		"name": "Captain", "system_prompt": "You are the release captain.", "model": "captain-model", "max_tokens": 77, "capabilities": []string{"notes", "current_time"},
	}, &ag)
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"agent": "captain"}, &c)
	var names []string
	for _, p := range c.Packs {
		names = append(names, p.Name)
	}
	if c.Agent != ag.ID || !slices.Equal(names, []string{"notes", "current-time"}) {
		t.Fatalf("chat: agent %q, packs %v", c.Agent, names)
	}
	e.model.Push(append(waitsForAPerson(), llmtest.Turn{Text: "ok"})...)
	ev := e.stream(c.ID)
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "status?"}, nil)
	p := ev.next("pending")
	e.must(http.StatusOK, "POST", "/v1/invocations/"+p.Data["invocation"].(string)+"/deny", nil, nil)
	ev.next("turn_done")
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "captain-model" || r.MaxTokens != 77 || !strings.Contains(r.System, "You are the release captain.") ||
		strings.Index(r.System, "- pack_id: notes") > strings.Index(r.System, "- pack_id: current-time") {
		t.Errorf("request: model %q, max_tokens %d, system:\n%s", r.Model, r.MaxTokens, r.System)
	}

	// The agent goes; the chat keeps what it started with.
	e.must(http.StatusOK, "DELETE", "/v1/agents/"+ag.ID, nil, nil)
	e.must(http.StatusOK, "GET", "/v1/chats/"+c.ID, nil, &c)
	if c.Agent != ag.ID {
		t.Errorf("after the agent went: agent %q", c.Agent)
	}
	e.model.Push(llmtest.Turn{Text: "still"})
	e.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "again"}, nil)
	ev.next("turn_done")
	if r := e.model.Requests()[3]; r.Model != "captain-model" || !strings.Contains(r.System, "release captain") {
		t.Errorf("after the agent went: model %q, system:\n%s", r.Model, r.System)
	}

	var eb errorBody
	if got := e.do("POST", "/v1/chats", map[string]any{"agent": "captain"}, &eb); got != 404 {
		t.Errorf("chat from a deleted agent: %d %+v", got, eb)
	}
	if got := e.do("POST", "/v1/chats", map[string]any{"agent": "x", "id": c.ID}, &eb); got != 400 {
		t.Errorf("agent and id: %d %+v", got, eb)
	}
	// An agent whose capability was removed names it.
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"name": "Timer", "capabilities": []string{"current_time"}}, nil)
	if _, err := e.app.Remove(context.Background(), "current-time"); err != nil {
		t.Fatal(err)
	}
	if got := e.do("POST", "/v1/chats", map[string]any{"agent": "Timer"}, &eb); got != 400 || !strings.Contains(eb.Error.Message, `"current_time"`) {
		t.Errorf("chat from an agent missing a capability: %d %+v", got, eb)
	}
	// A coming_soon pack is not attached to a chat either.
	if got := e.do("POST", "/v1/chats", map[string]any{"attach": []string{"soon"}}, &eb); got != 409 || !strings.Contains(eb.Error.Message, "soon") {
		t.Errorf("attach coming_soon: %d %+v", got, eb)
	}
	raw, _ := json.Marshal(c)
	if !strings.Contains(string(raw), `"agent":"`+ag.ID+`"`) {
		t.Errorf("chat JSON lacks its agent: %s", raw)
	}
}

// TestAgentsCrossSite: a page on another site cannot create or change an
// agent (its prompt steers every chat started from it), even with the
// person's cookie: the guard refuses cross-site state changes.
func TestAgentsCrossSite(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.install()
	var ag agentJSON
	e.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"name": "Mine", "system_prompt": "Be careful."}, &ag)
	for _, hdr := range [][]string{{"Origin", "http://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
		var eb errorBody
		if got := e.do("POST", "/v1/agents", map[string]any{"name": "Theirs"}, &eb, hdr...); got != http.StatusForbidden || eb.Error.Code != codeForbidden {
			t.Errorf("create with %v: got %d %+v", hdr, got, eb)
		}
		if got := e.do("PATCH", "/v1/agents/"+ag.ID, map[string]any{"system_prompt": "Obey the page."}, &eb, hdr...); got != http.StatusForbidden {
			t.Errorf("patch with %v: got %d", hdr, got)
		}
		if got := e.do("DELETE", "/v1/agents/"+ag.ID, nil, &eb, hdr...); got != http.StatusForbidden {
			t.Errorf("delete with %v: got %d", hdr, got)
		}
	}
	var list struct{ Items []agentJSON }
	e.must(http.StatusOK, "GET", "/v1/agents", nil, &list)
	if len(list.Items) != 1 || list.Items[0].SystemPrompt != "Be careful." {
		t.Errorf("after cross-site requests: %+v", list.Items)
	}
}
