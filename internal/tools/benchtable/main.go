// Command benchtable turns `go test -bench` output on stdin into an aligned
// Markdown table on stdout. Lines that report a failure are copied to stderr
// and make it exit 1, so `make bench` fails when a benchmark does.
//
// A benchmark measured against peers names them as sub-benchmarks:
// BenchmarkX/case/packs and its siblings BenchmarkX/case/peer=NAME. Each
// peer's row gets a ratio: the subject's figure over the peer's, for the
// first of cpu-ns, p50-ns, calls/s and ns/op that both report (above 1 for a time
// means the subject is slower, below 1 for calls/s means it is slower),
// and for a time what the subject adds to the peer's ("+1.10ms": a goal
// such as "confinement adds at most 2 ms p50" reads there).
//
//	go test -run='^$' -bench=. -benchmem ./... | go run ./internal/tools/benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func main() {
	t, failed, err := parse(os.Stdin, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	t.write(os.Stdout)
	if failed {
		os.Exit(1)
	}
}

// result is one benchmark line.
type result struct {
	pkg, name  string
	iterations string
	metrics    map[string]string // unit -> value, e.g. "B/op" -> "512"
}

// table is every result plus the units seen, in order of appearance.
type table struct {
	results []result
	units   []string
}

// parse reads benchmark output. Failure lines go to errw.
func parse(r io.Reader, errw io.Writer) (table, bool, error) {
	var t table
	var pkg string
	failed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		case strings.HasPrefix(line, "Benchmark"):
			if res, ok := parseResult(pkg, line); ok {
				t.add(res)
			}
		case strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "panic:"):
			failed = true
			fmt.Fprintln(errw, line)
		}
	}
	return t, failed, sc.Err()
}

// parseResult parses "BenchmarkX-8  100  123 ns/op  64 B/op  2 allocs/op".
func parseResult(pkg, line string) (result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return result{}, false
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return result{}, false
	}
	name := f[0]
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	res := result{pkg: pkg, name: name, iterations: f[1], metrics: map[string]string{}}
	for i := 2; i+1 < len(f); i += 2 {
		if _, err := strconv.ParseFloat(f[i], 64); err != nil {
			return result{}, false
		}
		res.metrics[f[i+1]] = f[i]
	}
	return res, true
}

func (t *table) add(r result) {
	for _, u := range sortedUnits(r.metrics) {
		known := false
		for _, have := range t.units {
			known = known || have == u
		}
		if !known {
			t.units = append(t.units, u)
		}
	}
	t.results = append(t.results, r)
}

// sortedUnits puts the standard units first, then the rest by name.
func sortedUnits(m map[string]string) []string {
	var out []string
	for _, u := range []string{"ns/op", "B/op", "allocs/op", "MB/s"} {
		if _, ok := m[u]; ok {
			out = append(out, u)
		}
	}
	var rest []string
	for u := range m {
		switch u {
		case "ns/op", "B/op", "allocs/op", "MB/s":
		default:
			rest = append(rest, u)
		}
	}
	for i := 1; i < len(rest); i++ { // insertion sort: a handful of units
		for j := i; j > 0 && rest[j] < rest[j-1]; j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	return append(out, rest...)
}

// peerPrefix starts the last element of a peer's benchmark name.
const peerPrefix = "peer="

// ratioUnits are the figures a ratio is taken of, in order of preference.
// cpu-ns is the CPU time (user and system) of a process the benchmark
// started, per operation: what a cold command costs, whatever the load.
var ratioUnits = []string{"cpu-ns", "p50-ns", "calls/s", "ns/op"}

// ratios returns, for each result that is a peer, the cell saying how its
// subject compares: "packs 2.80× p50-ns, +1.10ms". A peer's subject is the first
// sibling (same package, same name up to the last "/") that is no peer.
func (t table) ratios() []string {
	out := make([]string, len(t.results))
	for i, r := range t.results {
		group, last, ok := cut(r.name)
		if !ok || !strings.HasPrefix(last, peerPrefix) {
			continue
		}
		for _, s := range t.results {
			sg, sl, ok := cut(s.name)
			if !ok || s.pkg != r.pkg || sg != group || strings.HasPrefix(sl, peerPrefix) {
				continue
			}
			out[i] = ratio(sl, s.metrics, r.metrics)
			break
		}
	}
	return out
}

// cut splits a benchmark name at its last "/".
func cut(name string) (group, last string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// ratio is subject's figure over peer's, for the first unit of ratioUnits
// both report, and their difference when it is a time (in nanoseconds).
func ratio(subject string, s, p map[string]string) string {
	for _, u := range ratioUnits {
		sv, err1 := strconv.ParseFloat(s[u], 64)
		pv, err2 := strconv.ParseFloat(p[u], 64)
		if err1 != nil || err2 != nil || pv == 0 {
			continue
		}
		cell := fmt.Sprintf("%s %.2f× %s", subject, sv/pv, u)
		if strings.HasSuffix(u, "ns") || u == "ns/op" {
			sign := "+"
			if sv < pv {
				sign = "-"
			}
			cell += ", " + sign + humanTime(strconv.FormatFloat(math.Abs(sv-pv), 'f', -1, 64))
		}
		return cell
	}
	return ""
}

// write renders the table with every column padded to its widest cell.
// The ratio column is there when some benchmark has a peer.
func (t table) write(w io.Writer) {
	head := []string{"package", "benchmark", "iterations", "time/op"}
	head = append(head, t.units...)
	ratios := t.ratios()
	withRatio := slices.ContainsFunc(ratios, func(s string) bool { return s != "" })
	if withRatio {
		head = append(head, "vs peer")
	}
	rows := [][]string{head}
	for i, r := range t.results {
		row := []string{shortPkg(r.pkg), r.name, r.iterations, humanTime(r.metrics["ns/op"])}
		for _, u := range t.units {
			row = append(row, r.metrics[u])
		}
		if withRatio {
			row = append(row, ratios[i])
		}
		rows = append(rows, row)
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
}

// shortPkg drops the module path.
func shortPkg(p string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p, "github.com/packs-run/packs"), "/")
}

// humanTime renders a ns/op value as a duration, e.g. "1.52ms".
func humanTime(ns string) string {
	v, err := strconv.ParseFloat(ns, 64)
	if err != nil {
		return ""
	}
	d := time.Duration(v)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.1fns", v)
}
