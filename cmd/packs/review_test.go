package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/store"
)

// ageGrants makes every grant in home's packs.db days old.
func ageGrants(t *testing.T, home string, days int) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Now().Add(-time.Duration(days) * 24 * time.Hour).UTC().Format(store.TimeFormat)
	if _, err := db.SQL().Exec(`UPDATE grants SET granted_at = ?`, at); err != nil {
		t.Fatal(err)
	}
}

// TestReviewCommand: packs review lists the grants the policy's [review]
// says are due, keeps or revokes them by flag, and refuses a decision
// about a grant that is not due.
func TestReviewCommand(t *testing.T) {
	home := installedWeather(t, "network,env_read")
	pol := writePolicy(t, "[review]\nafter = \"90d\"\nlapse = true\n")
	due := func() []app.DueGrant {
		t.Helper()
		r := withHome(t, home, "--policy", pol, "review", "--json").mustCode(t, 0)
		var out []app.DueGrant
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("review --json: %v\n%s", err, r.stdout)
		}
		return out
	}
	if got := due(); len(got) != 0 {
		t.Fatalf("fresh grants due: %+v", got)
	}
	ageGrants(t, home, 120)
	if got := due(); len(got) != 2 || !got[0].Lapsed {
		t.Fatalf("grants of 120 days: due %+v, want 2, lapsed", got)
	}
	withHome(t, home, "--policy", pol, "review", "--keep", "weather:network", "--revoke", "weather:env_read").mustCode(t, 0)
	if got := due(); len(got) != 0 {
		t.Errorf("after keep and revoke: due %+v", got)
	}
	lock, _ := os.ReadFile(filepath.Join(home, "packs.lock"))
	if !strings.Contains(string(lock), "network = { granted = true") || strings.Contains(string(lock), "env_read = { granted = true") {
		t.Errorf("packs.lock after keep network, revoke env_read:\n%s", lock)
	}
	withHome(t, home, "--policy", pol, "review", "--keep", "weather:network").mustCode(t, exitUsage).oneLineError(t)
	withHome(t, home, "--policy", pol, "review", "--keep", "weather").mustCode(t, exitUsage).oneLineError(t)
	if r := withHome(t, home, "review").mustCode(t, 0); !strings.Contains(r.stdout, "no grant is due") {
		t.Errorf("review without a policy:\n%s", r.stdout)
	}
}
