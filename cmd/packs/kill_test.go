//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigWeather is the weather pack plus 200 files of 16 KiB, so an install
// takes long enough to be killed in the middle.
func bigWeather(t *testing.T, version string) string {
	t.Helper()
	files := weatherFiles(version)
	for i := range 200 {
		files[fmt.Sprintf("assets/blob-%03d.bin", i)] = strings.Repeat(version+"-", 16<<10/(len(version)+1))
	}
	dir := filepath.Join(t.TempDir(), "weather")
	writeFiles(t, dir, files)
	return dir
}

// TestAddKilledMidInstall runs `packs add` in a child process and kills it
// with SIGKILL at moments spread over the install: when staging begins,
// when the transaction journal appears, and at fixed delays. After every
// kill the next command must find exactly the old version or the new one,
// intact and verified, and nothing left in tmp/.
func TestAddKilledMidInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	home := filepath.Join(t.TempDir(), "home")
	versions := map[string]string{"1.0.0": bigWeather(t, "1.0.0"), "2.0.0": bigWeather(t, "2.0.0")}
	child := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], append([]string{"--home", home}, args...)...)
		cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1")
		return cmd
	}
	start := time.Now()
	if out, err := child("add", versions["1.0.0"], "--grant", "all").CombinedOutput(); err != nil {
		t.Fatalf("first install: %v\n%s", err, out)
	}
	full := time.Since(start)
	tmp := filepath.Join(home, "tmp")

	// waitFor polls until a name matching pattern appears in tmp/, or the
	// child exits, or ten full installs' time passes.
	waitFor := func(pattern string, done <-chan struct{}) {
		deadline := time.Now().Add(10 * full)
		for time.Now().Before(deadline) {
			if m, _ := filepath.Glob(filepath.Join(tmp, pattern)); len(m) > 0 {
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	}

	const rounds = 18
	interrupted, inTxn := 0, 0
	for i := range rounds {
		version := "2.0.0"
		if i%2 == 1 {
			version = "1.0.0"
		}
		cmd := child("add", versions[version], "--grant", "network")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		switch i % 3 {
		case 0: // inside the transaction
			waitFor("txn.json", done)
		case 1: // while staging
			waitFor("stage-*", done)
			time.Sleep(time.Duration(i) * full / (4 * rounds))
		case 2: // anywhere
			time.Sleep(time.Duration(i) * full / rounds)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() && ws.ExitStatus() != 0 {
			t.Fatalf("round %d: the child failed on its own: %v\n%s", i, cmd.ProcessState, stderr.String())
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			interrupted++
		}
		if _, err := os.Stat(filepath.Join(tmp, "txn.json")); err == nil {
			inTxn++
		}

		got := listJSON(t, home) // opens the home: recovery runs here
		if len(got) != 1 || got[0].Status != "ok" || (got[0].Version != "1.0.0" && got[0].Version != "2.0.0") {
			t.Fatalf("round %d: after the kill: %+v", i, got)
		}
		v, err := os.ReadFile(filepath.Join(home, "packs", "weather", "docs", "version.md"))
		if err != nil || string(v) != got[0].Version+"\n" {
			t.Fatalf("round %d: lock says %s, files say %q (%v)", i, got[0].Version, v, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Fatalf("round %d: tmp/ not cleaned: %v", i, left)
		}
	}
	t.Logf("%d of %d kills interrupted an install in progress, %d of them inside the transaction (one install takes %v)", interrupted, rounds, inTxn, full)
	if interrupted == 0 || inTxn == 0 {
		t.Error("no kill landed during an install's transaction: the test proved nothing")
	}
	if out, err := child("add", versions["2.0.0"], "--grant", "none").CombinedOutput(); err != nil {
		t.Fatalf("install after the kills: %v\n%s", err, out)
	}
	if got := listJSON(t, home); len(got) != 1 || got[0].Version != "2.0.0" || got[0].Status != "ok" {
		t.Fatalf("after the last install: %+v", got)
	}
}
