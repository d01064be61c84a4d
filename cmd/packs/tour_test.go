package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/packs-run/packs/internal/testcache"
)

// TestReadmeTour runs the README's tour verbatim, in order, on a fresh
// home: every "$ " command of its console blocks in bash, with this binary
// as packs, from the repository's root. What each prints must be what the
// README shows, once what differs from run to run (digests, times,
// durations, ids, the repository's path) is masked.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example packs")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-s", "-C", filepath.Join(repo, "wasm-examples"), "json-tools/bin/json-tools.wasm", "json-tools/bin/json-schema.wasm",
		"web-reader/bin/web-reader.wasm", "web-reader/bin/html-to-markdown.wasm").CombinedOutput(); err != nil {
		t.Fatalf("building the example packs: %v\n%s", err, out)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nPACKS_CLI_CHILD=1 exec " + exe + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "packs"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := tourSteps(t, filepath.Join(repo, "README.md"))
	if len(steps) < 8 {
		t.Fatalf("found %d tour commands in the README", len(steps))
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "PACKS_HOME="+filepath.Join(t.TempDir(), "home"), "PACKS_POLICY=", "PACKS_CACHE="+testcache.Dir())
	for _, s := range steps {
		cmd := exec.Command("bash", "-c", s.command)
		cmd.Dir, cmd.Env = repo, env
		out, _ := cmd.CombinedOutput()
		got, want := tourMask(string(out), repo), tourMask(s.output, repo)
		if got != want {
			t.Errorf("$ %s\nREADME shows:\n%s\nprinted:\n%s", s.command, s.output, out)
		}
	}
}

type tourStep struct{ command, output string }

// tourSteps reads the console blocks of the README's "A tour" section.
func tourSteps(t *testing.T, readme string) []tourStep {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		steps           []tourStep
		inTour, inBlock bool
		cur             *tourStep
		continuing      bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inTour = line == "## A tour"
		case !inTour:
		case line == "```console":
			inBlock = true
		case inBlock && line == "```":
			inBlock, cur = false, nil
		case !inBlock:
		case continuing:
			cur.command += "\n" + line
			continuing = strings.HasSuffix(line, `\`)
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, tourStep{command: strings.TrimPrefix(line, "$ ")})
			cur = &steps[len(steps)-1]
			continuing = strings.HasSuffix(line, `\`)
		case cur != nil:
			cur.output += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

var tourMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`sha256:[0-9a-f]{64}`), "sha256:DIGEST"},
	{regexp.MustCompile(`\b[0-9a-f]{16,64}\b`), "HEX"},
	{regexp.MustCompile(`agent_[0-9a-f]+`), "agent_ID"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`), "TIME"},
	{regexp.MustCompile(`\b\d+(\.\d+)? ?(ms|s|µs)\b`), "DURATION"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

// tourMask masks what differs from run to run, and the repository's path.
func tourMask(s, repo string) string {
	s = strings.ReplaceAll(s, repo, "/work/main")
	for _, m := range tourMasks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return strings.TrimSpace(s)
}
