package capability_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

const fullPolicy = `# corp policy
version = 1

[packs]
blocked = ["evil-pack"]
blocked_digests = ["sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
mandated = ["corp-guidelines"]

[ceilings]
never = ["secrets_access"]
network = ["*.corp.example"]
terminal_exec = ["git"]
filesystem_read = ["~/projects"]
env_read = ["CORP_*"]
memory_mb = 128
timeout = "1m0s"
output_bytes = 65536

[[preapprove]]
pack = "json-tools"
grants = ["network=api.corp.example", "env_read"]

[[preapprove]]
pack = "web-fetch"
digest = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
grants = ["network"]

[approval]
auto_approve = ["open_docs", "read_file", "json-tools__*"]
never_approve = ["exec_best_effort"]
unlisted = "ask"
`

func TestParsePolicy(t *testing.T) {
	p := mustPolicy(t, fullPolicy)
	if got := p.Mandated(); !slices.Equal(got, []string{"corp-guidelines"}) {
		t.Errorf("Mandated() = %v", got)
	}
	if !p.PreApproved(capability.PackRef{Name: "json-tools"}, capability.Network) || p.PreApproved(capability.PackRef{Name: "json-tools"}, capability.FilesystemRead) {
		t.Error("PreApproved(json-tools) is wrong")
	}
	if p.PreApproved(capability.PackRef{Name: "web-fetch", Digest: digestA}, capability.Network) {
		t.Error("a digest-pinned pre-approval applied to other content")
	}
	if err := p.Blocked(capability.PackRef{Name: "evil-pack"}); !errors.Is(err, capability.ErrBlocked) {
		t.Errorf("Blocked(evil-pack) = %v", err)
	}
	if p.Source() != "policy.toml" {
		t.Errorf("Source() = %q", p.Source())
	}
	var nilPolicy *capability.Policy
	if nilPolicy.Blocked(capability.PackRef{Name: "evil-pack"}) != nil || nilPolicy.Mandated() != nil || nilPolicy.Source() != "" {
		t.Error("a nil policy restricts something")
	}
}

func TestPolicyFormatRoundTrip(t *testing.T) {
	p := mustPolicy(t, fullPolicy)
	out, err := p.Format()
	if err != nil {
		t.Fatal(err)
	}
	q, err := capability.ParsePolicy("again.toml", []byte(out))
	if err != nil {
		t.Fatalf("re-parsing the formatted policy: %v\n%s", err, out)
	}
	again, err := q.Format()
	if err != nil {
		t.Fatal(err)
	}
	if strip := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }; strip(out) != strip(again) {
		t.Errorf("Format is not stable:\n%s\n---\n%s", out, again)
	}
	for _, want := range []string{"evil-pack", "*.corp.example", "memory_mb = 128", "timeout = '1m0s'", "network=api.corp.example", "json-tools__*", "never = ['secrets_access']"} {
		if !strings.Contains(out, want) {
			t.Errorf("formatted policy lacks %q:\n%s", want, out)
		}
	}
	var none *capability.Policy
	if s, err := none.Format(); err != nil || !strings.HasPrefix(s, "# no enterprise policy") {
		t.Errorf("nil policy Format() = %q, %v", s, err)
	}
}

