package main

import (
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name, line string
		time       string // RFC 3339, "" for none
		level      Level
		msg        string
		cont       bool
	}{
		{"iso with level word", "2024-03-05T14:03:22.123Z ERROR db: connection refused", "2024-03-05T14:03:22.123Z", LevelError, "db: connection refused", false},
		{"iso space, offset, bracketed level", "2024-03-05 16:03:22+02:00 [warn] disk 91% full", "2024-03-05T14:03:22Z", LevelWarn, "disk 91% full", false},
		{"python logging", "2024-03-05 14:03:22,500 - api - CRITICAL - out of memory", "2024-03-05T14:03:22.5Z", LevelFatal, "api - - out of memory", false},
		{"go log prefix", "2024/03/05 14:03:22 http: panic serving 10.0.0.1:5000", "2024-03-05T14:03:22Z", LevelUnknown, "http: panic serving 10.0.0.1:5000", false},
		{"bracketed timestamp", "[2024-03-05T14:03:22Z] INFO started", "2024-03-05T14:03:22Z", LevelInfo, "started", false},
		{"no seconds", "2024-03-05T14:03 ERROR x", "2024-03-05T14:03:00Z", LevelError, "x", false},
		{"logfmt", `time=2024-03-05T14:03:22Z level=error msg="write \"a\" failed" err=EOF`, "2024-03-05T14:03:22Z", LevelError, `write "a" failed: EOF`, false},
		{"logfmt without a level is text", `2024-03-05T14:03:22Z user=bob action=login`, "2024-03-05T14:03:22Z", LevelUnknown, "user=bob action=login", false},
		{"syslog", "Mar  5 14:03:22 web1 nginx[77]: ERROR upstream timed out", "2024-03-05T14:03:22Z", LevelError, "web1 nginx[77]: upstream timed out", false},
		{"glog", "E0305 14:03:22.123456    1234 server.go:88] rpc failed: deadline", "2024-03-05T14:03:22Z", LevelError, "rpc failed: deadline", false},
		{"epoch millis", "1709647402123 WARN slow query", "2024-03-05T14:03:22.123Z", LevelWarn, "slow query", false},
		{"access log 5xx", `10.1.1.1 - - [05/Mar/2024:14:03:22 +0000] "GET /api HTTP/1.1" 503 12 "-" "curl"`, "2024-03-05T14:03:22Z", LevelError, `10.1.1.1 - - [05/Mar/2024:14:03:22 +0000] "GET /api HTTP/1.1" 503 12 "-" "curl"`, false},
		{"access log 404", `::1 - - [05/Mar/2024:14:03:22 +0100] "GET /x HTTP/1.1" 404 0`, "2024-03-05T13:03:22Z", LevelWarn, `::1 - - [05/Mar/2024:14:03:22 +0100] "GET /x HTTP/1.1" 404 0`, false},
		{"access log 200", `h - - [05/Mar/2024:14:03:22 +0000] "GET / HTTP/1.1" 200 5`, "2024-03-05T14:03:22Z", LevelInfo, `h - - [05/Mar/2024:14:03:22 +0000] "GET / HTTP/1.1" 200 5`, false},
		{"json line", `{"ts":"2024-03-05T14:03:22Z","level":"ERROR","msg":"payment failed","error":"card declined"}`, "2024-03-05T14:03:22Z", LevelError, "payment failed: card declined", false},
		{"json epoch", `{"time":1709647402.5,"severity":"warning","message":"retrying"}`, "2024-03-05T14:03:22.5Z", LevelWarn, "retrying", false},
		{"json error object", `{"level":"fatal","msg":"boom","err":{"code":7}}`, "", LevelFatal, `boom: {"code":7}`, false},
		{"lower-case word in prose is not a level", "2024-03-05T14:03:22Z user reported an error in checkout", "2024-03-05T14:03:22Z", LevelUnknown, "user reported an error in checkout", false},
		{"leading level word", "error: cannot open config", "", LevelError, "cannot open config", false},
		{"stack frame", "\tat com.acme.Db.query(Db.java:42)", "", LevelUnknown, "at com.acme.Db.query(Db.java:42)", true},
		{"caused by", "Caused by: java.net.SocketTimeoutException", "", LevelUnknown, "Caused by: java.net.SocketTimeoutException", true},
		{"not a date", "2024-13-45T99:99:99 ERROR x", "", LevelError, "2024-13-45T99:99:99 x", false},
		{"plain", "just some text", "", LevelUnknown, "just some text", false},
	}
	for _, tt := range tests {
		got := parseLine(tt.line, 2024)
		var want time.Time
		if tt.time != "" {
			want = utc(tt.time)
		}
		if !got.Time.Equal(want) || got.Level != tt.level || got.Message != tt.msg || got.Cont != tt.cont {
			t.Errorf("%s:\n got %v %v %q cont=%v\nwant %v %v %q cont=%v", tt.name, got.Time, got.Level, got.Message, got.Cont, want, tt.level, tt.msg, tt.cont)
		}
	}
}

