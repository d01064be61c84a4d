package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var now = utc("2024-03-06T00:00:00Z")

// incident writes an incident into a temp folder: an API whose database
// connections time out in a burst at 14:05, a worker logging JSON, a rotated
// gzip log, an nginx access log, and a file that is not a log.
func incident(t testing.TB) string {
	dir := t.TempDir()
	var api strings.Builder
	base := utc("2024-03-05T14:00:00Z")
	for i := range 60 { // one line every 10 s for ten minutes
		ts := base.Add(time.Duration(i) * 10 * time.Second).Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(&api, "%s INFO request served in %dms\n", ts, 20+i)
		if i%20 == 0 {
			fmt.Fprintf(&api, "%s ERROR cache miss storm for key user:%d\n", ts, i)
		}
		if i >= 30 && i < 36 { // 14:05:00 - 14:05:50
			for k := range 4 {
				fmt.Fprintf(&api, "%s ERROR db: connection to 10.0.0.%d:5432 timed out after %dms\n", ts, k+1, 1000+k)
			}
		}
	}
	api.WriteString("2024-03-05T14:09:59.000Z ERROR unhandled exception\n")
	api.WriteString("java.lang.IllegalStateException: boom\n") // no timestamp, no level: continues the entry
	api.WriteString("\tat com.acme.Api.handle(Api.java:42)\n")
	api.WriteString("\tat com.acme.Server.run(Server.java:7)\n")
	write(t, dir, "logs/api.log", api.String())
	write(t, dir, "logs/worker.jsonl",
		`{"ts":"2024-03-05T14:05:10Z","level":"error","msg":"job 881 failed","error":"db timeout"}`+"\n"+
			`{"ts":"2024-03-05T14:07:00Z","level":"info","msg":"job 882 done"}`+"\n"+
			`{"ts":"2024-03-05T14:08:00Z","level":"warn","msg":"queue depth 1200"}`+"\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("2024-03-04T09:00:00Z FATAL out of memory\n"))
	zw.Close()
	write(t, dir, "logs/old/api.log.1.gz", gz.String())
	write(t, dir, "nginx/access.log",
		`10.9.9.9 - - [05/Mar/2024:14:05:30 +0000] "GET /api/orders HTTP/1.1" 504 0 "-" "curl"`+"\n"+
			`10.9.9.9 - - [05/Mar/2024:14:05:31 +0000] "GET /health HTTP/1.1" 200 2 "-" "curl"`+"\n")
	write(t, dir, "notes.txt", "ERROR this is not a log file\n")
	return dir
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// call runs a tool the way the runtime does: argv[0], stdin, stdout, stderr.
func call(t *testing.T, dir, tool, input string) (map[string]any, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run([]string{tool}, strings.NewReader(input), &out, &errb, env{open: dirFS, workspace: dir, now: now})
	var res map[string]any
	if code == 0 {
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, out.String())
		}
	}
	return res, errb.String(), code
}

func num(v any) int { f, _ := v.(float64); return int(f) }