// TestPolicyErrors checks each malformed policy fails with ErrBadPolicy and
// points at the right line.
func TestPolicyErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
	}{
		{"syntax", "[ceilings\nnetwork = []\n", 1},
		{"unknown top key", "version = 1\nceilngs = 3\n", 2},
		{"unknown table key", "[ceilings]\n\nnetwrk = [\"a.b\"]\n", 3},
		{"unknown preapprove key", "[[preapprove]]\npack = \"a\"\ngrants = [\"network\"]\nscope = \"chat\"\n", 4},
		{"type mismatch", "[ceilings]\nnetwork = \"a.b\"\n", 2},
		{"bad version", "version = 2\n", 1},
		{"bad blocked name", "[packs]\nblocked = [\n  \"ok\",\n  \"Not OK\",\n]\n", 4},
		{"bad digest", "[packs]\nblocked_digests = [\"md5:abc\"]\n", 2},
		{"blocked and mandated", "[packs]\nblocked = [\"a\"]\nmandated = [\"a\"]\n", 3},
		{"bad never", "[ceilings]\nnever = [\"network\", \"teleport\"]\n", 2},
		{"never and list", "[ceilings]\nnever = [\"network\"]\nnetwork = [\"a.b\"]\n", 3},
		{"bad host ceiling", "[ceilings]\nnetwork = [\n  \"a.b\",\n  \"https://c.d\",\n]\n", 4},
		{"glob path ceiling", "[ceilings]\nfilesystem_read = [\"~/x/*.txt\"]\n", 2},
		{"bad memory", "[ceilings]\nmemory_mb = 9000\n", 2},
		{"bad timeout", "[ceilings]\ntimeout = \"soon\"\n", 2},
		{"negative bytes", "[ceilings]\noutput_bytes = -1\n", 2},
		{"preapprove without pack", "[[preapprove]]\ngrants = [\"network\"]\n", 1},
		{"preapprove bad grant", "[[preapprove]]\npack = \"a\"\ngrants = [\"network=http://x\"]\n", 3},
		{"preapprove with scope", "[[preapprove]]\npack = \"a\"\ngrants = [\"network=chat\"]\n", 3},
		{"preapprove of never", "[ceilings]\nnever = [\"network\"]\n[[preapprove]]\npack = \"a\"\ngrants = [\"network\"]\n", 5},
		{"second preapprove bad", "[[preapprove]]\npack = \"a\"\ngrants = [\"network\"]\n[[preapprove]]\npack = \"b\"\ngrants = []\n", 4},
		{"bad class", "[approval]\nauto_approve = [\"read file\"]\n", 2},
		{"class in both", "[approval]\nauto_approve = [\"x\"]\nnever_approve = [\"x\"]\n", 3},
		{"bad unlisted", "[approval]\nunlisted = \"maybe\"\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := capability.ParsePolicy("/etc/packs/policy.toml", []byte(tt.doc))
			if !errors.Is(err, capability.ErrBadPolicy) {
				t.Fatalf("ParsePolicy error = %v, want ErrBadPolicy", err)
			}
			var pe *capability.PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *PolicyError", err)
			}
			if pe.Line != tt.line || pe.File != "/etc/packs/policy.toml" {
				t.Errorf("error at %s:%d, want line %d: %v", pe.File, pe.Line, tt.line, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestFindPolicy(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte("[packs]\nblocked = [\"x\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[packs]\nblockd = [\"x\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.toml")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "PACKS_POLICY" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name, flag, env string
		wantSource      string
		wantErr         bool
	}{
		{name: "flag", flag: good, wantSource: good},
		{name: "env", env: good, wantSource: good},
		{name: "flag wins over env", flag: good, env: bad, wantSource: good},
		{name: "named file missing", flag: missing, wantErr: true},
		{name: "env file missing", env: missing, wantErr: true},
		{name: "malformed", flag: bad, wantErr: true},
		{name: "nothing configured", wantSource: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := capability.FindPolicyIn(tt.flag, env(tt.env), missing)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if !errors.Is(err, capability.ErrBadPolicy) {
					t.Errorf("error %v does not wrap ErrBadPolicy", err)
				}
				return
			}
			if p.Source() != tt.wantSource {
				t.Errorf("source = %q, want %q", p.Source(), tt.wantSource)
			}
		})
	}
	p, err := capability.FindPolicyIn("", env(""), good)
	if err != nil || p.Source() != good {
		t.Errorf("system policy: %v, %v; want it loaded", p.Source(), err)
	}
	if _, err := capability.FindPolicyIn("", env(""), bad); !errors.Is(err, capability.ErrBadPolicy) {
		t.Errorf("malformed system policy: %v, want ErrBadPolicy", err)
	}
}

