package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/identity/identitytest"
	"github.com/packs-run/packs/internal/llm/llmtest"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/internal/telemetry"
)

// oidcEnv is a server whose people sign in at a real OpenID provider
// running in the test; policy's [roles] maps the "groups" claim.
func oidcEnv(t *testing.T, more ...func(*envOptions)) (*env, *identitytest.OP) {
	t.Helper()
	op := identitytest.Start(t)
	file := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(file, []byte(identityPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := capability.LoadPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := identity.New(context.Background(), op.Config(pol.Roles()))
	if err != nil {
		t.Fatal(err)
	}
	opt := envOptions{oidc: p, policy: file}
	for _, f := range more {
		f(&opt)
	}
	return newEnv(t, opt), op
}

const identityPolicy = "[roles]\nclaim = \"groups\"\nadmin = [\"packs-admins\"]\nmember = [\"engineering\"]\nauditor = [\"security\"]\n"

// as is e acting with another bearer token: a person's JWT.
func (e *env) as(token string) *env {
	c := *e
	c.token = token
	return &c
}

// tokensOfEachRole mints a token for one person of each role, and one whose groups
// the policy gives no role.
func tokensOfEachRole(t *testing.T, op *identitytest.OP) map[string]string {
	return map[string]string{
		"admin":   op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}, "preferred_username": "ada"}),
		"member":  op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}, "preferred_username": "mia"}),
		"auditor": op.Token(t, "aud", map[string]any{"groups": []string{"security"}}),
		"none":    op.Token(t, "nob", map[string]any{"groups": []string{"marketing"}}),
	}
}

// TestEveryRouteHasARole: the route table is the one owner of who may call
// what; a route added without a role fails here.
func TestEveryRouteHasARole(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, rt := range e.srv.apiRoutes() {
		if rt.roles == 0 || (rt.roles != public && rt.roles&^identity.Everyone != 0) {
			t.Errorf("%s declares roles %08b: give it public, or admin, member and auditor", rt.pattern, rt.roles)
		}
	}
}

// TestRouteRoles calls every /v1 route with a token of each role, a token
// whose person holds no role, and none: a role the route does not declare
// is refused (403) before its handler runs; one it declares gets past the
// door (whatever the handler then says of the made-up ids).
func TestRouteRoles(t *testing.T) {
	e, op := oidcEnv(t)
	tokens := tokensOfEachRole(t, op)
	roleOf := map[string]identity.Roles{"admin": identity.Admin, "member": identity.Member, "auditor": identity.Auditor}
	fill := strings.NewReplacer("{id}", "x_none", "{name}", "no-such-pack", "{capability}", "network", "{pack}", "no-such-pack", "{path...}", "none.txt")
	client := &http.Client{Timeout: 5 * time.Second}
	for _, rt := range e.srv.apiRoutes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		path = fill.Replace(path)
		for who, tok := range tokens {
			req, _ := http.NewRequest(method, e.url+path, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s as %s: %v", rt.pattern, who, err)
			}
			res.Body.Close()
			got := res.StatusCode
			switch {
			case rt.roles == public:
				if got == http.StatusForbidden || got == http.StatusUnauthorized {
					t.Errorf("%s (public) as %s: got %d", rt.pattern, who, got)
				}
			case who == "none" || !roleOf[who].Has(rt.roles):
				if got != http.StatusForbidden {
					t.Errorf("%s (roles %s) as %s: got %d, want 403", rt.pattern, rt.roles, who, got)
				}
			case got == http.StatusForbidden || got == http.StatusUnauthorized:
				t.Errorf("%s (roles %s) as %s: got %d, want past the door", rt.pattern, rt.roles, who, got)
			}
		}
	}
}

// TestBadTokensRefused: expired, wrong-audience, foreign-key and
// wrong-issuer tokens are refused on the API (401) and change nothing; the
// token holder still gets in, in every role.
func TestBadTokensRefused(t *testing.T) {
	e, op := oidcEnv(t)
	past := time.Now().Add(-time.Hour)
	for name, tok := range map[string]string{
		"expired":        op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}, "iat": past.Add(-time.Hour).Unix(), "nbf": past.Add(-time.Hour).Unix(), "exp": past.Unix()}),
		"wrong audience": op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}, "aud": "some-other-app"}),
		"foreign key":    op.Forged(t, "ada", map[string]any{"groups": []string{"packs-admins"}}),
		"wrong issuer":   op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}, "iss": "https://evil.example"}),
	} {
		for _, rq := range [][2]string{{"GET", "/v1/chats"}, {"POST", "/v1/packs/notes/grants"}, {"GET", "/v1/audit"}} {
			if got := e.doAuth("Bearer "+tok, rq[0], rq[1], map[string]any{"capability": "terminal_exec"}, nil); got != http.StatusUnauthorized {
				t.Errorf("%s token, %s %s: got %d, want 401", name, rq[0], rq[1], got)
			}
		}
	}
	var st map[string]any
	e.do("GET", "/v1/status", nil, &st)
	if st["authenticated"] != true || st["sign_in"] != "/auth/login" {
		t.Errorf("the token holder's status: %v", st)
	}
	e.must(http.StatusOK, "GET", "/v1/audit", nil, nil)
}

