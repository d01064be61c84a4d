package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
)

func TestRedactJSON(t *testing.T) {
	r := audit.Redactor{MaxValue: 16, MaxDepth: 4, MaxTotal: 4096}
	tests := []struct {
		name, in, want string
	}{
		{"plain", `{"path":"a.txt","n":3}`, `{"n":3,"path":"a.txt"}`},
		{"secret keys", `{"password":"p","API-Key":"k","apiKey":"k","client_secret":"s","Authorization":"a","auth":"x","session_id":"s","max_tokens":5}`,
			`{"API-Key":"[redacted]","Authorization":"[redacted]","apiKey":"[redacted]","auth":"[redacted]","client_secret":"[redacted]","max_tokens":5,"password":"[redacted]","session_id":"[redacted]"}`},
		{"secret object", `{"token":{"a":1}}`, `{"token":"[redacted]"}`},
		{"nested", `{"headers":[{"Cookie":"c"},{"x":"y"}]}`, `{"headers":[{"Cookie":"[redacted]"},{"x":"y"}]}`},
		{"credential value", `{"h":"Bearer abcdefghijk","k":"ghp_0123456789","a":"AKIAIOSFODNN7EXAMPLE"}`, `{"a":"[redacted]","h":"[redacted]","k":"[redacted]"}`},
		{"long value", `{"s":"0123456789abcdefXYZ"}`, `{"s":"0123456789abcdef…[cut 3 bytes]"}`},
		{"long multibyte value", `{"s":"ééééééééééé"}`, `{"s":"éééééééé…[cut 6 bytes]"}`},
		{"deep", `{"a":{"b":{"c":{"d":{"e":1}}}}}`, `{"a":{"b":{"c":{"d":"[too deep]"}}}}`},
		{"big number kept", `{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{"array", `["x","Basic dXNlcjpwYXNz"]`, `["x","[redacted]"]`},
		{"empty", ``, `null`},
		{"not json", `password=hunter2`, `{"bytes":16,"redacted":"not JSON"}`},
		{"trailing data", `{} {"password":"x"}`, `{"bytes":19,"redacted":"not JSON"}`},
	}
	for _, tt := range tests {
		if got := string(r.JSON([]byte(tt.in))); got != tt.want {
			t.Errorf("%s: JSON(%s) = %s, want %s", tt.name, tt.in, got, tt.want)
		}
	}
	big := `["` + strings.Repeat("a", 15) + `"` + strings.Repeat(`,"`+strings.Repeat("a", 15)+`"`, 400) + `]`
	if got := string(r.JSON([]byte(big))); !strings.Contains(got, `"too large"`) {
		t.Errorf("oversized document kept: %d bytes", len(got))
	}
	if got := r.Text("sk-abcdefghijklmnop"); got != audit.Redacted {
		t.Errorf("Text(api key) = %q", got)
	}
	if got := r.Text("bad\xffutf8"); got != "bad\uFFFDutf8" {
		t.Errorf("Text(invalid UTF-8) = %q", got)
	}
}

// FuzzRedact checks that redaction never panics, always yields valid JSON,
// and never lets the value of a secret key through.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{`{"password":"hunter2hunter2"}`, `{"a":[{"token":"t0k3n-value"}]}`, `"Bearer xyzxyzxyz"`, `[1,2,{"x":null}]`, `{"k":"\u00e9\u00e9"}`, `nope`} {
		f.Add(s)
	}
	r := audit.DefaultRedactor()
	f.Fuzz(func(t *testing.T, in string) {
		out := r.JSON([]byte(in))
		if !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q is not valid JSON", in, out)
		}
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		var got map[string]any
		if json.Unmarshal(out, &got) != nil {
			return // replaced by a summary
		}
		for k, x := range m {
			s, isString := x.(string)
			lk := strings.ToLower(k)
			secret := strings.Contains(lk, "password") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") && !strings.HasSuffix(lk, "tokens")
			if !secret || !isString || len(s) < 8 || strings.Count(in, s) != 1 {
				continue
			}
			if strings.Contains(string(out), s) {
				t.Fatalf("secret %q of key %q is still in %s", s, k, out)
			}
		}
	})
}

// TestDeniedAtEachLayerIsAudited resolves a grant under a policy, a missing
// user grant and a revoked one; each denial carries the right sentinel and,
// recorded as a host function would, lands in the audit log as a denial with
// its layer.
func TestDeniedAtEachLayerIsAudited(t *testing.T) {
	db := openDB(t, "")
	l := openLog(t, db)
	pol, err := capability.ParsePolicy("policy.toml", []byte("[ceilings]\nnetwork = [\"*.corp.example\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	req := capability.Request{Network: []string{"*.corp.example", "api.github.com"}, EnvRead: []string{"HOME"}, SecretsAccess: []string{"gh"}}
	user := []capability.UserGrant{
		{Capability: capability.Network, Scope: capability.ScopePersistent},
		{Capability: capability.SecretsAccess, Scope: capability.ScopePersistent, Revoked: true},
	}
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, req, user, pol, capability.Env{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		d     capability.Decision
		want  error
		layer capability.Layer
	}{
		{g.Host("api.github.com"), capability.ErrPolicyCeiling, capability.LayerPolicy},
		{g.Env("HOME"), capability.ErrNotGranted, capability.LayerUser},
		{g.Secret("gh"), capability.ErrRevoked, capability.LayerUser},
	}
	for i, tt := range tests {
		if err := tt.d.Err(); !errors.Is(err, capability.ErrDenied) || !errors.Is(err, tt.want) {
			t.Errorf("decision %d: %v, want %v", i, err, tt.want)
		}
		if err := l.RecordExercise(tt.d.Record("p", "t", "inv-1")); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.RecordExercise(g.Host("api.corp.example").Record("p", "t", "inv-1")); err != nil {
		t.Fatal(err)
	}
	rows := entries(t, db, audit.Filter{Invocation: "inv-1"})
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for i, e := range rows {
		var b struct {
			Capability capability.Name  `json:"capability"`
			Allowed    bool             `json:"allowed"`
			Layer      capability.Layer `json:"layer"`
		}
		if err := json.Unmarshal(e.Body, &b); err != nil {
			t.Fatal(err)
		}
		if i < 3 && (b.Allowed || b.Layer != tests[i].layer || b.Capability != tests[i].d.Capability()) {
			t.Errorf("row %d = %+v, want a denial by %s", i, b, tests[i].layer)
		}
		if i == 3 && !b.Allowed {
			t.Errorf("row %d: the granted host was recorded as denied", i)
		}
	}
	inv := audit.Invocation{ID: "inv-2", Pack: "p", Tool: "t"}
	_, gateErr := capability.NewGate().Decide(context.Background(), capability.Pending{Invocation: "inv-2", Pack: "p", Tool: "t"})
	inv.Denied(gateErr)
	if _, err := l.RecordInvocation(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	e := entries(t, db, audit.Filter{Invocation: "inv-2"})
	if len(e) != 1 || !strings.Contains(string(e[0].Body), `"decision":"deny"`) || !strings.Contains(string(e[0].Body), `"status":"denied"`) {
		t.Errorf("denied call row = %+v", e)
	}
}