// FuzzPolicy checks that any document either parses or fails with a
// *PolicyError, never panics, that a parsed policy formats to a document that
// parses again, and that what it lets through Resolve stays under its
// network ceiling.
func FuzzPolicy(f *testing.F) {
	f.Add(fullPolicy)
	f.Add("[ceilings]\nnetwork = [\"*\"]\n")
	f.Add("[ceilings]\nnetwork = []\nnever = [\"terminal_exec\"]\n")
	f.Add("[[preapprove]]\npack = \"p\"\ngrants = [\"network=a.example.com,*.b.example.com\"]\n")
	f.Add("[approval]\nunlisted = \"deny\"\n")
	f.Add("version = 1\n[packs]\n")
	f.Add("[roles]\nclaim = \"groups\"\nadmin = [\"a\", \"sub:1\"]\ndefault = \"member\"\n")
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := capability.ParsePolicy("fuzz.toml", []byte(doc))
		if err != nil {
			var pe *capability.PolicyError
			if !errors.As(err, &pe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not a one-line *PolicyError", err)
			}
			return
		}
		out, err := p.Format()
		if err != nil {
			t.Fatalf("Format: %v", err)
		}
		if _, err := capability.ParsePolicy("formatted.toml", []byte(out)); err != nil {
			t.Fatalf("formatted policy does not parse: %v\n%s", err, out)
		}
		g, err := capability.Resolve(capability.PackRef{Name: "p"}, fullRequest, all(capability.All()...), p, testEnv)
		if err != nil {
			return
		}
		rep, err := capability.Explain(capability.PackRef{Name: "p"}, fullRequest, all(capability.All()...), p, testEnv)
		if err != nil {
			t.Fatalf("Explain after Resolve succeeded: %v", err)
		}
		for _, c := range rep.Capabilities {
			if c.Held() != g.Has(c.Capability) {
				t.Fatalf("Explain and Resolve disagree on %s", c.Capability)
			}
		}
		ceiling, capped := capability.Ceiling(p, capability.Network)
		for _, h := range []string{"api.corp.example", "api.github.com", "x.example.com", "a.b.example.com", "10.0.0.1"} {
			if !g.Host(h).Allowed() || !capped {
				continue
			}
			if !slices.ContainsFunc(ceiling, func(c string) bool {
				hp, err := capability.ParseHostPattern(c)
				return err == nil && hp.Match(h)
			}) {
				t.Fatalf("host %q allowed beyond the ceiling %v", h, ceiling)
			}
		}
	})
}

// TestPolicyDocExample keeps the reference in docs/policy.md true: its
// example parses, and means what the text says.
func TestPolicyDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```toml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/policy.md has no toml example")
	}
	p, err := capability.ParsePolicy("docs/policy.md", []byte(example))
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	req := capability.Request{Network: []string{"*"}}
	g, err := capability.Resolve(capability.PackRef{Name: "any"}, req, all(capability.Network), p, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Host("a.corp.example").Allowed() || g.Host("example.com").Allowed() {
		t.Error(`a pack asking "*" under the ceiling *.corp.example does not get exactly *.corp.example`)
	}
	if err := p.Blocked(capability.PackRef{Name: "evil-pack"}); !errors.Is(err, capability.ErrBlocked) {
		t.Errorf("evil-pack is not blocked: %v", err)
	}
}

// TestPolicyRoles: [roles] maps claim values and subjects to the roles of
// packs serve; a wrong entry is an error at its line; no [roles] maps the
// claim "roles" with no default.
func TestPolicyRoles(t *testing.T) {
	p := mustPolicy(t, "[roles]\nclaim = \"groups\"\nadmin = [\"packs-admins\", \"sub:1234\"]\nauditor = [\"security\"]\ndefault = \"member\"\n")
	got := p.Roles()
	if got.Claim != "groups" || got.Default != capability.RoleMember || len(got.Lists[capability.RoleAdmin]) != 2 || got.Lists[capability.RoleAuditor][0] != "security" || got.Lists[capability.RoleMember] != nil {
		t.Errorf("Roles() = %+v", got)
	}
	got.Lists[capability.RoleAdmin][0] = "everyone"
	if p.Roles().Lists[capability.RoleAdmin][0] != "packs-admins" {
		t.Error("Roles() hands out the policy's own lists")
	}
	out, err := p.Format()
	if err != nil || !strings.Contains(out, "[roles]") || !strings.Contains(out, "packs-admins") {
		t.Errorf("Format() = %q, %v: the roles are not shown", out, err)
	}
	var none *capability.Policy
	if r := none.Roles(); r.Claim != "roles" || r.Default != "" || len(r.Lists) != 0 {
		t.Errorf("nil policy Roles() = %+v", r)
	}
	if r := mustPolicy(t, "version = 1\n").Roles(); r.Claim != "roles" || r.Default != "" || len(r.Lists) != 0 {
		t.Errorf("no [roles]: Roles() = %+v", r)
	}
	for _, tt := range []struct {
		doc  string
		line int
	}{
		{"[roles]\ndefault = \"owner\"\n", 2},
		{"[roles]\nadmin = [\"a\", \"\"]\n", 2},
		{"[roles]\nmember = [\n\"a\",\n\"sub:\",\n]\n", 4},
		{"[roles]\nclaim = \"my groups\"\n", 2},
		{"[roles]\nviewer = [\"a\"]\n", 2},
	} {
		_, err := capability.ParsePolicy("policy.toml", []byte(tt.doc))
		var pe *capability.PolicyError
		if !errors.As(err, &pe) || pe.Line != tt.line {
			t.Errorf("%q: got %v, want a policy error at line %d", tt.doc, err, tt.line)
		}
	}
}