// TestMemberCannotSeeOthersCall: a member's chat and the call waiting in
// it are theirs: another member neither lists, reads, streams nor
// approves them; an admin sees them; the owner approves, and the audit
// names them and the web as the client.
func TestMemberCannotSeeOthersCall(t *testing.T) {
	e, op := oidcEnv(t)
	e.install()
	mia := e.as(op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}, "preferred_username": "mia"}))
	bob := e.as(op.Token(t, "bob", map[string]any{"groups": []string{"engineering"}}))
	ada := e.as(op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}}))

	e.model.Push(append(waitsForAPerson(), llmtest.Turn{Text: "done"})...)
	var c chatJSON
	mia.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	ev := mia.stream(c.ID)
	mia.must(http.StatusAccepted, "POST", "/v1/chats/"+c.ID+"/messages", map[string]any{"text": "go"}, nil)
	inv := ev.next("pending").Data["invocation"].(string)

	var list struct {
		Items []chatJSON
	}
	bob.must(http.StatusOK, "GET", "/v1/chats", nil, &list)
	if len(list.Items) != 0 {
		t.Errorf("bob lists %+v", list.Items)
	}
	var pend struct{ Items []pendingJSON }
	bob.must(http.StatusOK, "GET", "/v1/invocations", nil, &pend)
	if len(pend.Items) != 0 {
		t.Errorf("bob sees the waiting calls %+v", pend.Items)
	}
	for _, rq := range [][2]string{
		{"GET", "/v1/chats/" + c.ID}, {"GET", "/v1/chats/" + c.ID + "/events"}, {"GET", "/v1/chats/" + c.ID + "/files"},
		{"POST", "/v1/chats/" + c.ID + "/messages"}, {"POST", "/v1/chats/" + c.ID + "/stop"},
		{"POST", "/v1/invocations/" + inv + "/approve"}, {"POST", "/v1/invocations/" + inv + "/deny"},
	} {
		if got := bob.do(rq[0], rq[1], map[string]any{"text": "hi"}, nil); got != http.StatusNotFound {
			t.Errorf("bob %s %s: got %d, want 404", rq[0], rq[1], got)
		}
	}
	if got := bob.do("POST", "/v1/chats", map[string]any{"id": c.ID}, nil); got != http.StatusNotFound {
		t.Errorf("bob resumes mia's chat by id: got %d, want 404", got)
	}
	ada.must(http.StatusOK, "GET", "/v1/chats", nil, &list)
	ada.must(http.StatusOK, "GET", "/v1/invocations", nil, &pend)
	if len(list.Items) != 1 || len(pend.Items) != 1 || pend.Items[0].Invocation != inv {
		t.Errorf("the admin sees chats %+v and calls %+v", list.Items, pend.Items)
	}
	mia.must(http.StatusOK, "GET", "/v1/invocations", nil, &pend)
	if len(pend.Items) != 1 {
		t.Errorf("mia's waiting calls: %+v", pend.Items)
	}
	mia.must(http.StatusOK, "POST", "/v1/invocations/"+inv+"/approve", nil, nil)
	ev.next("turn_done")

	var rows struct{ Items []auditRowJSON }
	ada.must(http.StatusOK, "GET", "/v1/audit?person=mia", nil, &rows)
	if len(rows.Items) == 0 {
		t.Fatal("no audit row names mia")
	}
	for _, r := range rows.Items {
		if r.Person != "mia" || r.Issuer != op.Issuer() || r.Client != "web" {
			t.Errorf("audit row %d: person %q issuer %q client %q", r.Seq, r.Person, r.Issuer, r.Client)
		}
	}
	if got := mia.do("GET", "/v1/audit", nil, nil); got != http.StatusForbidden {
		t.Errorf("a member reads the audit: got %d, want 403", got)
	}
}

// TestInstallNamesTheAdmin: an admin signed in installs a pack; the
// install's audit row names them, the web as the client; a member may not
// install.
func TestInstallNamesTheAdmin(t *testing.T) {
	e, op := oidcEnv(t)
	ada := e.as(op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}}))
	mia := e.as(op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}}))
	if got := mia.do("POST", "/v1/packs", map[string]any{"path": notesPack}, nil); got != http.StatusForbidden {
		t.Errorf("a member installs: got %d, want 403", got)
	}
	ada.install()
	var rows struct{ Items []auditRowJSON }
	ada.must(http.StatusOK, "GET", "/v1/audit?kind=install", nil, &rows)
	if len(rows.Items) != 1 || rows.Items[0].Person != "ada" || rows.Items[0].Issuer != op.Issuer() || rows.Items[0].Client != "web" {
		t.Errorf("install rows: %+v", rows.Items)
	}
}