func TestTriage(t *testing.T) {
	dir := incident(t)
	res, stderr, code := call(t, dir, "triage", `{}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files := res["files"].([]any)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.(map[string]any)["path"].(string))
	}
	if got, want := strings.Join(paths, " "), "logs/api.log logs/old/api.log.1.gz logs/worker.jsonl nginx/access.log"; got != want {
		t.Errorf("files %q, want %q", got, want)
	}
	// 24 timeouts + 3 cache storms + 1 exception + 1 job + 1 OOM + 1 gateway timeout.
	if got := num(res["matched"]); got != 31 {
		t.Errorf("matched %d, want 31", got)
	}
	levels := res["levels"].(map[string]any)
	if num(levels["info"]) != 62 || num(levels["error"]) != 30 || num(levels["fatal"]) != 1 || num(levels["warn"]) != 1 || levels["unknown"] != nil {
		t.Errorf("levels %v", levels)
	}
	sigs := res["signatures"].([]any)
	top := sigs[0].(map[string]any)
	if top["signature"] != "db: connection to <ip> timed out after <n>ms" || num(top["count"]) != 24 {
		t.Fatalf("top signature %v", top)
	}
	if top["first"] != "2024-03-05T14:05:00Z" || top["last"] != "2024-03-05T14:05:50Z" {
		t.Errorf("first/last %v %v", top["first"], top["last"])
	}
	ex := top["example"].(map[string]any)
	if ex["file"] != "logs/api.log" || !strings.Contains(ex["text"].(string), "10.0.0.1:5432") {
		t.Errorf("example %v", ex)
	}
	tl := res["timeline"].(map[string]any)
	if tl["bucket"] != "30m0s" { // the matches span 29 hours: 58 buckets of 30 minutes
		t.Errorf("bucket %v", tl["bucket"])
	}
	var exception map[string]any
	for _, s := range sigs {
		if m := s.(map[string]any); m["signature"] == "unhandled exception" {
			exception = m
		}
	}
	if exception == nil || !strings.Contains(exception["example"].(map[string]any)["text"].(string), "boom\n\tat com.acme.Api.handle") {
		t.Errorf("stack trace not attached to its entry: %v", exception)
	}
}

func TestTriageSpike(t *testing.T) {
	dir := incident(t)
	res, stderr, code := call(t, dir, "triage", `{"paths": ["logs/api.log"], "bucket": "1m"}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	counts := res["timeline"].(map[string]any)["counts"].([]any)
	if len(counts) != 10 {
		t.Fatalf("%d buckets, want 10 (14:00 to 14:09)", len(counts))
	}
	spikes := res["spikes"].([]any)
	if len(spikes) != 1 {
		t.Fatalf("spikes %v", spikes)
	}
	s := spikes[0].(map[string]any)
	if s["start"] != "2024-03-05T14:05:00Z" || s["end"] != "2024-03-05T14:06:00Z" || num(s["count"]) != 24 {
		t.Errorf("spike %v", s)
	}
	if top := s["top_signatures"].([]any); len(top) != 1 || top[0] != "24× db: connection to <ip> timed out after <n>ms" {
		t.Errorf("spike signatures %v", top)
	}
}

func TestTriageWindowsAndFilters(t *testing.T) {
	dir := incident(t)
	tests := []struct {
		args    string
		matched int
	}{
		// The newest line is at 14:09:59, so the window opens at 14:04:59: the
		// timeouts (24), one cache storm, the exception, the job, the 504.
		{`{"last": "5m"}`, 28},
		{`{"since": "2024-03-05T14:05:00Z", "until": "2024-03-05T14:05:30Z"}`, 18},
		{`{"since": "2024-03-05"}`, 30},
		{`{"levels": ["fatal"]}`, 1},
		{`{"levels": ["warn"], "paths": ["nginx/*.log"]}`, 0},
		{`{"match": "TIMED OUT"}`, 24},
		{`{"regex": "key user:(0|40)$"}`, 2},
		{`{"paths": ["**/*.jsonl"]}`, 1},
		{`{"paths": ["logs/api.log"], "levels": ["info"], "match": "served in 20ms"}`, 1},
	}
	for _, tt := range tests {
		res, stderr, code := call(t, dir, "triage", tt.args)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tt.args, code, stderr)
			continue
		}
		if got := num(res["matched"]); got != tt.matched {
			t.Errorf("%s: matched %d, want %d", tt.args, got, tt.matched)
		}
	}
}

