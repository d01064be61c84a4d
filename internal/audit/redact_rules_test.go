package audit

import (
	"slices"
	"testing"
)

// TestRedactionRulesLoad loads the embedded gitleaks rule set: every rule
// compiles, and the ones packs relies on are there. Patterns compile on
// first use, so this is where a broken one is found.
func TestRedactionRulesLoad(t *testing.T) {
	rs, err := loadRules()
	if err != nil {
		t.Fatal(err)
	}
	compiles := func(what string, p pattern) {
		t.Helper()
		if _, err := p(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	allowlists := func(what string, as []allowlist) {
		t.Helper()
		for _, a := range as {
			for _, p := range a.regexes {
				compiles(what+" allowlist", p)
			}
		}
	}
	allowlists("global", rs.global)
	var ids []string
	for _, r := range rs.rules {
		ids = append(ids, r.id)
		compiles(r.id, r.pattern)
		allowlists(r.id, r.allow)
	}
	if len(ids) < 200 {
		t.Errorf("%d rules loaded, want the whole gitleaks set", len(ids))
	}
	for _, want := range []string{"github-pat", "jwt", "huggingface-access-token", "gcp-api-key", "aws-access-token", "slack-bot-token",
		"private-key", "generic-api-key", "authorization-header", "bearer-token", "url-password", "secret-assignment"} {
		if !slices.Contains(ids, want) {
			t.Errorf("rule %q is missing", want)
		}
	}
	if len(rs.global) == 0 {
		t.Error("the global allowlist was not loaded")
	}
}
