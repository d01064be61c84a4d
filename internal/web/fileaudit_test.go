package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/audit"
)

// TestWorkspaceFileReadIsAudited: reading a file of a chat's workspace
// through the web app is a read a client triggers, so it goes through the
// pipeline like read_file: one audit row per read, approved by the person
// the token identifies, with the path it read; a file that is not there is
// recorded too.
func TestWorkspaceFileReadIsAudited(t *testing.T) {
	e := newEnv(t, envOptions{})
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	ws := filepath.Join(e.app.Home.WorkspacesDir(), c.ID)
	if err := os.WriteFile(filepath.Join(ws, "report.txt"), []byte("the report\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get := func(rel string) (int, string) {
		req, _ := http.NewRequest("GET", e.url+"/v1/chats/"+c.ID+"/files/"+rel, nil)
		req.Header.Set("Authorization", "Bearer "+e.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("report.txt"); code != http.StatusOK || body != "the report\n" {
		t.Fatalf("read report.txt: %d %q", code, body)
	}
	if code, _ := get("missing.txt"); code != http.StatusNotFound {
		t.Fatalf("read missing.txt: %d, want 404", code)
	}
	var rows []map[string]any
	for en, err := range audit.Entries(context.Background(), e.app.DB, audit.Filter{Kind: audit.KindInvocation}) {
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(en.Body, &m); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, m)
	}
	if len(rows) != 2 {
		t.Fatalf("audit rows %v, want one per read", rows)
	}
	for i, want := range []string{"report.txt", "missing.txt"} {
		r := rows[i]
		args, _ := json.Marshal(r["arguments"])
		if !strings.Contains(string(args), want) || r["approver"] == "" || r["decision"] != "run_once" {
			t.Errorf("row %d = %v, want a read of %s approved by the person", i, r, want)
		}
	}
	if rows[0]["status"] != "ok" || rows[1]["status"] == "ok" {
		t.Errorf("statuses %v and %v, want ok then a failure", rows[0]["status"], rows[1]["status"])
	}
}
