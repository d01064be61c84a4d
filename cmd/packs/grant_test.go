package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/store"
)

// installedWeather installs the weather pack (network + env_read) with
// --grant and returns the home.
func installedWeather(t *testing.T, grant string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "add", weatherPack(t, "1.0.0"), "--grant", grant).mustCode(t, 0)
	return home
}

// capsJSON runs packs capabilities --json.
func capsJSON(t *testing.T, home string, args ...string) reportOut {
	t.Helper()
	r := withHome(t, home, append([]string{"capabilities", "weather", "--json"}, args...)...).mustCode(t, 0)
	var out reportOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("capabilities --json: %v\n%s", err, r.stdout)
	}
	return out
}

func capOf(t *testing.T, rep reportOut, n capability.Name) capabilityOut {
	t.Helper()
	for _, c := range rep.Capabilities {
		if c.Capability == n {
			return c
		}
	}
	t.Fatalf("no %s in %+v", n, rep)
	return capabilityOut{}
}

func TestGrantRevokeCapabilities(t *testing.T) {
	home := installedWeather(t, "network")

	rep := capsJSON(t, home)
	if c := capOf(t, rep, capability.Network); !c.Held || c.Scope != capability.ScopePersistent || strings.Join(c.Effective, ",") != "api.weather.example" {
		t.Errorf("network after add --grant network: %+v", c)
	}
	if c := capOf(t, rep, capability.EnvRead); c.Held || !strings.Contains(c.Denied, "has not granted") {
		t.Errorf("env_read after add: %+v", c)
	}

	r := withHome(t, home, "grant", "weather", "env_read=WEATHER_API_KEY").mustCode(t, 0)
	if !strings.Contains(r.stdout, "granted env_read=WEATHER_API_KEY to weather (persistent)") {
		t.Errorf("grant output: %q", r.stdout)
	}
	if c := capOf(t, capsJSON(t, home), capability.EnvRead); !c.Held || strings.Join(c.Effective, ",") != "WEATHER_API_KEY" {
		t.Errorf("env_read after a narrow grant: %+v", c)
	}

	r = withHome(t, home, "revoke", "weather", "network").mustCode(t, 0)
	if !strings.Contains(r.stdout, "revoked network from weather") {
		t.Errorf("revoke output: %q", r.stdout)
	}
	if c := capOf(t, capsJSON(t, home), capability.Network); c.Held || !strings.Contains(c.Denied, "revoked") {
		t.Errorf("network after revoke: %+v", c)
	}

	// A chat grant applies in its chat only.
	withHome(t, home, "grant", "weather", "network=chat", "--chat", "c1").mustCode(t, 0)
	if c := capOf(t, capsJSON(t, home, "--chat", "c1"), capability.Network); !c.Held || c.Scope != capability.ScopeChat {
		t.Errorf("network in chat c1: %+v", c)
	}
	if c := capOf(t, capsJSON(t, home, "--chat", "c2"), capability.Network); c.Held {
		t.Errorf("network leaked into chat c2: %+v", c)
	}

	text := withHome(t, home, "capabilities", "weather").mustCode(t, 0).stdout
	for _, want := range []string{"policy: none", "network: DENIED", "env_read: held (persistent)", "requested: WEATHER_*", "effective: WEATHER_API_KEY"} {
		if !strings.Contains(text, want) {
			t.Errorf("capabilities lacks %q:\n%s", want, text)
		}
	}

	// Removing the pack forgets its grants: a reinstall starts from --grant.
	withHome(t, home, "remove", "weather").mustCode(t, 0)
	withHome(t, home, "add", weatherPack(t, "1.0.0"), "--grant", "none").mustCode(t, 0)
	for _, c := range capsJSON(t, home).Capabilities {
		if c.Held {
			t.Errorf("%s held after remove and a reinstall with --grant none", c.Capability)
		}
	}
}

func TestGrantUsageErrors(t *testing.T) {
	home := installedWeather(t, "none")
	tests := [][]string{
		{"grant", "weather"},
		{"grant", "weather", "teleport"},
		{"grant", "weather", "secrets_access"},
		{"grant", "weather", "network=evil.example"},
		{"grant", "weather", "network=https://api.weather.example"},
		{"grant", "weather", "network=chat"},
		{"grant", "weather", "network", "--scope", "forever"},
		{"grant", "nosuchpack", "network"},
		{"revoke", "weather", "teleport"},
		{"revoke", "weather"},
		{"capabilities", "nosuchpack"},
		{"capabilities"},
	}
	for _, args := range tests {
		withHome(t, home, args...).mustCode(t, exitUsage).oneLineError(t)
	}
	for _, c := range capsJSON(t, home).Capabilities {
		if c.Held {
			t.Errorf("%s held after refused grants", c.Capability)
		}
	}
}

