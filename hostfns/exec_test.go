package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

func execReq(commands ...string) capability.Request {
	return capability.Request{TerminalExec: capability.ExecRequest{Commands: commands}}
}

// TestExecGrantedAndDenied pairs a granted command with the denials: no
// terminal_exec at all, a command not listed, a listed one that is blocked.
func TestExecGrantedAndDenied(t *testing.T) {
	ctx := context.Background()
	c, rec := newCall(t, execReq("echo", "/bin/echo"))
	res, err := Exec(ctx, c, []string{"echo", "hi"}, ExecOptions{})
	if err != nil || string(res.Stdout) != "hi\n" || res.ExitCode != 0 || res.Truncated {
		t.Fatalf("echo hi = %+v, %v", res, err)
	}
	requireRecorded(t, rec, capability.TerminalExec, "echo", true)
	if res, err := Exec(ctx, c, []string{"/bin/echo", "abs"}, ExecOptions{}); err != nil || string(res.Stdout) != "abs\n" {
		t.Fatalf("/bin/echo = %+v, %v", res, err)
	}

	cases := []struct {
		name string
		req  capability.Request
		argv []string
	}{
		{"terminal_exec not granted", capability.Request{}, []string{"echo", "hi"}},
		{"a command not listed", execReq("echo"), []string{"cat", "/etc/passwd"}},
		{"a listed name with a path", execReq("echo"), []string{"/tmp/echo"}},
		{"a blocked command", capability.Request{TerminalExec: capability.ExecRequest{Commands: []string{"rm"}, Blocked: []string{"rm"}}}, []string{"rm", "-rf", "/"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newCall(t, tc.req)
			_, err := Exec(ctx, c, tc.argv, ExecOptions{})
			if !errors.Is(err, capability.ErrDenied) {
				t.Fatalf("Exec(%q): %v, want a denial", tc.argv, err)
			}
			requireRecorded(t, rec, capability.TerminalExec, tc.argv[0], false)
		})
	}
}

// TestExecShellMetacharacters: arguments reach the program verbatim; no
// shell ever sees them.
func TestExecShellMetacharacters(t *testing.T) {
	c, _ := newCall(t, execReq("printf"))
	args := []string{"; rm -rf ~", "$(touch pwned)", "`touch pwned`", "a && touch pwned", "| cat /etc/passwd", "$HOME", "*", "'\"\\"}
	res, err := Exec(context.Background(), c, append([]string{"printf", `%s\n`}, args...), ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Stdout), strings.Join(args, "\n")+"\n"; got != want {
		t.Fatalf("printf printed %q, want %q", got, want)
	}
	if entries, _ := os.ReadDir(c.Workspace); len(entries) != 0 {
		t.Fatalf("the workspace changed: %v", entries)
	}
}

