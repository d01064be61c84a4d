package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/packs-run/packs/packs
cpu: Some CPU
BenchmarkInstall1MB-2   	      36	  31875512 ns/op	  32.90 MB/s	  123456 B/op	    1234 allocs/op
BenchmarkDiscover1000-2 	      50	  21000000 ns/op	  2000 B/op	      20 allocs/op
PASS
ok  	github.com/packs-run/packs/packs	3.1s
pkg: github.com/packs-run/packs/runtime
BenchmarkCall/extism-2  	  20000	     61234 ns/op	        12.5 calls/ms
BenchmarkNotAResult this line is a log
PASS
`

func TestParseAndWrite(t *testing.T) {
	tab, failed, err := parse(strings.NewReader(sample), &bytes.Buffer{})
	if err != nil || failed {
		t.Fatalf("parse: failed=%v err=%v", failed, err)
	}
	if len(tab.results) != 3 {
		t.Fatalf("got %d results, want 3", len(tab.results))
	}
	if got, want := strings.Join(tab.units, ","), "ns/op,B/op,allocs/op,MB/s,calls/ms"; got != want {
		t.Errorf("units: got %s, want %s", got, want)
	}
	var out bytes.Buffer
	tab.write(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("got %d lines, want 5:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
			t.Errorf("columns not aligned:\n%s", out.String())
			break
		}
	}
	for _, want := range []string{"| packs ", "| BenchmarkInstall1MB ", "| 31.88ms ", "| runtime ", "| BenchmarkCall/extism ", "| 61.23µs ", "| 12.5 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseFailure(t *testing.T) {
	var errw bytes.Buffer
	_, failed, err := parse(strings.NewReader("pkg: x\n--- FAIL: BenchmarkX\nFAIL\tx\t0.1s\n"), &errw)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v, want failed", failed, err)
	}
	if !strings.Contains(errw.String(), "--- FAIL: BenchmarkX") {
		t.Errorf("failure not copied to stderr: %q", errw.String())
	}
}