func writePolicy(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicyCommands(t *testing.T) {
	home := installedWeather(t, "all")
	pol := writePolicy(t, `[packs]
mandated = ["weather"]
[ceilings]
never = ["env_read"]
network = ["*.corp.example"]
timeout = "5s"
[approval]
auto_approve = ["weather__forecast"]
`)
	show := packsCLI(t, "--policy", pol, "policy", "show").mustCode(t, 0).stdout
	for _, want := range []string{"# effective policy from " + pol, "never = ['env_read']", "weather__forecast"} {
		if !strings.Contains(show, want) {
			t.Errorf("policy show lacks %q:\n%s", want, show)
		}
	}
	if out := packsCLI(t, "policy", "show").mustCode(t, 0).stdout; !strings.Contains(out, "no enterprise policy") {
		t.Errorf("policy show without a policy: %q", out)
	}
	var shown struct {
		Source string `json:"source"`
		Policy struct {
			Ceilings struct {
				Never   []string `json:"never"`
				Network []string `json:"network"`
			} `json:"ceilings"`
			Approval struct {
				AutoApprove []string `json:"auto_approve"`
			} `json:"approval"`
		} `json:"policy"`
	}
	if err := json.Unmarshal([]byte(packsCLI(t, "--policy", pol, "policy", "show", "--json").mustCode(t, 0).stdout), &shown); err != nil {
		t.Fatalf("policy show --json: %v", err)
	}
	if shown.Source != pol || !slices.Equal(shown.Policy.Ceilings.Never, []string{"env_read"}) || !slices.Equal(shown.Policy.Ceilings.Network, []string{"*.corp.example"}) || !slices.Equal(shown.Policy.Approval.AutoApprove, []string{"weather__forecast"}) {
		t.Errorf("policy show --json: %+v", shown)
	}
	if out := packsCLI(t, "policy", "show", "--json").mustCode(t, 0).stdout; !strings.Contains(out, `"policy": null`) {
		t.Errorf("policy show --json without a policy: %q", out)
	}

	check := withHome(t, home, "--policy", pol, "policy", "check", "weather").mustCode(t, 0).stdout
	for _, want := range []string{"policy: " + pol, "mandated:", "timeout 5s", "network: DENIED", "never beyond [*.corp.example]", "env_read: DENIED", "never grants env_read", "you:       allows"} {
		if !strings.Contains(check, want) {
			t.Errorf("policy check lacks %q:\n%s", want, check)
		}
	}
	// PACKS_POLICY works like --policy, and the check also takes a folder.
	var rep reportOut
	c := &cli{stdout: new(strings.Builder), stderr: new(strings.Builder), getenv: func(k string) string {
		if k == "PACKS_POLICY" {
			return pol
		}
		return ""
	}}
	out := new(strings.Builder)
	c.stdout = out
	if code := c.run(context.Background(), []string{"--home", home, "policy", "check", weatherPack(t, "2.0.0"), "--json"}); code != 0 {
		t.Fatalf("policy check of a folder: exit %d: %s", code, c.stderr)
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Policy != pol || !rep.Mandated || len(rep.Capabilities) != 2 || rep.Capabilities[0].Held {
		t.Errorf("policy check --json of a folder: %+v", rep)
	}

	withHome(t, home, "policy").mustCode(t, exitUsage).oneLineError(t)
	withHome(t, home, "policy", "check").mustCode(t, exitUsage).oneLineError(t)
}

// TestMalformedPolicyStops checks that a broken policy is never ignored: the
// command fails with one line naming the file and line.
func TestMalformedPolicyStops(t *testing.T) {
	home := installedWeather(t, "all")
	bad := writePolicy(t, "[ceilings]\nnetwork = [\"*.corp.example\"]\nnetwrk = []\n")
	lineRE := regexp.MustCompile(regexp.QuoteMeta(bad) + `:3: unknown key "ceilings.netwrk"`)
	for _, args := range [][]string{
		{"policy", "show"},
		{"policy", "check", "weather"},
		{"capabilities", "weather"},
		{"grant", "weather", "network"},
		{"list"},
		{"audit", "verify"},
	} {
		r := withHome(t, home, append([]string{"--policy", bad}, args...)...).mustCode(t, exitFailure)
		if line := r.oneLineError(t); !lineRE.MatchString(line) {
			t.Errorf("%v: error %q does not name %s:3", args, line, bad)
		}
	}
	missing := filepath.Join(t.TempDir(), "nope.toml")
	r := packsCLI(t, "--policy", missing, "policy", "show").mustCode(t, exitFailure)
	if line := r.oneLineError(t); !strings.Contains(line, missing) {
		t.Errorf("missing policy: %q", line)
	}
}

// seedAudit writes audit rows into home's packs.db as calls would.
func seedAudit(t *testing.T, home string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := audit.Open(ctx, db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i, pack := range []string{"weather", "other", "weather"} {
		if err := l.RecordExercise(capability.Exercise{Pack: pack, Tool: "t", Invocation: "i", Capability: capability.Network, Resource: "api.weather.example", Allowed: i != 1, Layer: capability.LayerPolicy, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.RecordInvocation(ctx, audit.Invocation{ID: "i", Pack: "weather", Tool: "forecast", Arguments: json.RawMessage(`{"place":"Oslo","token":"s3cr3t-t0ken"}`), Approver: "terminal", Verdict: capability.RunOnce}); err != nil {
		t.Fatal(err)
	}
}

func TestAuditCommands(t *testing.T) {
	home := installedWeather(t, "all")
	seedAudit(t, home)
	// Row 1 is the install; the seeded rows follow.

	text := withHome(t, home, "audit").mustCode(t, 0).stdout
	if n := strings.Count(strings.TrimSpace(text), "\n") + 1; n != 5 || !strings.Contains(text, "installed 1.0.0 from file://") || !strings.Contains(text, "DENIED by policy") || !strings.Contains(text, "approved by terminal (run_once), ok") {
		t.Errorf("audit text (%d lines):\n%s", n, text)
	}
	jsonl := withHome(t, home, "audit", "--json", "--pack", "weather").mustCode(t, 0).stdout
	lines := strings.Split(strings.TrimSpace(jsonl), "\n")
	if len(lines) != 4 {
		t.Fatalf("audit --json --pack weather: %d lines:\n%s", len(lines), jsonl)
	}
	for _, line := range lines {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Pack != "weather" || audit.HashEntry(e) != e.Hash {
			t.Errorf("line %q: %v", line, err)
		}
	}
	if strings.Contains(jsonl, "s3cr3t-t0ken") {
		t.Error("a secret argument reached the audit log")
	}
	if out := withHome(t, home, "audit", "--since", "1h", "--limit", "1").mustCode(t, 0).stdout; !strings.Contains(out, "weather/forecast") || strings.Count(out, "\n") != 1 {
		t.Errorf("audit --since 1h --limit 1:\n%s", out)
	}
	if out := withHome(t, home, "audit", "--since", "2999-01-01").mustCode(t, 0).stdout; out != "" {
		t.Errorf("audit --since the future: %q", out)
	}
	withHome(t, home, "audit", "--since", "last tuesday").mustCode(t, exitUsage).oneLineError(t)
	withHome(t, home, "audit", "extra").mustCode(t, exitUsage).oneLineError(t)

	ok := withHome(t, home, "audit", "verify").mustCode(t, 0).stdout
	if !strings.HasPrefix(ok, "ok: 5 rows, the chain holds (head seq 5, hash ") {
		t.Errorf("audit verify: %q", ok)
	}

	export := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(export, []byte(withHome(t, home, "audit", "--json").mustCode(t, 0).stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := packsCLI(t, "audit", "verify", "--file", export).mustCode(t, 0).stdout; out != "ok: 5 rows, the chain holds\n" {
		t.Errorf("audit verify --file: %q", out)
	}
	packsCLI(t, "audit", "verify", "--file", filepath.Join(t.TempDir(), "none.jsonl")).mustCode(t, exitUsage).oneLineError(t)

	db, err := store.Open(context.Background(), filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`UPDATE audit SET body = replace(body, '"allowed":false', '"allowed":true') WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`DELETE FROM audit WHERE seq = 4`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := withHome(t, home, "audit", "verify").mustCode(t, exitFailure)
	if !strings.Contains(r.stdout, "seq 3: edited:") || !strings.Contains(r.stdout, "seq 4: deleted:") {
		t.Errorf("audit verify after tampering:\n%s", r.stdout)
	}
	if line := r.oneLineError(t); !strings.Contains(line, "broken in 2 places") {
		t.Errorf("audit verify error: %q", line)
	}
}

// TestRunAsksAtTerminal drives packs run without --yes at a terminal: the
// terminal approver shows the call and the person's answer decides; both
// answers are audited with their approver.
func TestRunAsksAtTerminal(t *testing.T) {
	home := installedWeather(t, "all")
	runAt := func(answer string) (int, string) {
		var out, errb strings.Builder
		c := &cli{stdin: bufio.NewReader(strings.NewReader(answer)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
		code := c.run(context.Background(), []string{"--home", home, "run", "weather", "forecast", "--input", `{"place":"Oslo"}`})
		return code, errb.String()
	}
	code, stderr := runAt("n\n")
	if code != exitDenied || !strings.Contains(stderr, "+-- tool call: weather__forecast") || !strings.Contains(stderr, "capabilities: network, env_read") {
		t.Fatalf("answer n: exit %d\n%s", code, stderr)
	}
	code, stderr = runAt("y\n")
	if code == exitDenied || code == exitOK {
		t.Fatalf("answer y: exit %d (the pack's module is not real wasm, so the call must fail after the gate)\n%s", code, stderr)
	}
	jsonl := withHome(t, home, "audit", "--json", "--pack", "weather").mustCode(t, 0).stdout
	var decisions []string
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var e audit.Entry
		var b struct{ Approver, Decision string }
		if json.Unmarshal([]byte(line), &e) != nil || json.Unmarshal(e.Body, &b) != nil {
			t.Fatalf("bad line %q", line)
		}
		if e.Kind == audit.KindInvocation {
			decisions = append(decisions, b.Decision+" "+b.Approver)
		}
	}
	if strings.Join(decisions, "; ") != "deny terminal; run_once terminal" {
		t.Errorf("audited decisions = %q", decisions)
	}
}

// TestModelToolsCannotGrant: the tools a model can call are the base tools
// and pack tools; none of the base tools changes grants, policy or
// approvals, and nothing outside capability can build a Grant or Approval
// (see capability.TestZeroValuesGrantNothing).
func TestModelToolsCannotGrant(t *testing.T) {
	readOnly := map[string]bool{"open_docs": true, "read_file": true, "enable_tools": true, "exec_best_effort": true, "run_recipe": true}
	mutating := regexp.MustCompile(`(?i)grant|revoke|polic|approv|permi|capabilit|allow|trust`)
	for _, name := range chat.BaseToolNames() {
		if !readOnly[name] || mutating.MatchString(name) {
			t.Errorf("base tool %q is not a known non-mutating tool: review it, then add it here", name)
		}
	}
}

// TestRunUsesStoredGrants: packs run resolves from packs.db, so packs grant
// and revoke take effect, and a once grant serves one approved call.
func TestRunUsesStoredGrants(t *testing.T) {
	home := installedWeather(t, "none")
	mayUse := func(answer string) string {
		var out, errb strings.Builder
		c := &cli{stdin: bufio.NewReader(strings.NewReader(answer)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
		c.run(context.Background(), []string{"--home", home, "run", "weather", "forecast", "--input", `{"place":"Oslo"}`})
		m := regexp.MustCompile(`capabilities:\s+(.*)`).FindStringSubmatch(errb.String())
		if m == nil {
			t.Fatalf("no card:\n%s", errb.String())
		}
		return m[1]
	}
	if got := mayUse("n\n"); got != "none" {
		t.Errorf("before any grant: may use %q", got)
	}
	withHome(t, home, "grant", "weather", "network=once").mustCode(t, 0)
	if got := mayUse("n\n"); got != "network" {
		t.Errorf("once grant, call denied: may use %q", got)
	}
	if got := mayUse("y\n"); got != "network" {
		t.Errorf("once grant, call approved: may use %q", got)
	}
	if got := mayUse("n\n"); got != "none" {
		t.Errorf("the once grant served a second call: may use %q", got)
	}
	withHome(t, home, "grant", "weather", "network", "env_read").mustCode(t, 0)
	withHome(t, home, "revoke", "weather", "env_read").mustCode(t, 0)
	if got := mayUse("n\n"); got != "network" {
		t.Errorf("after grant and revoke: may use %q", got)
	}
}