// TestExecEnvironment: only the fixed variables and the granted ones, in
// the workspace.
func TestExecEnvironment(t *testing.T) {
	req := execReq("env", "pwd")
	req.EnvRead = []string{"PROBE_TOKEN", "PATH"}
	c, rec := newCall(t, req)
	res, err := Exec(context.Background(), c, []string{"env"}, ExecOptions{Environ: append(probeEnv, "PATH=/evil")})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	// TMPDIR is the call's own, removed when it ends: its name is random.
	tmp := slices.IndexFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	if tmp < 0 || !strings.HasPrefix(got[tmp], "TMPDIR="+filepath.Join(privateBase(), "packs-exec-")) {
		t.Fatalf("env %q: want a private TMPDIR", got)
	}
	if _, err := os.Stat(strings.TrimPrefix(got[tmp], "TMPDIR=")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the call's TMPDIR outlived it: %v", err)
	}
	got = slices.Delete(got, tmp, tmp+1)
	want := []string{"PATH=" + SafePath, "HOME=" + c.Workspace, "LANG=C.UTF-8", "PROBE_TOKEN=t0k3n"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("env =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	requireRecorded(t, rec, capability.EnvRead, "PROBE_TOKEN", true)
	if res, err := Exec(context.Background(), c, []string{"pwd"}, ExecOptions{}); err != nil || strings.TrimSpace(string(res.Stdout)) != c.Workspace {
		t.Fatalf("pwd = %q, %v; want %s", res.Stdout, err, c.Workspace)
	}
}

// TestExecTmpInMemory: where the machine has /dev/shm (world-writable,
// sticky), a call's private TMPDIR is made there, in memory: on this
// machine's disk, making and removing it cost over a millisecond of every
// call.
func TestExecTmpInMemory(t *testing.T) {
	fi, err := os.Stat("/dev/shm")
	if err != nil || !fi.IsDir() || fi.Mode()&(fs.ModeSticky|fs.ModePerm) != fs.ModeSticky|fs.ModePerm {
		t.Skip("no world-writable, sticky /dev/shm here")
	}
	c, _ := newCall(t, execReq("printenv"))
	res, err := Exec(context.Background(), c, []string{"printenv", "TMPDIR"}, ExecOptions{})
	if err != nil || !strings.HasPrefix(string(res.Stdout), "/dev/shm/packs-exec-") {
		t.Fatalf("TMPDIR = %q, %v; want one under /dev/shm", res.Stdout, err)
	}
}

func TestExecExitCodes(t *testing.T) {
	c, _ := newCall(t, execReq("false", "sh", "cat"))
	cases := []struct {
		argv  []string
		stdin string
		code  int
		out   string
	}{
		{[]string{"false"}, "", 1, ""},
		{[]string{"sh", "-c", "exit 7"}, "", 7, ""},
		{[]string{"sh", "-c", "kill -9 $$"}, "", 128 + 9, ""},
		{[]string{"sh", "-c", "echo oops >&2; kill -TERM $$"}, "", 128 + 15, ""},
		{[]string{"cat"}, "from stdin", 0, "from stdin"},
	}
	for _, tc := range cases {
		res, err := Exec(context.Background(), c, tc.argv, ExecOptions{Stdin: []byte(tc.stdin)})
		if err != nil || res.ExitCode != tc.code || string(res.Stdout) != tc.out {
			t.Errorf("%q = exit %d, stdout %q, %v; want exit %d, stdout %q", tc.argv, res.ExitCode, res.Stdout, err, tc.code, tc.out)
		}
	}
}

func TestExecNotFound(t *testing.T) {
	c, _ := newCall(t, execReq("no-such-command-h7", "/no/such/cmd"))
	for _, argv := range [][]string{{"no-such-command-h7"}, {"/no/such/cmd"}} {
		if _, err := Exec(context.Background(), c, argv, ExecOptions{}); !errors.Is(err, ErrCommandNotFound) {
			t.Errorf("Exec(%q): %v, want ErrCommandNotFound", argv, err)
		}
	}
	if _, err := Exec(context.Background(), c, nil, ExecOptions{}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("Exec(nil): %v, want ErrInvalidRequest", err)
	}
	c.Recorder = nil
	if _, err := Exec(context.Background(), c, []string{"echo"}, ExecOptions{}); !errors.Is(err, ErrNoRecorder) {
		t.Errorf("Exec without a recorder: %v, want ErrNoRecorder", err)
	}
}

// leftover starts a shell loop that writes the time to $HOME/alive while it
// lives, detached from the command's process group; stillAlive reports
// whether it still writes after the command is gone. A PID printed from
// inside the command's PID namespace would mean nothing here.
const leftover = `(trap "" TERM HUP; setsid sh -c 'while :; do date +%s%N > "$HOME/alive"; sleep 0.02; done' &) ; `

func stillAlive(t *testing.T, ws string) bool {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(ws, "alive"))
	if err != nil {
		t.Fatalf("the leftover never ran: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	after, _ := os.ReadFile(filepath.Join(ws, "alive"))
	return !bytes.Equal(before, after)
}

// TestExecTimeoutKillsGroup: a command that ignores SIGTERM and leaves a
// child behind (in a session of its own) is killed with everything it
// started within timeout + grace.
func TestExecTimeoutKillsGroup(t *testing.T) {
	c, _ := newCall(t, execReq("sh"))
	start := time.Now()
	res, err := Exec(context.Background(), c,
		[]string{"sh", "-c", leftover + `trap "" TERM; sleep 0.2; sleep 1000`},
		ExecOptions{Timeout: 500 * time.Millisecond, Grace: 200 * time.Millisecond})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if bound := 3 * time.Second; took > bound {
		t.Fatalf("took %s, want under %s", took, bound)
	}
	if res.ExitCode != 128+9 {
		t.Fatalf("exit = %d, want %d (SIGKILL)", res.ExitCode, 128+9)
	}
	if stillAlive(t, c.Workspace) {
		t.Fatal("a process the command started outlived it")
	}
}

// TestExecLeftoversKilled: what a command leaves running when it exits is
// killed, and the call returns at once.
func TestExecLeftoversKilled(t *testing.T) {
	c, _ := newCall(t, execReq("sh"))
	start := time.Now()
	res, err := Exec(context.Background(), c, []string{"sh", "-c", leftover + `sleep 0.2`}, ExecOptions{Timeout: 10 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("= %+v, %v", res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s: waited for the leftover child", took)
	}
	if stillAlive(t, c.Workspace) {
		t.Fatal("a process the command started outlived it")
	}
}

// TestExecContextCancel: the caller's context stops the command too.
func TestExecContextCancel(t *testing.T) {
	c, _ := newCall(t, execReq("sleep"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Exec(ctx, c, []string{"sleep", "1000"}, ExecOptions{Grace: 100 * time.Millisecond})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestExecOutputCap: a command that floods its output is stopped when a
// stream reaches MaxOutput; the call keeps that many bytes and a marker,
// and is neither an error nor a timeout (spec 000 §9.3), even when the
// command would never end by itself.
func TestExecOutputCap(t *testing.T) {
	c, _ := newCall(t, execReq("head", "sh", "yes"))
	const capBytes = 1 << 20
	marker := regexp.MustCompile(`\n\[packs: output truncated: [0-9]+ bytes dropped\]\n$`)
	res, err := Exec(context.Background(), c, []string{"head", "-c", "104857600", "/dev/zero"}, ExecOptions{MaxOutput: capBytes})
	if err != nil || !res.Capped || !res.Truncated {
		t.Fatalf("= exit %d capped %v, %v", res.ExitCode, res.Capped, err)
	}
	if m := marker.FindIndex(res.Stdout); m == nil || m[0] != capBytes {
		t.Fatalf("%d bytes ending %q; want %d bytes and the marker", len(res.Stdout), res.Stdout[max(0, len(res.Stdout)-80):], capBytes)
	}
	res, err = Exec(context.Background(), c, []string{"sh", "-c", "head -c 5000 /dev/zero >&2; sleep 1000"}, ExecOptions{MaxOutput: 100})
	if err != nil || !res.Truncated || !res.Capped || !bytes.HasPrefix(res.Stderr, make([]byte, 100)) || !marker.Match(res.Stderr) {
		t.Fatalf("stderr cap: %+v, %v", res, err)
	}
	// yes under a 1000-byte cap and a 2 s limit: stopped, not timed out.
	res, err = Exec(context.Background(), c, []string{"yes"}, ExecOptions{MaxOutput: 1000, Timeout: 2 * time.Second})
	if err != nil || !res.Capped || !bytes.HasPrefix(res.Stdout, []byte("y\ny\n")) || !marker.Match(res.Stdout) {
		t.Fatalf("yes: %d bytes, capped %v, %v", len(res.Stdout), res.Capped, err)
	}
}

// TestExecHostFunction: the exec host function for a guest, granted and
// denied; a denial traps the call and is recorded.
func TestExecHostFunction(t *testing.T) {
	c, rec := newCall(t, execReq("echo"))
	r := mustProbe(t, c, "exec", op{"op": "exec", "argv": []string{"echo", "$(id)", "; ls"}})
	var got ExecResponse
	if err := json.Unmarshal(r.Exec, &got); err != nil {
		t.Fatalf("exec response %q: %v", r.Exec, err)
	}
	if want := (ExecResponse{Stdout: "$(id) ; ls\n"}); got != want {
		t.Fatalf("exec = %+v, want %+v", got, want)
	}
	requireRecorded(t, rec, capability.TerminalExec, "echo", true)

	_, err := runProbe(t, c, "exec", op{"op": "exec", "argv": []string{"cat", "/etc/passwd"}})
	if !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("exec cat: %v, want a denial", err)
	}
	requireRecorded(t, rec, capability.TerminalExec, "cat", false)

	c, rec = newCall(t, capability.Request{})
	if _, err := runProbe(t, c, "exec", op{"op": "exec", "argv": []string{"echo"}}); !errors.Is(err, capability.ErrDenied) {
		t.Fatalf("exec without terminal_exec: %v, want a denial", err)
	}
	requireRecorded(t, rec, capability.TerminalExec, ExecNamespace, false)
}