// TestQueueIsTheOwners: a call an MCP session of mia's queued for a person
// is listed and decided by mia (or an admin), not by another member; one
// queued outside any chat is an admin's alone.
func TestQueueIsTheOwners(t *testing.T) {
	e, op := oidcEnv(t)
	mia := e.as(op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}}))
	bob := e.as(op.Token(t, "bob", map[string]any{"groups": []string{"engineering"}}))
	var c chatJSON
	mia.must(http.StatusCreated, "POST", "/v1/chats", nil, &c)
	now := time.Now()
	for id, chatID := range map[string]string{"inv_mia": c.ID, "inv_none": ""} {
		if err := e.app.DB.Enqueue(context.Background(), store.QueuedCall{ID: id, Chat: chatID, Client: "mcp:claude-ai", Tool: "read_file", Class: "read_file",
			Arguments: []byte(`{}`), Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(e *env) []string {
		var q struct{ Items []store.QueuedCall }
		e.must(http.StatusOK, "GET", "/v1/queue", nil, &q)
		var out []string
		for _, it := range q.Items {
			out = append(out, it.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(bob); len(got) != 0 {
		t.Errorf("bob's queue: %v", got)
	}
	if got := ids(mia); !slices.Equal(got, []string{"inv_mia"}) {
		t.Errorf("mia's queue: %v", got)
	}
	if got := ids(e); !slices.Equal(got, []string{"inv_mia", "inv_none"}) {
		t.Errorf("the admin's queue: %v", got)
	}
	for _, id := range []string{"inv_mia", "inv_none"} {
		if got := bob.do("POST", "/v1/queue/"+id+"/approve", nil, nil); got != http.StatusNotFound {
			t.Errorf("bob approves %s: got %d, want 404", id, got)
		}
	}
	if got := mia.do("POST", "/v1/queue/inv_none/approve", nil, nil); got != http.StatusNotFound {
		t.Errorf("mia approves a call outside her chats: got %d, want 404", got)
	}
	mia.must(http.StatusOK, "POST", "/v1/queue/inv_mia/approve", nil, nil)
}

// TestPolicyView: an admin reads the policy in effect, [roles] included;
// a member may not (TestRouteRoles covers every role).
func TestPolicyView(t *testing.T) {
	e, op := oidcEnv(t)
	var pol struct{ Source, Effective string }
	e.as(op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}})).must(http.StatusOK, "GET", "/v1/policy", nil, &pol)
	if !strings.HasSuffix(pol.Source, "policy.toml") || !strings.Contains(pol.Effective, "[roles]") || !strings.Contains(pol.Effective, "packs-admins") {
		t.Errorf("the policy view: %+v", pol)
	}
	if got := e.as(op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}})).do("GET", "/v1/policy", nil, nil); got != http.StatusForbidden {
		t.Errorf("a member reads the policy: got %d, want 403", got)
	}
}

// TestMetricsRole: /metrics counts every pack's calls and denials, so a
// signed-in person reads it only as an admin or an auditor; a member and
// someone with no role are refused, and nobody reads it without a
// credential.
func TestMetricsRole(t *testing.T) {
	e, op := oidcEnv(t, func(o *envOptions) { o.metrics = telemetry.NewMetrics().Handler() })
	want := map[string]int{"admin": http.StatusOK, "auditor": http.StatusOK, "member": http.StatusForbidden, "none": http.StatusForbidden}
	for role, tok := range tokensOfEachRole(t, op) {
		if got := e.as(tok).getStatus(t, "/metrics"); got != want[role] {
			t.Errorf("%s GET /metrics: %d, want %d", role, got, want[role])
		}
	}
	if got := e.getStatus(t, "/metrics"); got != http.StatusOK {
		t.Errorf("the token holder GET /metrics: %d, want 200", got)
	}
	if got := e.as("").getStatus(t, "/metrics"); got != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a credential: %d, want 401", got)
	}
}

// getStatus is the status of GET path with e's bearer token (none when
// it is empty); the body is not JSON.
func (e *env) getStatus(t *testing.T, path string) int {
	t.Helper()
	req, err := http.NewRequest("GET", e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPackPageInOthersChat: a pack's page shown in a chat (?chat=ID) tells
// where that chat's workspace is: in someone else's chat it is answered as
// if the chat did not exist; the owner and an admin see it.
func TestPackPageInOthersChat(t *testing.T) {
	e, op := oidcEnv(t)
	e.install()
	mia := e.as(op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}}))
	bob := e.as(op.Token(t, "bob", map[string]any{"groups": []string{"engineering"}}))
	ada := e.as(op.Token(t, "ada", map[string]any{"groups": []string{"packs-admins"}}))
	var c chatJSON
	mia.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{"attach": []string{"notes"}}, &c)
	if got := bob.do("GET", "/v1/packs/notes?chat="+c.ID, nil, nil); got != http.StatusNotFound {
		t.Errorf("bob reads notes in mia's chat: got %d, want 404", got)
	}
	if got := bob.do("GET", "/v1/packs/notes", nil, nil); got != http.StatusOK {
		t.Errorf("bob reads notes outside a chat: got %d, want 200", got)
	}
	mia.must(http.StatusOK, "GET", "/v1/packs/notes?chat="+c.ID, nil, nil)
	ada.must(http.StatusOK, "GET", "/v1/packs/notes?chat="+c.ID, nil, nil)
}
