package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/packs"
)

// The benchmarks of issue 18 that need the whole command: each reports its
// result beside a peer measured in the same run.

// scaleFiles is a small installed pack: an entry doc, a manifest asking for
// one capability, and one tool whose module is a stub.
func scaleFiles(name string) map[string]string {
	return map[string]string{
		"SKILL.md": "---\nname: " + name + "\ndescription: Generated pack " + name + " for the scale benchmarks.\nlicense: MIT\n---\n# " + name + "\n",
		"skill.toml": "[skill]\nid = \"bench." + name + "\"\nname = \"" + name + "\"\nversion = \"1.0.0\"\ndescription = \"bench\"\napi_version = \"1.0\"\n\n" +
			"[capabilities]\nenv_read = [\"BENCH_*\"]\n",
		"tools.json": `[{"name": "echo", "description": "Echo.\nReturns its input.",
  "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
  "run": {"wasm": "bin/echo.wasm", "function": "echo"}}]`,
		"bin/echo.wasm": "\x00asm\x01\x00\x00\x00",
	}
}

// installedHome returns a state directory holding n installed packs named
// pack-00000 … written the way an install leaves them (folder, packs.lock
// entry with its integrity), without paying n installs' fsyncs.
func installedHome(b *testing.B, n int) string {
	b.Helper()
	home := filepath.Join(b.TempDir(), "home")
	h, err := dist.OpenHome(context.Background(), home, dist.HomeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	lf := &dist.Lockfile{}
	now := time.Now().UTC()
	for i := range n {
		name := fmt.Sprintf("pack-%05d", i)
		dir := filepath.Join(h.PacksDir(), name)
		writeBenchFiles(b, dir, scaleFiles(name))
		d, err := packs.Digest(dir)
		if err != nil {
			b.Fatal(err)
		}
		lf.Packs = append(lf.Packs, dist.LockEntry{Name: name, Version: "1.0.0", Source: "file:///bench/" + name, Integrity: d, Installed: now,
			Capabilities: map[capability.Name]dist.LockCapability{capability.EnvRead: {Granted: true, Resources: []string{"BENCH_*"}}}})
	}
	if err := dist.WriteLock(h.LockPath(), lf); err != nil {
		b.Fatal(err)
	}
	// The first command brings packs.db in line with packs.lock and
	// records what it found in each folder: done here, as it is once after
	// an install, once the files have settled.
	settle()
	if r := runBench(b, home, "list", "--json"); r != nil {
		b.Fatal(r)
	}
	return home
}

// settle flushes what the setup wrote to disk and waits until every file
// is settled (dist.Home.Settled): a command trusts a file stamp it
// recorded only when the file had not changed for a tick before, as a pack
// installed a few seconds ago has not, and the first fsync after writing
// 40,000 files waits for all of them. The benchmarks measure the steady
// state, not the first seconds after an install.
func settle() {
	syscall.Sync()
	time.Sleep(2*time.Second + 100*time.Millisecond)
}

func writeBenchFiles(b *testing.B, dir string, files map[string]string) {
	b.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// runBench runs the CLI in-process against home; it returns an error
// holding stderr unless the command succeeded.
func runBench(b *testing.B, home string, args ...string) error {
	b.Helper()
	var errb limitedBuffer
	if code := run(context.Background(), append([]string{"--home", home}, args...), io.Discard, &errb); code != 0 {
		return fmt.Errorf("packs %v: exit %d: %s", args, code, errb.String())
	}
	return nil
}

// limitedBuffer keeps the first 4 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

// BenchmarkList is packs list --json with 100, 1,000 and 10,000 packs
// installed, in-process (the process start is the same for every size), in
// two states: steady (a listing ran before, so every folder's check and
// every pack's summary is recorded in packs.db) and first (the first
// listing after the packs were installed: packs.db holds neither, so every
// folder is hashed and every pack loaded). ns/pack is the time per
// installed pack; per-pack-vs-100 is that time over the 100 case's of the
// same state in the same run: 1.0 is linear, n/100 quadratic. cpu-ms is
// the CPU time (user and system, every thread) one listing costs, the
// figure issue 29 sets at most 500 ms for 10,000 packs in the steady state.
// State process is the steady state as a whole process (the test binary
// standing in for packs), its CPU time taken from the child's rusage.
func BenchmarkList(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, state := range []string{"steady", "first", "process"} {
		var base float64
		for _, n := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("state=%s/installed=%d", state, n), func(b *testing.B) {
				home := installedHome(b, n)
				var cpu time.Duration
				for b.Loop() {
					switch state {
					case "first":
						b.StopTimer()
						forgetListings(b, home)
						b.StartTimer()
					case "process":
						cmd := exec.Command(self, "--home", home, "list", "--json")
						cmd.Env = append(os.Environ(), "PACKS_CLI_CHILD=1")
						if out, err := cmd.CombinedOutput(); err != nil {
							b.Fatalf("packs list: %v: %.4000s", err, out)
						}
						cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
						continue
					}
					before := cpuTime()
					if err := runBench(b, home, "list", "--json"); err != nil {
						b.Fatal(err)
					}
					cpu += cpuTime() - before
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
				perPack := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(n)
				b.ReportMetric(perPack, "ns/pack")
				if n == 100 {
					base = perPack
				} else if base > 0 {
					b.ReportMetric(perPack/base, "per-pack-vs-100")
				}
			})
		}
	}
}

// forgetListings empties what listings record in packs.db (the checks of
// the pack folders and the packs' summaries), as it is right after the
// packs were installed.
func forgetListings(b *testing.B, home string) {
	b.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "packs.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL().Exec(`DELETE FROM pack_checks; DELETE FROM pack_summaries`); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the CPU time the process has used, user and system, every
// thread.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
