package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

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

// fake makes a deterministic, random-looking token of n characters from
// alphabet, as real keys look (the rules check entropy).
func fake(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, 42))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// TestRedactSecretsInsideStrings is defect 8 of issue 11: secrets inside a
// longer string value reached the audit log in clear. Each shape must be
// masked wherever it sits in the string, in Text and inside JSON, while
// the text around it is kept.
func TestRedactSecretsInsideStrings(t *testing.T) {
	bearer := fake(1, 40, alnum)
	ghp := "ghp_" + fake(2, 36, alnum)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	hf := "hf_" + fake(3, 34, letters)
	gcp := "AIza" + fake(4, 35, alnum+"-_")
	akia := "AKIA" + fake(5, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
	slack := "xoxb-" + fake(6, 12, "0123456789") + "-" + fake(7, 13, "0123456789") + "-" + fake(8, 24, alnum)
	openai := "sk-proj-" + fake(9, 48, alnum)
	pass := fake(10, 14, alnum)
	tests := []struct {
		name, in, secret, kept string
	}{
		{"bearer header in an HTTP request", "GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer " + bearer + "\r\nAccept: */*", bearer, "Host: api.example.com"},
		{"bearer header in a curl command", `curl -s -H "Authorization: Bearer ` + bearer + `" https://api.example.com/v1/me`, bearer, "https://api.example.com/v1/me"},
		{"bearer in a sentence", "retrying with bearer " + bearer + " after 401", bearer, "after 401"},
		{"token= in a query string", "https://api.github.com/user?token=" + ghp + "&page=2", ghp, "https://api.github.com/user"},
		{"github token in a clone URL", "git clone https://x-access-token:" + ghp + "@github.com/o/r.git", ghp, "github.com/o/r.git"},
		{"jwt in a cookie", "Cookie: theme=dark; session=" + jwt + "; Path=/", jwt, "theme=dark"},
		{"jwt alone in prose", "the server answered with " + jwt + " and closed", jwt, "and closed"},
		{"hugging face token", "export HF_TOKEN=" + hf + " && python train.py", hf, "python train.py"},
		{"hugging face token, no assignment", "login with " + hf + " then push", hf, "then push"},
		{"google api key in a URL", "https://maps.googleapis.com/maps/api/geocode/json?address=Oslo&key=" + gcp, gcp, "address=Oslo"},
		{"google api key in prose", "use " + gcp + " for maps", gcp, "for maps"},
		{"aws access key id", "[default]\naws_access_key_id = " + akia + "\nregion = eu-north-1", akia, "region = eu-north-1"},
		{"slack bot token", "posting to #ops with " + slack, slack, "posting to #ops"},
		{"openai key in an env line", "OPENAI_API_KEY=" + openai + " MODEL=gpt", openai, "MODEL=gpt"},
		{"password in a database URL", "postgres://app:" + pass + "@db.internal:5432/app", pass, "db.internal:5432/app"},
		{"password= in a command", "mysql --host db --password=" + pass + " app", pass, "--host db"},
		{"private key block", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "key: "},
	}
	r := audit.Redactor{MaxValue: 4096, MaxDepth: 8, MaxTotal: 1 << 20}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Text(tt.in)
			if strings.Contains(got, tt.secret) || !strings.Contains(got, audit.Redacted) {
				t.Errorf("Text(%q) = %q: the secret is still there", tt.in, got)
			}
			if !strings.Contains(got, tt.kept) {
				t.Errorf("Text(%q) = %q: lost the text around the secret (%q)", tt.in, got, tt.kept)
			}
			doc, _ := json.Marshal(map[string]any{"cmd": tt.in, "args": []string{"x", tt.in}, tt.in: 1})
			if out := r.JSON(doc); strings.Contains(string(out), tt.secret) {
				t.Errorf("JSON(%s) = %s: the secret is still there", doc, out)
			}
		})
	}
	// Ordinary text stays as it was.
	for _, s := range []string{
		"https://api.example.com/v1/items?page=2&sort=name",
		"max_tokens=100 temperature=0.2",
		"the bearer of bad news",
		"Authorization required",
		"network h1.example allowed",
		"/workspace/out/report.md",
		"denied: api.github.com is beyond the ceiling *.corp.example",
		"a key: value pair",
	} {
		if got := r.Text(s); got != s {
			t.Errorf("Text(%q) = %q: ordinary text was changed", s, got)
		}
	}
}

// FuzzRedactText puts known secrets between fuzzed text: whatever
// surrounds them, none may come out of Text, and the output is valid UTF-8.
func FuzzRedactText(f *testing.F) {
	for _, s := range []string{"", "token=", "Authorization: Bearer", "https://u:p@h/", "ey", "\xff\xfe", strings.Repeat("a", 300)} {
		f.Add(s, s)
	}
	secrets := []string{
		"ghp_" + fake(2, 36, alnum),
		"hf_" + fake(3, 34, letters),
		"AIza" + fake(4, 35, alnum),
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	}
	r := audit.DefaultRedactor()
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, secret := range secrets {
			out := r.Text(before + " " + secret + " " + after)
			if strings.Contains(out, secret) {
				t.Fatalf("Text(%q + secret + %q) kept %s:\n%q", before, after, secret, out)
			}
			if !utf8.ValidString(out) {
				t.Fatalf("Text output is not valid UTF-8: %q", out)
			}
		}
	})
}

// BenchmarkRedactRow is the redaction one audit row pays: an exercise's
// resource and reason, and an invocation's arguments.
func BenchmarkRedactRow(b *testing.B) {
	r := audit.DefaultRedactor()
	args := []byte(`{"url":"https://api.example.com/v1/items?page=2","headers":{"Accept":"application/json"},"note":"fetch the weather for Oslo and summarise it in two sentences"}`)
	for b.Loop() {
		r.Text("https://h1.example/forecast?place=Oslo")
		r.Text("granted by the user for this pack")
		r.JSON(args)
	}
}
