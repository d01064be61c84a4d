package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/store"
)

// TestListFromRecordedSummaries: packs list records what it loaded of each
// intact pack, and the next listing shows the very same JSON without
// loading the packs; a pack whose files changed since is loaded again and
// shown as modified, never with what was recorded for its old content.
func TestListFromRecordedSummaries(t *testing.T) {
	home := installedWeather(t, "network")
	first := withHome(t, home, "list", "--json").mustCode(t, exitOK).stdout
	var got []packJSON
	if err := json.Unmarshal([]byte(first), &got); err != nil || len(got) != 1 {
		t.Fatalf("%v\n%s", err, first)
	}
	if w := got[0]; w.Description == "" || len(w.Tools) == 0 || len(w.Requested) == 0 || len(w.Requested[0].Resources) == 0 {
		t.Fatalf("weather shows too little for the comparison to mean anything: %+v", w)
	}
	if again := withHome(t, home, "list", "--json").mustCode(t, exitOK).stdout; again != first {
		t.Fatalf("list from recorded summaries:\n%s\nwant what loading showed:\n%s", again, first)
	}

	// Prove the second listing read the record: change it behind list's back.
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.SQL().ExecContext(ctx, `UPDATE pack_summaries SET summary = '{"description":"recorded"}'`)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("recorded summaries: %d rows, %v; want weather's", n, err)
	}
	db.Close()
	if out := withHome(t, home, "list", "--json").mustCode(t, exitOK).stdout; !strings.Contains(out, `"description": "recorded"`) {
		t.Fatalf("list did not use the recorded summary:\n%s", out)
	}

	// Tampered files: status modified, and what the files say now.
	skill := filepath.Join(home, "packs", "weather", "SKILL.md")
	data, err := os.ReadFile(skill)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte(strings.Replace(string(data), "description: ", "description: Tampered. ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := withHome(t, home, "list", "--json").mustCode(t, exitOK).stdout
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	if w := got[0]; w.Status != "modified" || !strings.HasPrefix(w.Description, "Tampered. ") {
		t.Errorf("tampered weather: status %s, description %q; want modified and the files' description", w.Status, w.Description)
	}
}
