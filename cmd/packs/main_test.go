package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/testpg"
)

// fixture is the conformance pack from spec 002 §12.
const fixture = "../../packs/testdata/skills-system-validation"

// TestMain lets the test binary stand in for the packs binary: a child
// started with PACKS_CLI_CHILD=1 runs the CLI on its arguments.
func TestMain(m *testing.M) {
	if os.Getenv("PACKS_CLI_CHILD") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	// A child that is this race-built binary would sleep a second at
	// exit for late race reports (GORACE atexit_sleep_ms, 1000 by
	// default): that second was most of what a child packs command took.
	// This process keeps its own setting; the children read this one.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	cleanup := isolateHome()
	code := testpg.Main(m)
	removeBenchBins()
	cleanup()
	os.Exit(code)
}

// result is one CLI invocation.
type result struct {
	stdout, stderr string
	code           int
}

// packsCLI runs the CLI in-process through run, as main does.
func packsCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return result{out.String(), errb.String(), code}
}

// withHome runs the CLI against the state directory home.
func withHome(t *testing.T, home string, args ...string) result {
	t.Helper()
	return packsCLI(t, append([]string{"--home", home}, args...)...)
}

// mustCode fails the test unless r ended with code.
func (r result) mustCode(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

// oneLineError fails unless stderr's last line is one "packs: ..." error.
func (r result) oneLineError(t *testing.T) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "packs: ") {
		t.Fatalf("stderr does not end with a packs: error line:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "Usage:") {
		t.Fatalf("stderr holds a usage blob:\n%s", r.stderr)
	}
	return last
}

// writeFiles writes rel -> content under dir; a "+x" suffix on the name
// makes the file executable.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		mode := os.FileMode(0o644)
		if name, ok := strings.CutSuffix(rel, "+x"); ok {
			rel, mode = name, 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// weatherFiles is a pack asking for network and env_read, with one tool.
func weatherFiles(version string) map[string]string {
	return map[string]string{
		"SKILL.md": "---\nname: weather\ndescription: Weather forecasts for a place.\nlicense: MIT\n---\n# Weather\n\nCall forecast.\n",
		"skill.toml": `[skill]
id = "demo.weather"
name = "weather"
version = "` + version + `"
description = "Weather"
api_version = "1.0"

[capabilities]
network = ["api.weather.example"]
env_read = ["WEATHER_*"]
`,
		"tools.json": `[{"name": "forecast", "description": "Forecast for a place.\nReturns JSON.",
  "input_schema": {"type": "object", "properties": {"place": {"type": "string"}}, "required": ["place"]},
  "run": {"wasm": "bin/weather.wasm", "function": "forecast"}}]`,
		"bin/weather.wasm": "\x00asm\x01\x00\x00\x00",
		"docs/version.md":  version + "\n",
	}
}

func weatherPack(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "weather")
	writeFiles(t, dir, weatherFiles(version))
	return dir
}

func badPack(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "broken")
	writeFiles(t, dir, map[string]string{"SKILL.md": "---\nname: broken\nlicense: MIT\n---\nno description\n"})
	return dir
}

var findingLine = regexp.MustCompile(`^.+(:\d+)?: (error|warning): [a-z0-9-]+: .+$`)

func TestValidate(t *testing.T) {
	bad := badPack(t)
	notDir := filepath.Join(t.TempDir(), "file.txt")
	writeFiles(t, filepath.Dir(notDir), map[string]string{"file.txt": "x"})
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"the conformance fixture is clean", []string{fixture}, 0},
		{"a pack with errors", []string{bad}, 1},
		{"one bad pack among good ones", []string{fixture, bad, fixture}, 1},
		{"no path", nil, 2},
		{"unknown flag", []string{"--frobnicate", fixture}, 2},
		{"path that is a file", []string{fixture, notDir}, 2},
		{"path that does not exist", []string{filepath.Join(t.TempDir(), "nope")}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := packsCLI(t, append([]string{"validate"}, tt.args...)...).mustCode(t, tt.code)
			if tt.code == 2 {
				r.oneLineError(t)
				if r.stdout != "" {
					t.Errorf("usage error printed to stdout: %q", r.stdout)
				}
				return
			}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if line != "" && !findingLine.MatchString(line) {
					t.Errorf("stdout line is not a finding: %q", line)
				}
			}
			if tt.code == 0 {
				if r.stdout != "" {
					t.Errorf("clean pack printed findings: %q", r.stdout)
				}
				if want := fixture + ": ok\n"; r.stderr != want {
					t.Errorf("stderr: got %q, want %q", r.stderr, want)
				}
				return
			}
			if !strings.Contains(r.stdout, filepath.Join(bad, "SKILL.md")+":") || !strings.Contains(r.stdout, ": error: description-missing: ") {
				t.Errorf("stdout lacks the description-missing finding:\n%s", r.stdout)
			}
			r.oneLineError(t)
		})
	}
}

