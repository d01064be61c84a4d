package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadToken: the token of packs serve and packs mcp --http comes from
// --token-file, else from the command's environment variable; a missing or
// empty file is an error naming the flag.
func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := map[string]string{serveTokenEnv: " from-env\n", mcpTokenEnv: "mcp-env"}
	c := &cli{getenv: func(k string) string { return env[k] }}
	tests := []struct {
		name, env, file string
		want            string
		wantErr         string
	}{
		{"serve, environment", serveTokenEnv, "", "from-env", ""},
		{"mcp, environment", mcpTokenEnv, "", "mcp-env", ""},
		{"unset environment", "PACKS_NO_SUCH_TOKEN", "", "", ""},
		{"file wins over environment", serveTokenEnv, write("tok", "  from-file\n"), "from-file", ""},
		{"empty file", mcpTokenEnv, write("empty", " \n"), "", "is empty"},
		{"missing file", serveTokenEnv, filepath.Join(dir, "missing"), "", "--token-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.readToken(tt.env, tt.file)
			if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("readToken(%s, %q) = %q, %v; want %q, error containing %q", tt.env, tt.file, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
