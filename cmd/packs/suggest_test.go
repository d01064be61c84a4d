package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUnknownPackDidYouMean: every command that takes a pack name answers
// a misspelt one with the installed pack it is closest to, and keeps its
// exit code; a name close to none gets no guess.
func TestUnknownPackDidYouMean(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "add", weatherPack(t, "1.0.0"), "--yes").mustCode(t, 0)
	for _, args := range [][]string{
		{"info", "waether"},
		{"remove", "waether"},
		{"enable", "waether"},
		{"disable", "waether"},
		{"run", "waether", "forecast", "--input", "{}"},
		{"grant", "waether", "network"},
		{"revoke", "waether", "network"},
		{"capabilities", "waether"},
		{"update", "waether"},
		{"bundle", "export", filepath.Join(t.TempDir(), "b.tgz"), "waether"},
		{"recipe", "list", "waether"},
		{"chat", "--attach", "waether", "--message", "hi"},
		{"agent", "create", "a1", "--capability", "waether"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			r := withHome(t, home, args...)
			if r.code == 0 {
				t.Fatalf("exit 0 for an unknown pack:\n%s", r.stderr)
			}
			if line := r.oneLineError(t); !strings.HasSuffix(line, "; did you mean weather?") {
				t.Errorf("no suggestion: %s", line)
			}
			if far := withHome(t, home, slices.Replace(slices.Clone(args), slices.Index(args, "waether"), slices.Index(args, "waether")+1, "qqqqqq")...); far.code != r.code || strings.Contains(far.stderr, "did you mean") {
				t.Errorf("a name close to no pack: exit %d (want %d), %s", far.code, r.code, far.stderr)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"weather", "web-reader", "json-tools", "noop", "notes"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"waether", []string{"weather"}},
		{"web-readr", []string{"web-reader"}},
		{"json", []string{"json-tools"}},
		{"note", []string{"notes", "noop"}},
		{"Weather", []string{"weather"}},
		{"zzzzzz", nil},
	} {
		if got := suggest(c.name, known); !slices.Equal(got, c.want) {
			t.Errorf("suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
