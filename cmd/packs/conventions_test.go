package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/audit"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/llm/llmtest"
)

// openPTY opens a pseudo-terminal pair: writes to the returned terminal
// (the person's screen) are read back through the returned function,
// which the caller calls once the command has finished.
func openPTY(t *testing.T) (tty *os.File, screen func() string) {
	t.Helper()
	_, tty, screen = openPTYKeys(t)
	return tty, screen
}

// openPTYKeys is openPTY that also returns the keyboard: what is written to
// keys the terminal reads as typed.
func openPTYKeys(t *testing.T) (keys, tty *os.File, screen func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&buf, master) // ends with EIO once the terminal is closed
		close(done)
	}()
	t.Cleanup(func() { tty.Close(); master.Close() })
	return master, tty, func() string {
		tty.Close()
		<-done
		return strings.ReplaceAll(buf.String(), "\r", "")
	}
}

// devNull opens /dev/null for reading: the stdin of `packs ... </dev/null`.
func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestNoTerminal: stdin is /dev/null while a person watches stderr on a
// terminal (a cron job, a script, `</dev/null`). /dev/null is a character
// device but no terminal: nobody can answer, so add asks nothing and says
// it needs --yes or --grant, and run asks nothing and denies for want of
// an approver.
func TestNoTerminal(t *testing.T) {
	src := weatherPack(t, "1.0.0")
	tests := []struct {
		name    string
		flags   []string
		code    int
		granted []string // nil: not installed
		say     string
	}{
		{"no flags: refuse and say how", nil, exitUsage, nil, "--yes"},
		{"--yes installs granting nothing", []string{"--yes"}, exitOK, []string{}, ""},
		{"--grant alone is enough", []string{"--grant", "network"}, exitOK, []string{"network"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			tty, screen := openPTY(t)
			var out bytes.Buffer
			code := runIO(context.Background(), append([]string{"--home", home, "add", src}, tt.flags...), devNull(t), &out, tty)
			seen := screen()
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out.String(), seen)
			}
			if strings.Contains(seen, "?") || strings.Contains(seen, "declined") {
				t.Errorf("asked a question nobody can answer:\n%s", seen)
			}
			if !strings.Contains(seen, tt.say) {
				t.Errorf("the terminal does not say %q:\n%s", tt.say, seen)
			}
			got := listJSON(t, home)
			if tt.granted == nil {
				if len(got) != 0 {
					t.Errorf("installed anyway: %+v", got)
				}
				return
			}
			if len(got) != 1 || !slices.Equal(got[0].Granted, tt.granted) {
				t.Errorf("got %+v, want granted %v", got, tt.granted)
			}
		})
	}

	t.Run("run denies for want of an approver", func(t *testing.T) {
		home := t.TempDir()
		withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--grant", "none", "--yes").mustCode(t, exitOK)
		tty, screen := openPTY(t)
		var out bytes.Buffer
		code := runIO(context.Background(), []string{"--home", home, "run", "echo", "t", "--input", `{"text":"hi"}`}, devNull(t), &out, tty)
		seen := screen()
		if code != exitDenied {
			t.Fatalf("exit %d, want %d\n%s", code, exitDenied, seen)
		}
		if strings.Contains(seen, "Run it?") {
			t.Errorf("prompted with nobody there:\n%s", seen)
		}
		if !strings.Contains(seen, "--yes") {
			t.Errorf("the denial does not say how to approve:\n%s", seen)
		}
		a, err := app.Open(context.Background(), app.Options{Home: home})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		for e, err := range audit.Entries(context.Background(), a.DB, audit.Filter{Pack: "echo", Kind: audit.KindInvocation}) {
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ Approver, Decision, Reason string }
			json.Unmarshal(e.Body, &body)
			if body.Decision != "deny" || body.Approver == "terminal" || !strings.Contains(body.Reason, "approver") {
				t.Errorf("audited %+v; want a denial for want of an approver, not by a terminal", body)
			}
		}
	})
}

