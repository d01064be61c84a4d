package main

import "testing"

func TestOneShotCommand(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"run", "text-kit", "slugify"}, true},
		{[]string{"--home", "/h", "run", "text-kit", "slugify"}, true},
		{[]string{"--home=/h", "--policy", "p.toml", "list", "--json"}, true},
		{[]string{"validate", "."}, true},
		{[]string{"serve"}, false},
		{[]string{"--home", "run", "serve"}, false}, // a home named run
		{[]string{"mcp", "--tools", "run"}, false},
		{[]string{"chat", "--message", "run"}, false},
		{[]string{"--", "run"}, false},
		{[]string{}, false},
	}
	for _, c := range cases {
		if got := oneShotCommand(c.args); got != c.want {
			t.Errorf("oneShotCommand(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
