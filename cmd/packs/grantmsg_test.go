package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hostsPack is a pack that asks for three hosts.
func hostsPack(t *testing.T) string {
	t.Helper()
	files := weatherFiles("1.0.0")
	files["skill.toml"] = strings.Replace(files["skill.toml"], `network = ["api.weather.example"]`, `network = ["docs.rs", "crates.io", "*.github.com"]`, 1)
	dir := filepath.Join(t.TempDir(), "weather")
	writeFiles(t, dir, files)
	return dir
}

// grantedPart is what a message line says was granted: the text after
// "granted" on the first line that holds word and "granted".
func grantedPart(t *testing.T, out, word string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "granted"); i >= 0 && strings.Contains(l, word) {
			return l[i:]
		}
	}
	t.Fatalf("no line says what %s was granted:\n%s", word, out)
	return ""
}

// TestGrantMessagesNameEffective: every message that says something was
// granted names what a call then holds, as packs capabilities does: a
// bare "network" grant holds every host the pack asked for, and a policy
// that pre-approves one host of three grants that one.
func TestGrantMessagesNameEffective(t *testing.T) {
	t.Run("packs grant", func(t *testing.T) {
		home := t.TempDir()
		withHome(t, home, "add", hostsPack(t), "--grant", "none", "--yes").mustCode(t, exitOK)
		out := withHome(t, home, "grant", "weather", "network").mustCode(t, exitOK).stdout
		got := grantedPart(t, out, "network")
		for _, h := range []string{"docs.rs", "crates.io", "*.github.com"} {
			if !strings.Contains(got, h) {
				t.Errorf("the message does not name %s, which the grant holds: %q", h, got)
			}
		}
	})
	t.Run("packs add with a pre-approval of one host", func(t *testing.T) {
		pol := writePolicy(t, "[[preapprove]]\npack = \"weather\"\ngrants = [\"network=docs.rs\"]\n")
		home := t.TempDir()
		out := withHome(t, home, "--policy", pol, "add", hostsPack(t), "--grant", "none").mustCode(t, exitOK).stdout
		for _, l := range strings.Split(out, "\n") {
			i := strings.Index(l, "pre-approved")
			if i < 0 {
				continue
			}
			// What the line says is granted: after "granted" on a row
			// that also lists what was asked for.
			if g := strings.Index(l, "granted"); g >= 0 {
				i = g
			}
			if said := l[i:]; !strings.Contains(said, "docs.rs") || regexp.MustCompile(`crates\.io|github\.com`).MatchString(said) {
				t.Errorf("a line says more or less was pre-approved than docs.rs: %q", l)
			}
		}
		if !strings.Contains(out, "pre-approved") {
			t.Fatalf("add does not say what the policy pre-approved:\n%s", out)
		}
	})
}
