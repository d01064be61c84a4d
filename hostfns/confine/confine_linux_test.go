package confine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packs-run/packs/hostfns/confine/supervisor"
)

// run runs argv confined with ws writable and returns its output and exit
// status.
func run(t *testing.T, spec Spec) (string, int) {
	t.Helper()
	cmd, err := Command(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	_ = cmd.Wait()
	return out.String(), cmd.ProcessState.ExitCode()
}

func shell(t *testing.T, ws, script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + ws}, Dir: ws, Write: []string{ws}}
}

func TestProbe(t *testing.T) {
	s := Probe()
	t.Logf("support: %+v mode %s", s, s.Mode())
	if s.Mode() != ModeFull {
		t.Skipf("this machine gives %s confinement", s.Mode())
	}
}

func TestConfinedShell(t *testing.T) {
	if !Probe().Full() {
		t.Skip("no full confinement here")
	}
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, shell(t, ws, "echo hi > $HOME/f && cat $HOME/f && cat "+outside+"; touch /tmp/x-packs-confine; id -u"))
	t.Logf("out %q code %d", out, code)
	if !strings.Contains(out, "hi") || strings.Contains(out, "s3cret") {
		t.Errorf("out = %q", out)
	}
	_, err := os.Stat("/tmp/x-packs-confine")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("touch outside: %v", err)
	}
}

// TestConfinedNoCapabilities: root of its own user namespace, the command
// holds no capability in its bounding set (none can come back at an exec)
// and none in effect.
func TestConfinedNoCapabilities(t *testing.T) {
	if !Probe().Full() {
		t.Skip("no full confinement here")
	}
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no " + py + " here")
	}
	ws := t.TempDir()
	// prctl(PR_CAPBSET_READ, c) is 1 for each capability held; capget's
	// first effective word is the effective set's low 32 bits.
	script := `import ctypes, os
l = ctypes.CDLL(None, use_errno=True)
held = [c for c in range(64) if l.prctl(23, c, 0, 0, 0) == 1]
hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
data = (ctypes.c_uint32 * 6)()
l.capget(hdr, data)
print("uid", os.getuid(), "bounding", held, "effective", data[0], data[3])`
	out, code := run(t, Spec{Path: py, Args: []string{"python3", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: ws, Write: []string{ws}})
	if code != 0 || !strings.Contains(out, "bounding [] effective 0 0") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// TestSupervisorReports: the supervisor's status pipe, in each kind it
// can be (in namespaces of its own or not): a command that started gives
// its output and its exit status at Exited; one that cannot start is
// ErrSetup with the supervisor's reason.
func TestSupervisorReports(t *testing.T) {
	sup := Probe()
	if sup.Mode() == ModeNone {
		t.Skip("no confinement here")
	}
	kinds := []bool{false}
	if sup.Full() {
		kinds = append(kinds, true)
	}
	for _, inNamespaces := range kinds {
		t.Run(fmt.Sprintf("namespaced=%v", inNamespaces), func(t *testing.T) {
			ws := t.TempDir()
			start := func(spec Spec, stdout, stderr io.Writer) (*Cmd, error) {
				w, err := toWire(spec, inNamespaces, sup.LandlockABI)
				if err != nil {
					t.Fatal(err)
				}
				s, err := warm.take(inNamespaces)
				if err != nil {
					t.Fatal(err)
				}
				c := &Cmd{Cmd: s.cmd, sup: s, wire: supervisor.Encode(w), Stdin: strings.NewReader("in\n"), Stdout: stdout, Stderr: stderr}
				return c, c.Start()
			}
			var out, errs bytes.Buffer
			c, err := start(shell(t, ws, "cat; echo err >&2; exit 3"), &out, &errs)
			if err != nil {
				t.Fatal(err)
			}
			<-c.Exited()
			code, err := c.Finish(time.Second)
			if code != 3 || err != nil || out.String() != "in\n" || errs.String() != "err\n" {
				t.Fatalf("= %d, %v; stdout %q, stderr %q", code, err, out.String(), errs.String())
			}
			missing := filepath.Join(ws, "missing")
			_, err = start(Spec{Path: missing, Args: []string{"missing"}, Dir: ws, Write: []string{ws}}, io.Discard, io.Discard)
			if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "start "+missing) {
				t.Fatalf("a missing program: %v; want ErrSetup naming it", err)
			}
		})
	}
}

