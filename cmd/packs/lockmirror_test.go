package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// lockEntry reads the weather entry of home's packs.lock from disk.
func lockEntry(t *testing.T, home string) dist.LockEntry {
	t.Helper()
	l, err := dist.ReadLock(filepath.Join(home, "packs.lock"))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := l.Entry("weather")
	if !ok {
		t.Fatalf("no weather in packs.lock: %+v", l.Packs)
	}
	return e
}

// lockCaps renders an entry's capabilities as "cap=res,res" for granted
// ones, in the order of capability.All().
func lockCaps(e dist.LockEntry) string {
	var out []string
	for _, n := range e.Requested() {
		c := e.Capabilities[n]
		if !c.Granted {
			if len(c.Resources) > 0 {
				out = append(out, "!"+string(n)+"="+strings.Join(c.Resources, ","))
			}
			continue
		}
		out = append(out, string(n)+"="+strings.Join(c.Resources, ","))
	}
	return strings.Join(out, " ")
}

// TestGrantRevokeMirrorLock: packs grant and revoke change packs.lock's
// [packs.capabilities] as they change packs.db, never its integrity, and the
// pack still verifies (list says ok).
func TestGrantRevokeMirrorLock(t *testing.T) {
	home := installedWeather(t, "none")
	integrity := lockEntry(t, home).Integrity
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"grant", "weather", "network"}, "network=api.weather.example"},
		{[]string{"grant", "weather", "env_read=WEATHER_API_KEY"}, "network=api.weather.example env_read=WEATHER_API_KEY"},
		{[]string{"revoke", "weather", "network"}, "env_read=WEATHER_API_KEY"},
		{[]string{"grant", "weather", "network=chat", "--chat", "c1"}, "env_read=WEATHER_API_KEY"}, // a chat grant is not persistent
		{[]string{"grant", "weather", "network=once"}, "env_read=WEATHER_API_KEY"},
		{[]string{"grant", "weather", "env_read"}, "env_read=WEATHER_*"},
		{[]string{"revoke", "weather", "env_read", "network"}, ""},
	}
	for _, s := range steps {
		withHome(t, home, s.args...).mustCode(t, 0)
		e := lockEntry(t, home)
		if got := lockCaps(e); got != s.want {
			t.Errorf("after %v: packs.lock capabilities %q, want %q", s.args, got, s.want)
		}
		if len(e.Requested()) != 2 || e.Integrity != integrity {
			t.Errorf("after %v: entry %+v lost a capability or changed integrity (was %s)", s.args, e, integrity)
		}
	}
	if got := listJSON(t, home); len(got) != 1 || got[0].Status != "ok" {
		t.Errorf("list after grants: %+v", got)
	}
	// A refused grant leaves the lock alone.
	before, _ := os.ReadFile(filepath.Join(home, "packs.lock"))
	withHome(t, home, "grant", "weather", "network=evil.example").mustCode(t, exitUsage)
	if after, _ := os.ReadFile(filepath.Join(home, "packs.lock")); !bytes.Equal(before, after) {
		t.Errorf("a refused grant changed packs.lock:\n%s", after)
	}
}

