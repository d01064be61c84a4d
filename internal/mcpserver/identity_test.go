package mcpserver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/identity"
	"github.com/packs-run/packs/internal/identity/identitytest"
)

// TestMCPMethodRoles: every method the server answers declares roles;
// the tools, resources and prompts are for admins and members only.
func TestMCPMethodRoles(t *testing.T) {
	for m, r := range methodRoles {
		if r == 0 || r&^identity.Everyone != 0 {
			t.Errorf("%s declares roles %08b", m, r)
		}
		if strings.HasPrefix(m, "tools/") && r.Has(identity.Auditor) {
			t.Errorf("%s is open to auditors", m)
		}
	}
}

// TestMCPWithOIDC: over HTTP, a bearer JWT the issuer signed (a real
// OpenID provider in the test) opens a session as its person: a member
// calls tools and the audit names them and the client; an auditor
// connects but may not list or call tools; expired and wrong-audience
// tokens do not connect; packs' own token still does.
func TestMCPWithOIDC(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	op, p := oidcProvider(t, "[roles]\nclaim = \"groups\"\nmember = [\"engineering\"]\nauditor = [\"security\"]\n")
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken, OIDC: p})
	ctx := context.Background()
	dial := func(token string) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.URL(), HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}
	mia, err := dial(op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}}))
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, mia, "enable_tools", map[string]any{"pack_id": "echo-pack"}); isErr {
		t.Fatalf("enable_tools: %s", text)
	}
	if text, isErr := callText(t, mia, "echo-pack__echo", map[string]any{"message": "as mia"}); isErr || !strings.Contains(text, "as mia") {
		t.Fatalf("echo = %q (error %v)", text, isErr)
	}
	var n int
	for en, err := range audit.Entries(ctx, e.app.DB, audit.Filter{Person: "mia"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if en.Issuer != op.Issuer() || !strings.HasPrefix(en.Client, "mcp:claude-ai") {
			t.Errorf("audit row %d: issuer %q client %q", en.Seq, en.Issuer, en.Client)
		}
	}
	if n < 2 {
		t.Errorf("%d audit rows name mia, want both calls", n)
	}

	aud, err := dial(op.Token(t, "aud", map[string]any{"groups": []string{"security"}}))
	if err != nil {
		t.Fatalf("an auditor cannot even connect: %v", err)
	}
	if _, err := aud.ListTools(ctx, nil); err == nil || !strings.Contains(err.Error(), "needs one of the roles") {
		t.Errorf("an auditor lists tools: %v", err)
	}
	if _, err := aud.CallTool(ctx, &mcp.CallToolParams{Name: "enable_tools", Arguments: map[string]any{"pack_id": "echo-pack"}}); err == nil {
		t.Error("an auditor called a tool")
	}

	past := time.Now().Add(-time.Hour)
	for name, tok := range map[string]string{
		"expired":        op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}, "iat": past.Add(-time.Hour).Unix(), "nbf": past.Add(-time.Hour).Unix(), "exp": past.Unix()}),
		"wrong audience": op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}, "aud": "another-app"}),
	} {
		if code, body := post(t, h.URL(), "", "", "Bearer "+tok); code != http.StatusUnauthorized {
			t.Errorf("%s token: status %d (%s), want 401", name, code, body)
		}
	}
	if code, body := post(t, h.URL(), "", "", "Bearer "+testToken); code != http.StatusOK {
		t.Errorf("packs' token: status %d (%s)", code, body)
	}
}

// TestMCPSessionIsItsPersons: a session opened with mia's token cannot be
// used with bob's (the SDK ties it to the bearer's UserID).
func TestMCPSessionIsItsPersons(t *testing.T) {
	e := newEnv(t, autoApproveEcho)
	op, p := oidcProvider(t, "[roles]\nclaim = \"groups\"\nmember = [\"engineering\"]\n")
	h := e.serveHTTP(t, HTTPConfig{Addr: "127.0.0.1:0", Token: testToken, OIDC: p})
	send := func(token, session, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, h.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return http.DefaultClient.Do(req)
	}
	mia := op.Token(t, "mia", map[string]any{"groups": []string{"engineering"}})
	bob := op.Token(t, "bob", map[string]any{"groups": []string{"engineering"}})
	res, err := send(mia, "", initializeBody)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize as mia: %d, session %q", res.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	if res, err = send(bob, sid, list); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Errorf("bob used mia's session: %d", res.StatusCode)
	}
	if res, err = send(mia, sid, list); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("mia's own session: %d", res.StatusCode)
	}
}

// oidcProvider starts an OpenID provider for the test and the packs
// provider that trusts it, with roles from the policy text roles.
func oidcProvider(t *testing.T, roles string) (*identitytest.OP, *identity.Provider) {
	t.Helper()
	op := identitytest.Start(t)
	pol, err := capability.ParsePolicy("policy.toml", []byte(roles))
	if err != nil {
		t.Fatal(err)
	}
	p, err := identity.New(context.Background(), op.Config(pol.Roles()))
	if err != nil {
		t.Fatal(err)
	}
	return op, p
}