// TestSupervisorForwardsSignals: SIGTERM to the supervisor (what Exec
// sends at the time limit) reaches the command, which may end as it likes.
func TestSupervisorForwardsSignals(t *testing.T) {
	if Probe().Mode() == ModeNone {
		t.Skip("no confinement here")
	}
	ws := t.TempDir()
	cmd, err := Command(shell(t, ws, `trap 'echo term; exit 7' TERM; echo ready; while :; do sleep 0.01; done`))
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := pr.Read(buf)
			if err != nil {
				return
			}
			if strings.Contains(string(buf[:n]), "ready") {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	select {
	case <-cmd.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end at SIGTERM")
	}
	code, err := cmd.Finish(time.Second)
	pw.Close()
	if code != 7 || err != nil {
		t.Fatalf("= %d, %v; want the command's own exit 7", code, err)
	}
}

// TestNoDescriptorLeft: a call leaves none of its pipes open in the
// parent (each supervisor has five). The supervisors of past calls are
// reaped in the background, each holding its pidfd until then: a few may
// still be on their way out.
func TestNoDescriptorLeft(t *testing.T) {
	if !Probe().Full() {
		t.Skip("no full confinement here")
	}
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	ws := t.TempDir()
	Prepare()
	before := fds()
	const calls = 20
	for range calls {
		cmd, err := Command(shell(t, ws, "echo out; echo err >&2"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader("in"), io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		<-cmd.Exited()
		if code, err := cmd.Finish(time.Second); code != 0 || err != nil {
			t.Fatalf("= %d, %v", code, err)
		}
		cmd.Release()
		Prepare()
	}
	if after := fds(); after > before+4 {
		t.Fatalf("%d descriptors open before %d calls, %d after", before, calls, after)
	}
}

// BenchmarkSupervisor is one confined command from Command to its end as
// hostfns.Exec sees it (Exited, then Finish: output copied, status known;
// the supervisor's own exit is reaped in the background): with a
// supervisor started ahead (warm, as between a chat's calls), without one
// (cold, a process's first call), each against its peer in the same run,
// plain os/exec unconfined. /bin/true shows the cost itself; python3 -c
// pass a command whose own start is most of it.
func BenchmarkSupervisor(b *testing.B) {
	if !Probe().Full() {
		b.Skip("no full confinement here")
	}
	ws := b.TempDir()
	for _, argv := range [][]string{{"/bin/true"}, {"/usr/bin/python3", "-c", "pass"}} {
		if _, err := os.Stat(argv[0]); err != nil {
			continue
		}
		spec := Spec{Path: argv[0], Args: argv, Env: []string{"PATH=/usr/bin:/bin"}, Dir: ws, Write: []string{ws}}
		for _, tc := range []struct {
			name string
			prep func()
		}{
			{"warm/packs", Prepare},
			{"warm/peer=unconfined", nil},
			{"cold/packs", func() {
				Prepare()
				if s, _ := warm.take(true); s != nil {
					s.close()
				}
			}},
			{"cold/peer=unconfined", nil},
		} {
			b.Run(filepath.Base(argv[0])+"/"+tc.name, func(b *testing.B) {
				durs := make([]time.Duration, 0, b.N)
				for b.Loop() {
					if tc.prep != nil {
						tc.prep()
					}
					start := time.Now()
					if tc.prep == nil {
						if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
							b.Fatal(err)
						}
					} else {
						cmd, err := Command(spec)
						if err != nil {
							b.Fatal(err)
						}
						if err := cmd.Start(); err != nil {
							b.Fatal(err)
						}
						<-cmd.Exited()
						if code, err := cmd.Finish(time.Second); code != 0 || err != nil {
							b.Fatalf("exit %d, %v", code, err)
						}
						cmd.Release()
					}
					durs = append(durs, time.Since(start))
				}
				slices.Sort(durs)
				b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
			})
		}
	}
}
