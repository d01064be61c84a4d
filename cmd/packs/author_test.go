package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthorCommands: the authoring verbs' exit codes and messages, on a
// wat pack (the quickest toolchain).
func TestAuthorCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	packsCLI(t, "init", "greeter", "--lang", "cobol", "--dir", dir).mustCode(t, exitUsage)
	packsCLI(t, "init", "Bad_Name", "--lang", "wat", "--dir", dir).mustCode(t, exitUsage)
	r := packsCLI(t, "init", "greeter", "--lang", "wat", "--dir", dir).mustCode(t, exitOK)
	if !strings.Contains(r.stdout, filepath.Join(dir, "SKILL.md")) {
		t.Fatalf("init did not list SKILL.md: %q", r.stdout)
	}
	if msg := packsCLI(t, "init", "greeter", "--lang", "wat", "--dir", dir).mustCode(t, exitFailure).oneLineError(t); !strings.Contains(msg, "not empty") {
		t.Fatalf("init over a pack: %q", msg)
	}
	if msg := packsCLI(t, "build", t.TempDir()).mustCode(t, exitFailure).oneLineError(t); !strings.Contains(msg, "no Makefile") {
		t.Fatalf("build without a Makefile: %q", msg)
	}
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm (wabt) is not installed")
	}
	packsCLI(t, "build", dir).mustCode(t, exitOK)
	r = packsCLI(t, "test", dir).mustCode(t, exitOK)
	if !strings.Contains(r.stdout, "ok    says hello") {
		t.Fatalf("test report: %q", r.stdout)
	}
	// --json: one object a line, nothing else on stdout.
	lines := strings.Split(strings.TrimSpace(packsCLI(t, "test", dir, "--json").mustCode(t, exitOK).stdout), "\n")
	var cases []testCaseJSON
	for _, l := range lines {
		var tc testCaseJSON
		decodeOne(t, l, &tc)
		cases = append(cases, tc)
	}
	if len(cases) != 2 || cases[0].Name != "says hello" || !cases[0].Pass || cases[0].Status != "ok" || cases[0].Tool != "hello" || cases[0].Line == 0 ||
		len(cases[0].Failures) != 0 || cases[1].Status != "invalid_input" || !cases[1].Pass {
		t.Errorf("test --json: %+v", cases)
	}
	packsCLI(t, "lint", dir).mustCode(t, exitOK)
	packsCLI(t, "validate", dir).mustCode(t, exitOK)

	// A pack with a lint finding exits 1 and prints it as validate would.
	weather := weatherPack(t, "1.0.0")
	r = packsCLI(t, "lint", weather).mustCode(t, exitFailure)
	if !strings.Contains(r.stdout, ": warning: ") {
		t.Fatalf("lint output: %q", r.stdout)
	}
	if msg := packsCLI(t, "test", weather).mustCode(t, exitFailure).oneLineError(t); !strings.Contains(msg, "has no tests") {
		t.Fatalf("test without tests: %q", msg)
	}
}
