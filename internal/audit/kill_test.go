package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/store"
)

const (
	killEnv    = "PACKS_AUDIT_KILL_DB"
	killKeyEnv = "PACKS_AUDIT_KILL_KEYDIR"
)

// TestKillMidBurst re-executes the test binary as a child that appends audit
// rows from eight goroutines and prints each acknowledged seq, SIGKILLs it in
// the middle of the burst, then reopens packs.db: every acknowledged row must
// be there, unchanged, and the chain must verify. On PostgreSQL the child
// is a replica killed while it appends.
func TestKillMidBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	eachBackend(t, testKillMidBurst)
}

func testKillMidBurst(t *testing.T, target func(testing.TB) string) {
	path := target(t)
	dir, _ := keyDirs.Load(path)
	keyDir, _ := dir.(string)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnv+"="+path, killKeyEnv+"="+keyDir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[int64]string{}
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		var seq int64
		var id string
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %s", &seq, &id); err != nil {
			continue
		}
		acked[seq] = id
		if len(acked) == 400 && !killed {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child ended before it was killed: %v", err)
	}

	db := openDB(t, path)
	stored := map[int64]string{}
	for e, err := range audit.Entries(context.Background(), db, audit.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		stored[e.Seq] = e.Invocation
	}
	for seq, id := range acked {
		if got, ok := stored[seq]; !ok || got != id {
			t.Errorf("acknowledged seq %d (%s) is %q in the log after the kill", seq, id, got)
		}
	}
	rep := verify(t, db)
	if !rep.OK() {
		t.Errorf("chain broken after SIGKILL: %v", rep.Breaks)
	}
	if rep.Rows < int64(len(acked)) {
		t.Errorf("%d rows stored, %d acknowledged", rep.Rows, len(acked))
	}
	t.Logf("%d rows acknowledged before the kill, %d stored", len(acked), rep.Rows)
}

// TestKillHelper is the child of TestKillMidBurst; it does nothing in a
// normal run.
func TestKillHelper(t *testing.T) {
	path := os.Getenv(killEnv)
	if path == "" {
		t.Skip("child process of TestKillMidBurst")
	}
	db, err := store.Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l, err := audit.Open(context.Background(), db, audit.Options{KeyDir: os.Getenv(killKeyEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("g%d-%d", g, i)
				seq, err := l.RecordInvocation(context.Background(), audit.Invocation{ID: id, Pack: "p", Tool: "t", Arguments: json.RawMessage(`{"i":1}`)})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(w, "ack %d %s\n", seq, id)
				w.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
