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

func TestPeerRatio(t *testing.T) {
	in := `pkg: github.com/packs-run/packs/runtime
BenchmarkWarm/go/packs-2           	 300	 5604836 ns/op	 130000 p50-ns
BenchmarkWarm/go/peer=reused-2     	 300	  149687 ns/op	 100000 p50-ns
BenchmarkWarm/go/peer=fresh-2      	 300	 6530324 ns/op	 260000 p50-ns
BenchmarkTput/go/packs-2           	 300	 8574488 ns/op	 100 calls/s
BenchmarkTput/go/peer=reused-2     	 300	  274156 ns/op	 4000 calls/s
BenchmarkTput/rust/peer=reused-2   	 300	  274156 ns/op	 4000 calls/s
BenchmarkAlone-2                   	 300	  274156 ns/op
BenchmarkVersion/packs-2           	 100	  14000000 ns/op	 9000000 cpu-ns
BenchmarkVersion/peer=hello-2      	 100	   2000000 ns/op	 1000000 cpu-ns
`
	tab, failed, err := parse(strings.NewReader(in), &bytes.Buffer{})
	if err != nil || failed {
		t.Fatalf("parse: failed=%v err=%v", failed, err)
	}
	got := tab.ratios()
	want := []string{"", "packs 1.30× p50-ns, +30.00µs", "packs 0.50× p50-ns, -130.00µs", "", "packs 0.03× calls/s", "", "", "", "packs 9.00× cpu-ns, +8.00ms"}
	if len(got) != len(want) {
		t.Fatalf("got %d ratios, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d (%s): got %q, want %q", i, tab.results[i].name, got[i], want[i])
		}
	}
	var out bytes.Buffer
	tab.write(&out)
	if !strings.Contains(out.String(), "| vs peer ") || !strings.Contains(out.String(), "| packs 1.30× p50-ns, +30.00µs ") {
		t.Errorf("table lacks the ratio column:\n%s", out.String())
	}
	tab, _, _ = parse(strings.NewReader(sample), &bytes.Buffer{})
	out.Reset()
	tab.write(&out)
	if strings.Contains(out.String(), "vs peer") {
		t.Errorf("a table without peers has a ratio column:\n%s", out.String())
	}
}
