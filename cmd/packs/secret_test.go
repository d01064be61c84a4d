package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
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

// TestSecretEndToEnd: the example pack calls an API on loopback with a
// token the host injects once the person grants it; without the grant the
// API refuses it; without the value the error names packs secret set. The
// value is in no output, no error, no byte of packs.db (and its WAL) and
// no line of the exported audit log.
func TestSecretEndToEnd(t *testing.T) {
	const token = "tok_EndToEnd_0f1e2d3c4b5a69788796"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"unauthorized"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"user": "octocat", "echo": r.Header.Get("Authorization")})
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	toml := fmt.Sprintf("[capabilities]\nnetwork = [\"127.0.0.1:*\"]\nsecrets_access = [\"API_TOKEN\"]\n\n[[secrets.inject]]\nname = \"API_TOKEN\"\nhost = %q\nheader = \"Authorization\"\nvalue = \"Bearer {{secret.API_TOKEN}}\"\n", host)
	home := t.TempDir()
	var all bytes.Buffer
	keep := func(r result) result { all.WriteString(r.stdout + r.stderr); return r }
	input := fmt.Sprintf(`{"url": %q}`, api.URL+"/user")
	run := func() result { return keep(withHome(t, home, "run", "gh", "t", "--input", input, "--yes")) }

	keep(secretCLI(t, home, token, "secret", "set", "API_TOKEN")).mustCode(t, exitOK)
	keep(withHome(t, home, "add", toolPack(t, "gh", "plugin_http.wasm", "get", toml), "--grant", "network", "--yes")).mustCode(t, exitOK)
	if r := run().mustCode(t, exitOK); !strings.Contains(r.stdout, "unauthorized") {
		t.Errorf("without the secret granted: %q, want the API's 401", r.stdout)
	}
	keep(withHome(t, home, "grant", "gh", "secrets_access=API_TOKEN")).mustCode(t, exitOK)
	if r := run().mustCode(t, exitOK); !strings.Contains(r.stdout, "octocat") || !strings.Contains(r.stdout, "[secret]") {
		t.Errorf("granted: %q, want the user and a masked echo", r.stdout)
	}
	// A chat: the model calls the tool; what it is sent back, and what the
	// chat keeps, holds no value.
	model := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "enable_tools", Arguments: `{"pack_id":"gh"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "gh__t", Arguments: input}}},
		llmtest.Turn{Text: "You are octocat."},
	)
	defer model.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	keep(withHome(t, home, "chat", "--base-url", model.OpenAIURL(), "--model", "m1", "--attach", "gh", "--message", "who am I?", "--yes")).mustCode(t, exitOK)
	reqs := model.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "octocat") {
		t.Fatalf("the model was not sent the tool's result: %d requests", len(reqs))
	}
	for i, r := range reqs {
		if bytes.Contains(r.Body, []byte(token)) {
			t.Errorf("request %d to the model holds the value", i)
		}
	}
	keep(secretCLI(t, home, "", "secret", "rm", "API_TOKEN")).mustCode(t, exitOK)
	if line := run().mustCode(t, exitFailure).oneLineError(t); !strings.Contains(line, "packs secret set API_TOKEN") {
		t.Errorf("missing secret: %q, want it to name packs secret set API_TOKEN", line)
	}
	keep(withHome(t, home, "audit", "export"))
	if all.Len() == 0 || strings.Contains(all.String(), token) {
		t.Errorf("the value was printed:\n%s", all.String())
	}
	files, _ := filepath.Glob(filepath.Join(home, "packs.db*"))
	if len(files) == 0 {
		t.Fatal("no packs.db")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(token)) {
			t.Errorf("%s holds the value", f)
		}
	}
}
