package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretCLI runs the CLI with stdin from input (not a terminal).
func secretCLI(t *testing.T, home, input string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: bufio.NewReader(strings.NewReader(input)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := c.run(context.Background(), append([]string{"--home", home}, args...))
	return result{out.String(), errb.String(), code}
}

// TestSecretCommands: set reads stdin (never an argument), list shows
// names and never values, rm removes; no output and no file holds the
// value in the clear.
func TestSecretCommands(t *testing.T) {
	home := t.TempDir()
	const value = "s3cr3t-CLI-value-0123456789"
	var all bytes.Buffer
	keep := func(r result) result { all.WriteString(r.stdout + r.stderr); return r }

	keep(secretCLI(t, home, value+"\n", "secret", "set", "API_TOKEN")).mustCode(t, exitOK)
	r := keep(secretCLI(t, home, "", "secret", "list", "--json")).mustCode(t, exitOK)
	var list []struct {
		Name  string `json:"name"`
		SetAt string `json:"set_at"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0].Name != "API_TOKEN" || list[0].SetAt == "" {
		t.Fatalf("secret list --json = %q (%v)", r.stdout, err)
	}
	r = keep(secretCLI(t, home, "", "secret", "list")).mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "API_TOKEN") {
		t.Errorf("secret list = %q, want the name", r.stdout)
	}
	// A value is never an argument.
	keep(secretCLI(t, home, "", "secret", "set", "API_TOKEN", value)).mustCode(t, exitUsage)
	keep(secretCLI(t, home, "", "secret", "set", "OTHER")).mustCode(t, exitUsage) // empty stdin
	keep(secretCLI(t, home, "x", "secret", "set", "1BAD")).mustCode(t, exitUsage)

	files, _ := filepath.Glob(filepath.Join(home, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(value)) {
			t.Errorf("%s holds the value in the clear", f)
		}
	}
	keep(secretCLI(t, home, "", "secret", "rm", "API_TOKEN")).mustCode(t, exitOK)
	keep(secretCLI(t, home, "", "secret", "rm", "API_TOKEN")).mustCode(t, exitFailure)
	r = keep(secretCLI(t, home, "", "secret", "list", "--json")).mustCode(t, exitOK)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("secret list --json after rm = %q, want []", r.stdout)
	}
	if strings.Contains(all.String(), value) {
		t.Errorf("the value was printed:\n%s", all.String())
	}
}