func TestSearchLogs(t *testing.T) {
	dir := incident(t)
	res, stderr, code := call(t, dir, "search_logs", `{"match": "timed out", "limit": 2}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if num(res["count"]) != 24 || res["truncated"] != true {
		t.Errorf("count %v truncated %v", res["count"], res["truncated"])
	}
	m := res["matches"].([]any)
	first := m[0].(map[string]any)
	if len(m) != 2 || first["file"] != "logs/api.log" || first["level"] != "error" || first["time"] != "2024-03-05T14:05:00Z" {
		t.Errorf("matches %v", m)
	}
	if line := num(first["line"]); line < 30 {
		t.Errorf("line %d", line)
	}
	res, _, code = call(t, dir, "search_logs", `{"levels": ["warn"]}`)
	if code != 0 || num(res["count"]) != 1 {
		t.Errorf("warnings: %v", res)
	}
}

func TestSyslogYear(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "syslog.log", "Dec 31 23:59:59 host app: ERROR year end\n")
	res, _, code := call(t, dir, "search_logs", `{"paths": ["syslog.log"], "levels": ["error"], "year": 2021}`)
	if code != 0 {
		t.Fatal(res)
	}
	if got := res["matches"].([]any)[0].(map[string]any)["time"]; got != "2021-12-31T23:59:59Z" {
		t.Errorf("time %v", got)
	}
}

func TestErrors(t *testing.T) {
	dir := incident(t)
	tests := []struct {
		tool, args, want string
	}{
		{"triage", `{"paths": ["*.csv"]}`, "no file matches *.csv; the workspace holds: logs/, nginx/, notes.txt"},
		{"triage", `{"paths": ["missing.log"]}`, "missing.log: no such file in the workspace"},
		{"triage", `{"paths": ["logs"]}`, `logs is a folder: use "logs/**/*.log"`},
		{"triage", `{"paths": ["logs\\\\*.log"]}`, "with \"/\" between folders"},
		{"triage", `{"paths": ["/nonexistent-dir/*.log"]}`, "cannot list /nonexistent-dir: no such file or folder (a path outside the workspace must also be granted)"},
		{"triage", `{"paths": ["/nonexistent-dir/app.log"]}`, "/nonexistent-dir/app.log: no such file or folder"},
		{"triage", `{"paths": ["../x/*.log"]}`, `".." would leave the workspace`},
		{"triage", `{"paths": ["[.log"]}`, "bad pattern"},
		{"triage", `{"levels": ["loud"]}`, `unknown level "loud"`},
		{"triage", `{"regex": "("}`, "regex:"},
		{"triage", `{"since": "yesterday"}`, `since "yesterday"`},
		{"triage", `{"last": "5 minutes"}`, `last "5 minutes"`},
		{"triage", `{"last": "5m", "since": "2024-03-05"}`, "not both"},
		{"triage", `{"bucket": "1ms"}`, "1s or more"},
		{"triage", `{"top": 0}`, "top must be"},
		{"triage", `{"unknown": 1}`, "unknown field"},
		{"triage", `{"year": 99999}`, "year 99999"},
		{"triage", `[`, "arguments:"},
		{"triage", `{"paths": ["notes.txt"], "last": "1h"}`, "last needs timestamps"},
		{"search_logs", `{}`, "say what to look for"},
		{"search_logs", `{"match": "x", "limit": 5000}`, "limit must be"},
	}
	for _, tt := range tests {
		_, stderr, code := call(t, dir, tt.tool, tt.args)
		if code != 1 || !strings.HasPrefix(stderr, "incident-triage: ") || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s %s: exit %d, stderr %q; want 1 and %q", tt.tool, tt.args, code, stderr, tt.want)
		}
	}
	if _, stderr, code := call(t, dir, "other", `{}`); code != 2 || !strings.Contains(stderr, "argv[0]") {
		t.Errorf("unknown tool: %d %q", code, stderr)
	}
}

func TestLongLinesAreCut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "big.log", "2024-03-05T14:00:00Z ERROR "+strings.Repeat("x", 3*maxLineBytes)+"\n2024-03-05T14:00:01Z ERROR after\n")
	res, stderr, code := call(t, dir, "search_logs", `{"paths": ["big.log"], "levels": ["error"]}`)
	if code != 0 {
		t.Fatal(stderr)
	}
	m := res["matches"].([]any)
	if len(m) != 2 || num(m[1].(map[string]any)["line"]) != 2 || len(m[0].(map[string]any)["text"].(string)) > maxTextBytes+3 {
		t.Errorf("matches %v", len(m))
	}
}

func FuzzGlob(f *testing.F) {
	for _, s := range []string{"**/*.log", "a/**/b/*.txt", "[a-z]*.log", "x/../y", "/abs", "a\\b", "**", "*.log.*"} {
		f.Add(s, "logs/a/app.log")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		for _, s := range g {
			if s == ".." {
				t.Fatalf("%q compiled with ..", pattern)
			}
		}
		g.match(strings.Split(name, "/"))
	})
}

func TestAbsolutePaths(t *testing.T) {
	ws, logs := t.TempDir(), t.TempDir()
	write(t, logs, "app/a.log", "2024-03-05T14:00:00Z ERROR disk full on /dev/sda1\n")
	write(t, logs, "app/b.log", "2024-03-05T14:00:01Z ERROR disk full on /dev/sdb1\n")
	res, stderr, code := call(t, ws, "triage", fmt.Sprintf(`{"paths": [%q, %q]}`, logs+"/**/*.log", logs+"/app/a.log"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var paths []string
	for _, f := range res["files"].([]any) {
		paths = append(paths, f.(map[string]any)["path"].(string))
	}
	if want := logs + "/app/a.log " + logs + "/app/b.log"; strings.Join(paths, " ") != want {
		t.Errorf("files %q, want %q", paths, want)
	}
	if num(res["matched"]) != 2 {
		t.Errorf("matched %v", res["matched"])
	}
	if dir, rel := splitAbsolute("/var/log/app/**/*.log"); dir != "/var/log/app" || rel != "**/*.log" {
		t.Errorf("splitAbsolute = %q, %q", dir, rel)
	}
	if dir, rel := splitAbsolute("/x.log"); dir != "/" || rel != "x.log" {
		t.Errorf("splitAbsolute = %q, %q", dir, rel)
	}
}