// TestRevokeModifiedPack: a revoke always reaches packs.db; the lock entry of
// a pack whose files changed is left alone, with a note.
func TestRevokeModifiedPack(t *testing.T) {
	home := installedWeather(t, "all")
	if err := os.WriteFile(filepath.Join(home, "packs", "weather", "docs", "version.md"), []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := withHome(t, home, "revoke", "weather", "network").mustCode(t, 0)
	if !strings.Contains(r.stdout, "note: ") || !strings.Contains(r.stdout, "no longer match") {
		t.Errorf("revoke of a modified pack: %q", r.stdout)
	}
	if c := capOf(t, capsJSON(t, home), capability.Network); c.Held {
		t.Errorf("network still held after revoke: %+v", c)
	}
}

func TestAddGrantResources(t *testing.T) {
	src := weatherPack(t, "1.0.0")
	tests := []struct {
		grant, want string
		code        int
	}{
		{"network=api.weather.example,env_read=WEATHER_API_KEY,WEATHER_UNITS", "network=api.weather.example env_read=WEATHER_API_KEY,WEATHER_UNITS", 0},
		{"env_read=WEATHER_API_KEY", "env_read=WEATHER_API_KEY", 0},
		{"all", "network=api.weather.example env_read=WEATHER_*", 0},
		{"network=evil.example", "", exitUsage},      // wider than the request
		{"env_read=HOME", "", exitUsage},             // outside WEATHER_*
		{"network=chat", "", exitUsage},              // an install grant is persistent
		{"network=https://x.example", "", exitUsage}, // not a host pattern
	}
	for _, tt := range tests {
		t.Run(tt.grant, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			r := withHome(t, home, "add", src, "--grant", tt.grant).mustCode(t, tt.code)
			if tt.code != 0 {
				if line := r.oneLineError(t); !strings.Contains(line, "--grant") || r.stdout != "" {
					t.Errorf("error does not name --grant, or the request was shown anyway: %q\n%s", line, r.stdout)
				}
				if _, err := os.Stat(filepath.Join(home, "packs", "weather")); err == nil {
					t.Error("installed despite the refused --grant")
				}
				return
			}
			if got := lockCaps(lockEntry(t, home)); got != tt.want {
				t.Errorf("packs.lock: %q, want %q", got, tt.want)
			}
			// packs.db agrees: what a call holds is what the lock says.
			rep := capsJSON(t, home)
			var held []string
			for _, c := range rep.Capabilities {
				if c.Held {
					held = append(held, string(c.Capability)+"="+strings.Join(c.Effective, ","))
				}
			}
			if got := strings.Join(held, " "); got != tt.want {
				t.Errorf("held: %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLockFallbackKeepsResources: a pack whose grants are not in packs.db
// falls back to its lock entry, narrowed resources included.
func TestLockFallbackKeepsResources(t *testing.T) {
	home := installedWeather(t, "env_read=WEATHER_API_KEY")
	db, err := store.Open(context.Background(), filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteGrants(context.Background(), "weather"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rep := capsJSON(t, home)
	if c := capOf(t, rep, capability.EnvRead); !c.Held || strings.Join(c.Effective, ",") != "WEATHER_API_KEY" {
		t.Errorf("env_read from the lock: %+v, want only WEATHER_API_KEY", c)
	}
	if c := capOf(t, rep, capability.Network); c.Held {
		t.Errorf("network held from the lock: %+v", c)
	}
}

func TestAddBlockedByPolicy(t *testing.T) {
	src := weatherPack(t, "1.0.0")
	digest, err := packs.Digest(src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, policy string
		blocked      bool
		reason       string
	}{
		{"by name", "[packs]\nblocked = [\"weather\"]\n", true, `pack "weather" is listed in [packs] blocked`},
		{"by digest", "[packs]\nblocked_digests = [\"" + digest + "\"]\n", true, "its content " + digest + " is listed in [packs] blocked_digests"},
		{"another name", "[packs]\nblocked = [\"other\"]\n", false, ""},
		{"another digest", "[packs]\nblocked_digests = [\"sha256:" + strings.Repeat("0", 64) + "\"]\n", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			pol := writePolicy(t, tt.policy)
			if !tt.blocked {
				withHome(t, home, "--policy", pol, "add", src, "--grant", "all").mustCode(t, 0)
				return
			}
			r := withHome(t, home, "--policy", pol, "add", src, "--grant", "all").mustCode(t, exitDenied)
			want := "packs: add weather: blocked by policy " + pol + ": " + tt.reason + ": "
			if line := r.oneLineError(t); !strings.HasPrefix(line, want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("stderr %q, stdout %q; want one line starting %q", r.stderr, r.stdout, want)
			}
			if _, err := os.Stat(filepath.Join(home, "packs.lock")); err == nil {
				t.Error("packs.lock written for a blocked pack")
			}
			if ents, _ := os.ReadDir(filepath.Join(home, "packs")); len(ents) != 0 {
				t.Errorf("packs/ holds %v", ents)
			}
			if ents, _ := os.ReadDir(filepath.Join(home, "tmp")); len(ents) != 0 {
				t.Errorf("tmp/ holds %v after a blocked add", ents)
			}
		})
	}
}

// TestAddShowsPreApproved: what the policy pre-approves is shown as granted
// and not asked about; the person is asked only about the rest.
func TestAddShowsPreApproved(t *testing.T) {
	src := weatherPack(t, "1.0.0")
	pol := writePolicy(t, "[[preapprove]]\npack = \"weather\"\ngrants = [\"network\"]\n")
	home := filepath.Join(t.TempDir(), "home")
	r := withHome(t, home, "--policy", pol, "add", src, "--grant", "none").mustCode(t, 0)
	for _, re := range []string{
		`(?m)^  network +api\.weather\.example +granted: api\.weather\.example \(pre-approved by policy ` + regexp.QuoteMeta(pol) + `\)$`,
		`(?m)^  env_read +WEATHER_\*$`,
		`(?m)^pre-approved by policy ` + regexp.QuoteMeta(pol) + `: network api\.weather\.example$`,
		`(?m)^not granted: env_read `,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("add output does not match %s:\n%s", re, r.stdout)
		}
	}
	// The pre-approval is the policy's, not the person's: not in the lock,
	// yet held.
	if got := lockCaps(lockEntry(t, home)); got != "" {
		t.Errorf("packs.lock records %q", got)
	}
	if c := capOf(t, capsJSON(t, home, "--policy", pol), capability.Network); !c.Held {
		t.Errorf("pre-approved network not held: %+v", c)
	}

	questions := func(policy ...string) string {
		var out, errb bytes.Buffer
		c := &cli{stdin: bufio.NewReader(strings.NewReader("y\ny\ny\n")), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
		args := append(append([]string{"--home", filepath.Join(t.TempDir(), "home")}, policy...), "add", src)
		if code := c.run(context.Background(), args); code != 0 {
			t.Fatalf("exit %d\n%s", code, errb.String())
		}
		return strings.Join(regexp.MustCompile(`Grant (\w+)`).FindAllString(errb.String(), -1), ",")
	}
	if got := questions("--policy", pol); got != "Grant env_read" {
		t.Errorf("with the pre-approval, asked %q", got)
	}
	if got := questions(); got != "Grant network,Grant env_read" {
		t.Errorf("without a policy, asked %q", got)
	}
}

// discoverPack writes a minimal pack parent/name with a version.
func discoverPack(t *testing.T, parent, name, version string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	writeFiles(t, dir, map[string]string{
		"SKILL.md":   "---\nname: " + name + "\ndescription: The " + name + " pack.\n---\nBody.\n",
		"skill.toml": "[skill]\nid = \"t." + name + "\"\nname = \"" + name + "\"\nversion = \"" + version + "\"\ndescription = \"t\"\napi_version = \"1.0\"\n\n[capabilities]\nnetwork = [\"" + name + ".example\"]\n",
	})
	return dir
}

func TestListDiscovered(t *testing.T) {
	home := installedWeather(t, "network")
	root1, root2 := t.TempDir(), t.TempDir()
	discoverPack(t, root1, "weather", "9.0.0") // hidden by the installed weather
	alpha1 := discoverPack(t, root1, "alpha", "1.0.0")
	alpha2 := discoverPack(t, root2, "alpha", "2.0.0") // hidden by root1's alpha
	beta := discoverPack(t, root2, "beta", "1.0.0")
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("PACKS_PATH", root2+string(filepath.ListSeparator)+missing)

	r := withHome(t, home, "list", "--json", "--dir", root1).mustCode(t, 0)
	var got []packJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	type row struct{ name, origin, status, version, dir, hiddenBy string }
	var rows []row
	for _, j := range got {
		rows = append(rows, row{j.Name, j.Origin, string(j.Status), j.Version, j.Dir, j.HiddenBy})
	}
	want := []row{
		{"weather", "installed", "ok", "1.0.0", "", ""},
		{"alpha", "discovered", "discovered", "1.0.0", alpha1, ""},
		{"weather", "discovered", "hidden", "9.0.0", filepath.Join(root1, "weather"), "installed"},
		{"beta", "discovered", "discovered", "1.0.0", beta, ""},
		{"alpha", "discovered", "hidden", "", alpha2, alpha1},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("list --json rows:\ngot  %+v\nwant %+v", rows, want)
	}
	if b := got[3]; len(b.Requested) != 1 || b.Requested[0].Capability != capability.Network || b.Requested[0].Granted ||
		!slices.Equal(b.Requested[0].Resources, []string{"beta.example"}) || b.Source != "file://"+filepath.ToSlash(beta) {
		t.Errorf("beta: %+v", b)
	}
	if !strings.Contains(r.stderr, missing) || !strings.Contains(r.stderr, "root-missing") {
		t.Errorf("the missing root was not reported:\n%s", r.stderr)
	}

	// Older fields keep their names and shapes in every element.
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, m := range raw {
		for _, k := range []string{"name", "version", "source", "integrity", "installed", "status", "tools", "requested", "granted", "origin"} {
			if _, ok := m[k]; !ok {
				t.Errorf("element %s lacks %q", m["name"], k)
			}
		}
	}
	w := got[0].Requested
	if len(w) != 2 || !slices.Equal(w[0].GrantedResources, []string{"api.weather.example"}) || !slices.Equal(w[1].Resources, []string{"WEATHER_*"}) || len(w[1].GrantedResources) != 0 {
		t.Errorf("installed weather requested: %+v", w)
	}

	text := withHome(t, home, "list", "--dir", root1).mustCode(t, 0).stdout
	for _, re := range []string{
		`(?m)^alpha +1\.0\.0 +discovered +- +network +- +file://\S+/alpha$`,
		`(?m)^alpha +- +hidden .*\(hidden by ` + regexp.QuoteMeta(alpha1) + `\)$`,
		`(?m)^weather +9\.0\.0 +hidden .*\(hidden by installed\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("list does not match %s:\n%s", re, text)
		}
	}

	// Without --dir or PACKS_PATH only installed packs are listed.
	t.Setenv("PACKS_PATH", "")
	if got := listJSON(t, home); len(got) != 1 || got[0].Origin != "installed" {
		t.Errorf("list without discovery roots: %+v", got)
	}
}
