package main

import (
	"strings"
	"testing"
)

// TestCompletionOfNames: the shell completions offer the installed packs, a
// pack's tools after run PACK, and the stored chats; on a home that does
// not exist they offer nothing and create nothing.
func TestCompletionOfNames(t *testing.T) {
	home := t.TempDir()
	withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, exitOK)
	withHome(t, home, "add", notesPack, "--grant", "none", "--yes").mustCode(t, exitOK)
	complete := func(home string, args ...string) []string {
		t.Helper()
		r := withHome(t, home, append([]string{"__complete"}, args...)...).mustCode(t, exitOK)
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if l == "" || strings.HasPrefix(l, ":") {
				continue
			}
			name, _, _ := strings.Cut(l, "\t")
			names = append(names, name)
		}
		return names
	}
	if got := strings.Join(complete(home, "run", "e"), ","); got != "echo" {
		t.Errorf("run e: %q", got)
	}
	if got := strings.Join(complete(home, "info", ""), ","); got != "echo,notes" {
		t.Errorf("info: %q", got)
	}
	if got := strings.Join(complete(home, "run", "echo", ""), ","); got != "t" {
		t.Errorf("run echo: %q", got)
	}
	if got := strings.Join(complete(home, "chat", "--attach", "n"), ","); got != "notes" {
		t.Errorf("chat --attach n: %q", got)
	}
	if got := complete(home, "remove", "echo", ""); len(got) != 0 {
		t.Errorf("remove echo: %q", got)
	}
	fresh := t.TempDir() + "/none"
	if got := complete(fresh, "run", ""); len(got) != 0 {
		t.Errorf("a home that does not exist: %q", got)
	}
}
