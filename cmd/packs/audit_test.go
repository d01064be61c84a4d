package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
)

// verifyJSON is the shape of packs audit verify --json.
type verifyJSON struct {
	OK       bool   `json:"ok"`
	Rows     int64  `json:"rows"`
	HeadSeq  int64  `json:"head_seq"`
	Keyed    bool   `json:"keyed"`
	Advice   string `json:"advice"`
	Warnings []string
	Breaks   []struct {
		Seq    int64  `json:"seq"`
		Kind   string `json:"kind"`
		Detail string `json:"detail"`
	} `json:"breaks"`
}

func verifyOut(t *testing.T, home string, code int) verifyJSON {
	t.Helper()
	r := withHome(t, home, "audit", "verify", "--json").mustCode(t, code)
	var v verifyJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("audit verify --json: %v\n%s", err, r.stdout)
	}
	return v
}

func auditHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	seedAudit(t, home)
	return home
}

func tamperDB(t *testing.T, home string, stmts ...string) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.SQL().Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestAuditExportAndVerify exports the log to a file and to stdout, checks
// that each line carries its seq and chain MAC, and that verify --json says
// ok, and then exactly where the log breaks after the tail was cut off and
// the head repointed (defect 5 of issue 11).
func TestAuditExportAndVerify(t *testing.T) {
	home := auditHome(t)
	out := filepath.Join(t.TempDir(), "audit.jsonl")
	withHome(t, home, "audit", "export", "--output", out).mustCode(t, 0)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("export has %d lines, want 4:\n%s", len(lines), b)
	}
	for i, line := range lines {
		var e struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
			MAC  string `json:"mac"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != int64(i+1) || len(e.MAC) != 64 || len(e.Hash) != 64 {
			t.Errorf("line %d = %q (%v): want seq %d with a hash and a MAC", i, line, err, i+1)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode: %v, %v; want 0600", fi.Mode(), err)
	}
	if got := withHome(t, home, "audit", "export").mustCode(t, 0).stdout; got != string(b) {
		t.Errorf("export to stdout differs from the file:\n%s", got)
	}
	withHome(t, home, "audit", "verify", "--file", out).mustCode(t, 0)

	if v := verifyOut(t, home, 0); !v.OK || v.Rows != 4 || v.HeadSeq != 4 || !v.Keyed || len(v.Breaks) != 0 {
		t.Errorf("verify --json of a sound log = %+v", v)
	}

	tamperDB(t, home, `DELETE FROM audit WHERE seq >= 3`,
		`UPDATE audit_head SET seq = 2, hash = (SELECT hash FROM audit WHERE seq = 2)`)
	v := verifyOut(t, home, exitFailure)
	if v.OK || len(v.Breaks) == 0 || v.Breaks[0].Seq != 3 || v.Breaks[0].Kind != "deleted" || v.Advice == "" {
		t.Errorf("verify --json after cutting the tail = %+v", v)
	}
	r := withHome(t, home, "audit", "verify").mustCode(t, exitFailure)
	if !strings.Contains(r.stdout, "seq 3: deleted:") {
		t.Errorf("audit verify after cutting the tail:\n%s", r.stdout)
	}
	if line := r.oneLineError(t); !strings.Contains(line, "seq 3") || !strings.Contains(line, "export") {
		t.Errorf("audit verify error does not name the seq and what to do: %q", line)
	}
	withHome(t, home, "audit", "verify", "--file", out).mustCode(t, 0) // the exported copy is still whole
}

// TestAuditKeyFileErrors: a missing or foreign key file is one clear error
// line naming the file, for verify and export alike.
func TestAuditKeyFileErrors(t *testing.T) {
	home := auditHome(t)
	key := filepath.Join(home, "audit.key")
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	other := auditHome(t)
	foreign, err := os.ReadFile(filepath.Join(other, "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, foreign, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"audit", "verify"}, {"audit", "verify", "--json"}, {"audit", "export"}} {
		if line := withHome(t, home, args...).mustCode(t, exitFailure).oneLineError(t); !strings.Contains(line, key) || !strings.Contains(line, "not this log's") {
			t.Errorf("%v with a foreign key: %q", args, line)
		}
	}
	if err := os.Remove(key); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"audit", "verify"}, {"audit", "export"}} {
		if line := withHome(t, home, args...).mustCode(t, exitFailure).oneLineError(t); !strings.Contains(line, key) || !strings.Contains(line, "missing") {
			t.Errorf("%v without the key: %q", args, line)
		}
	}
}

// TestAuditPerson: packs audit --person prints only the rows of that
// signed-in person, each naming them, the issuer and the client; the
// chain still verifies with them in it.
func TestAuditPerson(t *testing.T) {
	home := auditHome(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(ctx, db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"mia", "bob", "mia"} {
		if err := l.RecordCall(ctx, capability.CallRecord{Invocation: "inv-" + who, Pack: "weather", Tool: "forecast", Client: "web", Person: who, Issuer: "https://idp.example"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	db.Close()
	r := withHome(t, home, "audit", "--person", "mia", "--json").mustCode(t, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit --person mia --json: %d rows\n%s", len(lines), r.stdout)
	}
	for _, line := range lines {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Person != "mia" || e.Issuer != "https://idp.example" || e.Client != "web" {
			t.Errorf("row %s: %+v %v", line, e, err)
		}
	}
	if out := withHome(t, home, "audit", "--person", "mia").mustCode(t, 0).stdout; strings.Count(out, "(by mia via web)") != 2 || strings.Contains(out, "bob") {
		t.Errorf("audit --person mia:\n%s", out)
	}
	if v := verifyOut(t, home, 0); !v.OK || v.Rows != 7 {
		t.Errorf("verify: %+v", v)
	}
}

// TestAuditExportFollow: export --follow writes each row once, keeps
// following the rows a writer appends, and resumes with --after the last
// seq it wrote, across a restart, without a gap or a repeat.
func TestAuditExportFollow(t *testing.T) {
	home := auditHome(t) // seqs 1..4
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "packs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := audit.Open(ctx, db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRows := func(n int) {
		t.Helper()
		for range n {
			if err := l.RecordExercise(capability.Exercise{Pack: "weather", Tool: "t", Invocation: "i", Capability: capability.Network, Resource: "api.weather.example", Allowed: true, Reason: "r"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// follower runs export --follow with args and reads lines until it
	// holds want of them, appending rows once it has read at.
	follower := func(want int, at map[int]int, args ...string) ([]int64, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a follower that misses a row fails, not hangs
		defer cancel()
		pr, pw := io.Pipe()
		var stderr bytes.Buffer
		code := make(chan int, 1)
		go func() {
			code <- run(ctx, append([]string{"--home", home, "audit", "export", "--follow"}, args...), pw, &stderr)
			pw.Close()
		}()
		var seqs []int64
		sc := bufio.NewScanner(pr)
		for len(seqs) < want && sc.Scan() {
			var e struct {
				Seq      int64  `json:"seq"`
				PrevHash string `json:"prev_hash"`
				Hash     string `json:"hash"`
				MAC      string `json:"mac"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || len(e.Hash) != 64 || len(e.PrevHash) != 64 || len(e.MAC) != 64 {
				t.Fatalf("line %q (%v): want a row with its chain fields", sc.Text(), err)
			}
			seqs = append(seqs, e.Seq)
			if n := at[len(seqs)]; n > 0 {
				appendRows(n)
			}
		}
		cancel()
		go io.Copy(io.Discard, pr)
		if c := <-code; c != 0 {
			t.Fatalf("export --follow exit %d: %s", c, stderr.String())
		}
		return seqs, stderr.String()
	}
	first, stderr := follower(7, map[int]int{4: 3})
	if !strings.Contains(stderr, "followed to seq 7") || !strings.Contains(stderr, "--after 7") {
		t.Errorf("stderr after an interrupt = %q, want the last seq and how to resume", stderr)
	}
	appendRows(2) // while nobody follows
	second, _ := follower(3, map[int]int{2: 1}, "--after", "7")
	got := fmt.Sprint(append(first, second...))
	if want := "[1 2 3 4 5 6 7 8 9 10]"; got != want {
		t.Fatalf("seqs across the restart = %s, want %s: each row once", got, want)
	}
}

func TestAuditExportFollowUsage(t *testing.T) {
	home := auditHome(t)
	for _, args := range [][]string{
		{"--after", "3"},
		{"--syslog", "udp://127.0.0.1:514"},
		{"--follow", "--output", filepath.Join(t.TempDir(), "x")},
		{"--follow", "--after", "-1"},
		{"--follow", "--syslog", "127.0.0.1:514"},
	} {
		r := withHome(t, home, append([]string{"audit", "export"}, args...)...)
		if r.code != exitUsage {
			t.Errorf("audit export %v: exit %d, want %d\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
	r := withHome(t, home, "audit", "export", "--follow", "--after", "99").mustCode(t, exitFailure)
	if line := r.oneLineError(t); !strings.Contains(line, "99") {
		t.Errorf("follow after a seq the log does not hold: %q, want it named", line)
	}
}