func TestValidateJSON(t *testing.T) {
	bad := badPack(t)
	r := packsCLI(t, "validate", "--json", fixture, bad).mustCode(t, 1)
	var raw []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("stdout is not one JSON array: %v\n%s", err, r.stdout)
	}
	if len(raw) == 0 {
		t.Fatal("no findings for the bad pack")
	}
	for _, f := range raw {
		var keys []string
		for k := range f {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"file", "line", "message", "pack", "rule", "severity"}; !slices.Equal(keys, want) {
			t.Errorf("finding keys: got %v, want %v", keys, want)
		}
		if f["pack"] != "broken" {
			t.Errorf("finding for pack %v, want only broken", f["pack"])
		}
	}
	clean := packsCLI(t, "validate", "--json", fixture).mustCode(t, 0)
	if strings.TrimSpace(clean.stdout) != "[]" {
		t.Errorf("clean pack: got %q, want []", clean.stdout)
	}
}

// listJSON runs list --json and decodes it.
func listJSON(t *testing.T, home string) []packJSON {
	t.Helper()
	r := withHome(t, home, "list", "--json").mustCode(t, 0)
	var out []packJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	return out
}

func TestAddListInfoRemove(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	src := weatherPack(t, "1.2.0")

	r := withHome(t, home, "add", src, "--grant", "network").mustCode(t, 0)
	for _, want := range []string{"weather 1.2.0 from file://", "tools: forecast", "network", "api.weather.example", "env_read", "WEATHER_*", "installed weather 1.2.0 (sha256:", "granted: network", "not granted: env_read"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("add output lacks %q:\n%s", want, r.stdout)
		}
	}
	withHome(t, home, "add", fixture, "--yes").mustCode(t, 0)

	list := withHome(t, home, "list").mustCode(t, 0)
	lines := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("list: want a header and two rows:\n%s", list.stdout)
	}
	if f := strings.Fields(lines[2]); !slices.Equal(f[:6], []string{"weather", "1.2.0", "ok", "forecast", "network,env_read", "network"}) {
		t.Errorf("weather row: got %q", f)
	}

	got := listJSON(t, home)
	if len(got) != 2 || got[0].Name != "skills-system-validation" || got[1].Name != "weather" {
		t.Fatalf("list --json: got %+v", got)
	}
	w := got[1]
	if w.Status != "ok" || w.Version != "1.2.0" || !slices.Equal(w.Tools, []string{"forecast"}) || !slices.Equal(w.Granted, []string{"network"}) ||
		len(w.Requested) != 2 || w.Requested[1].Capability != "env_read" || w.Requested[1].Granted || w.Requested[1].Resources[0] != "WEATHER_*" {
		t.Errorf("weather: got %+v", w)
	}
	if f := got[0]; f.Status != "ok" || len(f.Requested) != 0 || len(f.Tools) != 0 || f.Granted == nil {
		t.Errorf("fixture: got %+v", f)
	}

	info := withHome(t, home, "info", "weather").mustCode(t, 0)
	for _, want := range []string{"Weather forecasts for a place.", "status:", "forecast  (wasm bin/weather.wasm, function forecast)", "Forecast for a place.", "Returns JSON.", "license:", "MIT"} {
		if !strings.Contains(info.stdout, want) {
			t.Errorf("info lacks %q:\n%s", want, info.stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^  network +granted +api\.weather\.example$`).MatchString(info.stdout) ||
		!regexp.MustCompile(`(?m)^  env_read +not granted +WEATHER_\*$`).MatchString(info.stdout) {
		t.Errorf("info capabilities:\n%s", info.stdout)
	}
	var ij infoOut
	if err := json.Unmarshal([]byte(withHome(t, home, "info", "--json", "weather").mustCode(t, 0).stdout), &ij); err != nil {
		t.Fatal(err)
	}
	if ij.Name != "weather" || ij.EntryDoc != "SKILL.md" || len(ij.ToolDetails) != 1 || ij.ToolDetails[0].Description == "" {
		t.Errorf("info --json: got %+v", ij)
	}

	withHome(t, home, "remove", "weather").mustCode(t, 0)
	if got := listJSON(t, home); len(got) != 1 || got[0].Name != "skills-system-validation" {
		t.Errorf("after remove: %+v", got)
	}
	again := withHome(t, home, "remove", "weather").mustCode(t, 1)
	if line := again.oneLineError(t); !strings.Contains(line, "not installed") {
		t.Errorf("second remove: %q", line)
	}
	withHome(t, home, "info", "weather").mustCode(t, 1).oneLineError(t)
}

func TestAddUpgradeKeepsOneEntry(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "add", weatherPack(t, "1.0.0"), "--yes").mustCode(t, 0)
	withHome(t, home, "add", weatherPack(t, "2.0.0"), "--grant", "all").mustCode(t, 0)
	got := listJSON(t, home)
	if len(got) != 1 || got[0].Version != "2.0.0" || !slices.Equal(got[0].Granted, []string{"network", "env_read"}) {
		t.Fatalf("got %+v", got)
	}
	v, err := os.ReadFile(filepath.Join(home, "packs", "weather", "docs", "version.md"))
	if err != nil || string(v) != "2.0.0\n" {
		t.Fatalf("installed files: %q %v", v, err)
	}
}

// tarGz archives dir's files under a top-level folder top.
func tarGz(t *testing.T, files map[string]string, top string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[n]))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestAddTarball(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	archive := filepath.Join(t.TempDir(), "weather-1.0.0.tar.gz")
	writeFiles(t, filepath.Dir(archive), map[string]string{filepath.Base(archive): string(tarGz(t, weatherFiles("1.0.0"), "weather"))})
	r := withHome(t, home, "add", archive, "--grant", "none").mustCode(t, 0)
	if !strings.Contains(r.stdout, "installed weather 1.0.0") || strings.Contains(r.stdout, "granted: ") && !strings.Contains(r.stdout, "not granted: ") {
		t.Errorf("add output:\n%s", r.stdout)
	}
	got := listJSON(t, home)
	if len(got) != 1 || got[0].Name != "weather" || got[0].Status != "ok" || len(got[0].Granted) != 0 || !strings.HasSuffix(got[0].Source, "/weather-1.0.0.tar.gz") {
		t.Fatalf("got %+v", got)
	}

	evil := filepath.Join(t.TempDir(), "evil.tgz")
	writeFiles(t, filepath.Dir(evil), map[string]string{"evil.tgz": string(tarGz(t, map[string]string{"../../escape": "x"}, "weather"))})
	line := withHome(t, home, "add", evil).mustCode(t, 1).oneLineError(t)
	if !strings.Contains(line, "unsafe archive") {
		t.Errorf("unsafe archive: %q", line)
	}
}

func TestAddRefusesInvalidPack(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	bad := badPack(t)
	r := withHome(t, home, "add", bad).mustCode(t, 1)
	if !strings.Contains(r.stderr, filepath.Join(bad, "SKILL.md")+":") || !strings.Contains(r.stderr, "description-missing") {
		t.Errorf("findings not shown with the source's file names:\n%s", r.stderr)
	}
	r.oneLineError(t)
	if got := listJSON(t, home); len(got) != 0 {
		t.Errorf("installed anyway: %+v", got)
	}
}

func TestAddGrantFlag(t *testing.T) {
	src := weatherPack(t, "1.0.0")
	tests := []struct {
		grant string
		code  int
		want  []string
	}{
		{"all", 0, []string{"network", "env_read"}},
		{"none", 0, []string{}},
		{"env_read", 0, []string{"env_read"}},
		{" network , env_read ", 0, []string{"network", "env_read"}},
		{"teleport", 2, nil},
		{"secrets_access", 2, nil}, // a real capability the pack does not ask for
	}
	for _, tt := range tests {
		t.Run(tt.grant, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			r := withHome(t, home, "add", src, "--grant", tt.grant).mustCode(t, tt.code)
			if tt.code != 0 {
				r.oneLineError(t)
				if got := listJSON(t, home); len(got) != 0 {
					t.Errorf("installed despite the bad --grant: %+v", got)
				}
				return
			}
			if got := listJSON(t, home); len(got) != 1 || !slices.Equal(got[0].Granted, tt.want) {
				t.Errorf("granted: got %+v, want %v", got, tt.want)
			}
		})
	}
}

// TestAddPrompts drives the questions a person at a terminal answers.
func TestAddPrompts(t *testing.T) {
	src := weatherPack(t, "1.0.0")
	tests := []struct {
		name, input string
		yes         bool
		code        int
		granted     []string
	}{
		{"grant network, refuse env_read, accept the install", "y\nn\n\n", false, 0, []string{"network"}},
		{"grant both", "yes\nY\ny\n", false, 0, []string{"network", "env_read"}},
		{"decline the install", "y\ny\nn\n", false, 1, nil},
		{"end of input grants nothing and declines", "", false, 1, nil},
		{"--yes asks nothing and grants nothing", "y\ny\ny\n", true, 0, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			var out, errb bytes.Buffer
			c := &cli{stdin: bufio.NewReader(strings.NewReader(tt.input)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, interactive: true}
			args := []string{"--home", home, "add", src}
			if tt.yes {
				args = append(args, "--yes")
			}
			if code := c.run(context.Background(), args); code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out.String(), errb.String())
			}
			asked := strings.Count(errb.String(), "?")
			if tt.yes && asked != 0 || !tt.yes && asked == 0 {
				t.Errorf("asked %d questions with --yes=%v:\n%s", asked, tt.yes, errb.String())
			}
			got := listJSON(t, home)
			if tt.granted == nil {
				if len(got) != 0 {
					t.Errorf("installed after a no: %+v", got)
				}
				return
			}
			if len(got) != 1 || !slices.Equal(got[0].Granted, tt.granted) {
				t.Errorf("granted: got %+v, want %v", got, tt.granted)
			}
		})
	}
}

func TestListShowsModified(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	withHome(t, home, "add", weatherPack(t, "1.0.0"), "--yes").mustCode(t, 0)
	withHome(t, home, "add", fixture, "--yes").mustCode(t, 0)
	installed := filepath.Join(home, "packs", "weather")
	writeFiles(t, installed, map[string]string{"SKILL.md": "---\nname: weather\ndescription: Now does something else.\n---\nbody\n"})

	got := listJSON(t, home)
	if len(got) != 2 || got[1].Name != "weather" || got[1].Status != "modified" || got[0].Status != "ok" {
		t.Fatalf("got %+v", got)
	}
	list := withHome(t, home, "list").mustCode(t, 0)
	if !regexp.MustCompile(`(?m)^weather +1\.0\.0 +modified `).MatchString(list.stdout) {
		t.Errorf("list does not show weather as modified:\n%s", list.stdout)
	}
	info := withHome(t, home, "info", "weather").mustCode(t, 0)
	if !strings.Contains(info.stdout, "modified") || !strings.Contains(info.stdout, "does not run") {
		t.Errorf("info:\n%s", info.stdout)
	}

	if err := os.RemoveAll(installed); err != nil {
		t.Fatal(err)
	}
	if got := listJSON(t, home); got[1].Status != "missing" {
		t.Errorf("deleted folder: status %q, want missing", got[1].Status)
	}
}

func TestCommandLine(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no command", nil, 2},
		{"unknown command", []string{"frobnicate"}, 2},
		{"help", []string{"--help"}, 0},
		{"command help", []string{"add", "--help"}, 0},
		{"add without source", []string{"--home", home, "add"}, 2},
		{"add with two sources", []string{"--home", home, "add", "a", "b"}, 2},
		{"add of a missing folder", []string{"--home", home, "add", filepath.Join(home, "nope")}, 1},
		{"add of a plain file", []string{"--home", home, "add", "main.go"}, 1},
		{"info without name", []string{"--home", home, "info"}, 2},
		{"list with an argument", []string{"--home", home, "list", "x"}, 2},
		{"remove unknown flag", []string{"--home", home, "remove", "--force", "x"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := packsCLI(t, tt.args...).mustCode(t, tt.code)
			if tt.code == 0 {
				if !strings.Contains(r.stdout, "Usage:") {
					t.Errorf("help not on stdout:\n%s", r.stdout)
				}
				return
			}
			if len(tt.args) > 0 {
				r.oneLineError(t)
			}
		})
	}
}

func TestHomeFromEnvironment(t *testing.T) {
	home := filepath.Join(t.TempDir(), "from-env")
	t.Setenv("PACKS_HOME", home)
	packsCLI(t, "add", weatherPack(t, "1.0.0"), "--yes").mustCode(t, 0)
	if _, err := os.Stat(filepath.Join(home, "packs.lock")); err != nil {
		t.Fatalf("PACKS_HOME not used: %v", err)
	}
	other := filepath.Join(t.TempDir(), "from-flag")
	if got := listJSON(t, other); len(got) != 0 {
		t.Errorf("--home did not win over PACKS_HOME: %+v", got)
	}
	withHome(t, other, "add", fixture, "--yes").mustCode(t, 0)
	if got := listJSON(t, other); len(got) != 1 {
		t.Errorf("--home did not win over PACKS_HOME: %+v", got)
	}
	fi, err := os.Stat(other)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v %v, want mode 0700", fi, err)
	}
}