func TestVersion(t *testing.T) {
	old := buildVersion
	buildVersion = "v9.8.7-test"
	t.Cleanup(func() { buildVersion = old })
	r := packsCLI(t, "--version").mustCode(t, exitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if lines[0] != "packs v9.8.7-test" {
		t.Errorf("first line %q, want %q", lines[0], "packs v9.8.7-test")
	}
	for _, mod := range []string{"github.com/tetratelabs/wazero", "github.com/extism/go-sdk", "github.com/modelcontextprotocol/go-sdk"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(mod) + ` \S+$`).MatchString(r.stdout) {
			t.Errorf("--version does not name %s:\n%s", mod, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, runtime.Version()) {
		t.Errorf("--version does not name the Go version:\n%s", r.stdout)
	}
}

// mcpOverStdio runs `packs mcp` in-process on the given input, as a client
// that writes its requests and closes stdin, and returns the responses by
// id.
func mcpOverStdio(t *testing.T, home, input string) map[int]json.RawMessage {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: bufio.NewReader(strings.NewReader(input)), stdout: &out, rawStdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := c.run(context.Background(), []string{"--home", home, "mcp"}); code != 0 {
		t.Fatalf("packs mcp: exit %d\n%s", code, errb.String())
	}
	got := map[int]json.RawMessage{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("stdout holds more than JSON-RPC: %v\n%s", err, out.String())
		}
		if msg.ID != nil {
			got[*msg.ID] = msg.Result
		}
	}
	return got
}

// TestMCPStdio: every request piped into packs mcp is answered although
// stdin ends right after them, and the server reports packs --version's
// version.
func TestMCPStdio(t *testing.T) {
	old := buildVersion
	buildVersion = "v9.8.7-test"
	t.Cleanup(func() { buildVersion = old })
	home := installedNotes(t)
	const n = 25
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	for i := 1; i <= n; i++ {
		method := "tools/list"
		if i%2 == 0 {
			method = "ping"
		}
		in += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`+"\n", i, method)
	}
	got := mcpOverStdio(t, home, in)
	if len(got) != n+1 {
		t.Errorf("%d answers to %d requests", len(got), n+1)
	}
	var init struct {
		ServerInfo struct{ Name, Version string } `json:"serverInfo"`
	}
	json.Unmarshal(got[0], &init)
	if init.ServerInfo.Version != "v9.8.7-test" {
		t.Errorf("MCP clients are told version %q, want %q", init.ServerInfo.Version, "v9.8.7-test")
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := packsCLI(t, "completion", shell).mustCode(t, exitOK)
		if !strings.Contains(r.stdout, "packs") || len(r.stdout) < 500 {
			t.Errorf("%s completion:\n%s", shell, r.stdout)
		}
	}
	r := packsCLI(t, "__complete", "ad").mustCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "add\t") {
		t.Errorf("completing \"ad\": %q", r.stdout)
	}
}

// TestReadOnlyCommands: list and info on a home that does not exist yet
// answer as for an empty one, and create nothing.
func TestReadOnlyCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "fresh")
	r := withHome(t, home, "list").mustCode(t, exitOK)
	if r.stdout != "" || !strings.Contains(r.stderr, "no packs installed") {
		t.Errorf("list: %+v", r)
	}
	// A newcomer is told where the built-ins are (issue 26).
	for _, want := range []string{"built-in packs", "current-time", "first time you run packs chat"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("list on a new home does not say %q: %s", want, r.stderr)
		}
	}
	if got := listJSON(t, home); len(got) != 0 {
		t.Errorf("list --json: %+v", got)
	}
	line := withHome(t, home, "info", "weather").mustCode(t, exitFailure).oneLineError(t)
	if !strings.Contains(line, "not installed") {
		t.Errorf("info: %q", line)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("a read-only command created the state directory: %v", err)
	}
}

// TestErrorPrefixOnce: every error line starts with one "packs: ", never
// "packs: packs validate: ...".
func TestErrorPrefixOnce(t *testing.T) {
	home := t.TempDir()
	tests := [][]string{
		{"validate"},
		{"info"},
		{"list", "--frobnicate"},
		{"chat", "--yes"},
		{"mcp", "extra"},
		{"--home", home, "mcp", "--pack", "nope"},
		{"run", "a"},
		{"grant", "--scope", "forever", "p", "network"},
	}
	repeated := regexp.MustCompile(`^packs: packs[ :]`)
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := packsCLI(t, args...)
			if r.code == 0 {
				t.Fatalf("exit 0:\n%s", r.stdout)
			}
			if line := r.oneLineError(t); repeated.MatchString(line) {
				t.Errorf("repeated prefix: %q", line)
			}
		})
	}
}

// TestBusyPort: a port already taken gives the flag that picks another.
func TestBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	home := installedNotes(t)
	tests := []struct {
		args []string
		flag string
	}{
		{[]string{"serve", "--addr", addr}, "--addr"},
		{[]string{"mcp", "--http", addr}, "--http"},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			line := withHome(t, home, tt.args...).mustCode(t, exitFailure).oneLineError(t)
			if !strings.Contains(line, addr) || !strings.Contains(line, tt.flag) || !strings.Contains(line, "in use") {
				t.Errorf("no hint about %s: %q", tt.flag, line)
			}
		})
	}
}

// decodeOne decodes stdout as exactly one JSON value into v.
func decodeOne(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not the documented JSON object: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
}

// TestJSONResults: add, remove, grant, revoke and chat --message print one
// JSON object with --json, and nothing else on stdout.
func TestJSONResults(t *testing.T) {
	home := t.TempDir()
	r := withHome(t, home, "add", weatherPack(t, "1.2.0"), "--grant", "network", "--json").mustCode(t, exitOK)
	var added addResult
	decodeOne(t, r.stdout, &added)
	if added.Name != "weather" || added.Version != "1.2.0" || !strings.HasPrefix(added.Integrity, "sha256:") || !strings.HasPrefix(added.Source, "file://") ||
		!slices.Equal(added.Tools, []string{"forecast"}) || !slices.Equal(added.Granted, []string{"network"}) ||
		!slices.Equal(added.NotGranted, []string{"env_read"}) || len(added.Requested) != 2 || added.PreApproved == nil {
		t.Errorf("add --json: %+v", added)
	}

	r = withHome(t, home, "grant", "weather", "env_read", "--json").mustCode(t, exitOK)
	var granted grantResult
	decodeOne(t, r.stdout, &granted)
	if granted.Pack != "weather" || len(granted.Granted) != 1 || granted.Granted[0].Capability != "env_read" || granted.Granted[0].Scope != "persistent" || granted.Notes == nil {
		t.Errorf("grant --json: %+v", granted)
	}

	r = withHome(t, home, "revoke", "weather", "env_read", "network", "--json").mustCode(t, exitOK)
	var revoked revokeResult
	decodeOne(t, r.stdout, &revoked)
	if revoked.Pack != "weather" || len(revoked.Revoked) != 2 || revoked.Revoked[0].Capability != "env_read" || revoked.Revoked[0].Withdrawn != 1 || revoked.Notes == nil {
		t.Errorf("revoke --json: %+v", revoked)
	}

	r = withHome(t, home, "remove", "weather", "--json").mustCode(t, exitOK)
	var removed removeResult
	decodeOne(t, r.stdout, &removed)
	if removed.Name != "weather" || removed.Version != "1.2.0" {
		t.Errorf("remove --json: %+v", removed)
	}

	home = installedNotes(t)
	srv := llmtest.NewServer(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "enable_tools", Arguments: `{"pack_id":"notes"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"hi"}`}}},
		llmtest.Turn{Text: "It said hi."},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{Name: "notes__echo", Arguments: `{"text":"again"}`}}},
		llmtest.Turn{Text: "Denied, fine."},
	)
	defer srv.Close()
	r = withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--attach", "notes", "--message", "echo hi", "--yes", "--json").mustCode(t, exitOK)
	var turn chatResult
	decodeOne(t, r.stdout, &turn)
	if !strings.HasPrefix(turn.Chat, "chat_") || turn.Reply != "It said hi." || len(turn.Calls) != 2 || turn.Steps != 3 {
		t.Fatalf("chat --json: %+v", turn)
	}
	if c := turn.Calls[0]; c.Name != "enable_tools" || !c.Approved || c.Approver != "attach" || !c.ByAttach || c.RanMS <= 0 {
		t.Errorf("the enable_tools call: %+v, want approved by attach, with its run time", c)
	}
	if c := turn.Calls[1]; c.Name != "notes__echo" || c.Pack != "notes" || !c.Approved || c.Approver != "--yes" || c.IsError || !strings.Contains(string(c.Result), "hi") || c.Artifacts == nil {
		t.Errorf("the echo call: %+v", c)
	}
	r = withHome(t, home, "chat", "--base-url", srv.OpenAIURL(), "--chat", turn.Chat, "--message", "echo again", "--json").mustCode(t, exitOK)
	turn = chatResult{}
	decodeOne(t, r.stdout, &turn)
	if len(turn.Calls) != 1 || turn.Calls[0].Approved || turn.Calls[0].ErrorKind != "denied" || turn.Calls[0].Reason == "" || turn.Reply != "Denied, fine." {
		t.Errorf("denied call: %+v", turn)
	}
}

// TestAddProgress: compiling a pack's modules shows on stderr, never in
// stdout, so --json stays one object.
func TestAddProgress(t *testing.T) {
	home := t.TempDir()
	r := withHome(t, home, "add", toolPack(t, "echo", "wasi_echo.wasm", "", ""), "--yes", "--json").mustCode(t, exitOK)
	if !regexp.MustCompile(`(?m)^compiling bin/t\.wasm \([0-9.]+ [kM]?B\)…$`).MatchString(r.stderr) ||
		!regexp.MustCompile(`(?m)^compiled bin/t\.wasm in [0-9.]+ ?[µm]?s$`).MatchString(r.stderr) {
		t.Errorf("no progress on stderr:\n%s", r.stderr)
	}
	var added addResult
	decodeOne(t, r.stdout, &added)
}

// TestStaticBinary builds bin/packs the way make build does and checks that
// it is statically linked: an ELF without an interpreter (no PT_INTERP),
// and that the version given to make reaches --version.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("checks an ELF binary")
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	bin := filepath.Join(t.TempDir(), "packs")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	cmd := exec.Command(makeBin, "-C", "../..", "build", "BIN="+bin, "GO="+goBin, "VERSION=v0.0.1-static")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("bin/packs has an interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("bin/packs needs %v", libs)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "packs v0.0.1-static\n") || !strings.Contains(string(out), "github.com/tetratelabs/wazero v1.") {
		t.Errorf("packs --version: %v\n%s", err, out)
	}

	// make install puts that binary, every man page and the three shells'
	// completions under DESTDIR/PREFIX, and make uninstall takes them away.
	dest := t.TempDir()
	install := func(target string) {
		t.Helper()
		cmd := exec.Command(makeBin, "-s", "-C", "../..", target, "BIN="+bin, "GO="+goBin, "VERSION=v0.0.1-static", "DESTDIR="+dest, "PREFIX=/usr")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
	}
	install("install")
	for rel, want := range map[string]string{
		"usr/bin/packs":                                  "",
		"usr/share/man/man1/packs.1":                     ".TH",
		"usr/share/man/man1/packs-add.1":                 ".TH",
		"usr/share/bash-completion/completions/packs":    "__start_packs",
		"usr/share/zsh/site-functions/_packs":            "#compdef packs",
		"usr/share/fish/vendor_completions.d/packs.fish": "complete -c packs",
	} {
		data, err := os.ReadFile(filepath.Join(dest, rel))
		if err != nil {
			t.Errorf("make install: %v", err)
			continue
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("make install: %s lacks %q", rel, want)
		}
	}
	if out, err := exec.Command(filepath.Join(dest, "usr/bin/packs"), "--version").Output(); err != nil || !strings.HasPrefix(string(out), "packs v0.0.1-static\n") {
		t.Errorf("the installed packs --version: %v\n%s", err, out)
	}
	install("uninstall")
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("make uninstall left %s", p)
		}
		return nil
	})
}