func TestArgumentTimes(t *testing.T) {
	for s, want := range map[string]string{
		"2024-03-05":                "2024-03-05T00:00:00Z",
		"2024-03-05T14:00:00Z":      "2024-03-05T14:00:00Z",
		"2024-03-05 14:00":          "2024-03-05T14:00:00Z",
		"2024-03-05T14:00:00-05:00": "2024-03-05T19:00:00Z",
	} {
		got, ok := parseTimeArg(s)
		if !ok || !got.Equal(utc(want)) {
			t.Errorf("parseTimeArg(%q) = %v, %v; want %s", s, got, ok, want)
		}
	}
	for _, s := range []string{"yesterday", "2024-03-05T14:00:00Zjunk", "05/03/2024"} {
		if _, ok := parseTimeArg(s); ok {
			t.Errorf("parseTimeArg(%q) accepted", s)
		}
	}
	for s, want := range map[string]time.Duration{"90s": 90 * time.Second, "15m": 15 * time.Minute, "1h30m": 90 * time.Minute, "2d": 48 * time.Hour, "1w": 168 * time.Hour} {
		if got, ok := parseDuration(s); !ok || got != want {
			t.Errorf("parseDuration(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "0s", "-5m", "xd", "3"} {
		if _, ok := parseDuration(s); ok {
			t.Errorf("parseDuration(%q) accepted", s)
		}
	}
}

func TestSignature(t *testing.T) {
	tests := []struct{ in, want string }{
		{"timeout after 1503ms talking to 10.0.0.7:5432", "timeout after <n>ms talking to <ip>"},
		{"request 3f2a9c1e-77aa-4b1c-9d2e-0123456789ab failed", "request <uuid> failed"},
		{"user alice@example.com locked out (attempt 5)", "user <email> locked out (attempt <n>)"},
		{"GET https://api.example.com/v1/users?id=42&token=abc failed", "GET https://api.example.com/v1/users?<query> failed"},
		{"commit a1b2c3d4e5 and deadbeef at 0x7ffe12", "commit <hex> and deadbeef at <hex>"},
		{`key "order:991" not found`, `key "<str>" not found`},
		{"v1.2.3   released\tnow", "v1.2.3 released now"},
		{strings.Repeat("é", 200), strings.Repeat("é", 80) + "…"},
	}
	for _, tt := range tests {
		if got := signature(tt.in); got != tt.want {
			t.Errorf("signature(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"2024-03-05T14:03:22.123Z ERROR x", "Mar  5 14:03:22 h p: x", "E0305 14:03:22.123456 1 f.go:1] x",
		`{"ts":1,"level":"error"}`, "1709647402 x", `h - - [05/Mar/2024:14:03:22 +0000] "GET /" 500 1`,
		"2024-03-05T14:03:22+99:99", "[", "\tat x", "level=error", "2024/03/05 14:03",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := parseLine(s, 2024)
		if l.Level < LevelUnknown || l.Level > LevelFatal {
			t.Fatalf("level %d out of range for %q", l.Level, s)
		}
		_ = signature(l.Message)
	})
}
