package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Level is a normalized severity.
type Level int

const (
	LevelUnknown Level = iota
	LevelTrace
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
	LevelFatal
)

var levelNames = []string{"unknown", "trace", "debug", "info", "warn", "error", "fatal"}

func (l Level) String() string { return levelNames[l] }

// parseLevelName maps a level word from a log or from the arguments.
func parseLevelName(s string) (Level, bool) {
	switch strings.ToLower(s) {
	case "trace", "trc":
		return LevelTrace, true
	case "debug", "dbg":
		return LevelDebug, true
	case "info", "inf", "notice", "information":
		return LevelInfo, true
	case "warn", "warning", "wrn":
		return LevelWarn, true
	case "error", "err", "eror", "severe":
		return LevelError, true
	case "fatal", "ftl", "crit", "critical", "panic", "alert", "emerg", "emergency":
		return LevelFatal, true
	}
	return LevelUnknown, false
}

// Line is what one log line says, as far as it can be read.
type Line struct {
	Time    time.Time // zero when the line has no timestamp
	Level   Level
	Message string // the line without its timestamp and level
	// Cont is true for a line that continues the previous entry: a stack
	// frame, an indented detail, a "Caused by:".
	Cont bool
}

// parseLine reads a timestamp, a level and a message from one line, in
// the formats services actually write: JSON lines, logfmt, ISO 8601 and Go
// log prefixes, syslog, glog, epoch seconds, and the Apache/nginx access log
// (where a 5xx status reads as an error and a 4xx as a warning). year fills
// in formats that omit it (syslog, glog).
func parseLine(s string, year int) Line {
	if s == "" {
		return Line{}
	}
	if isContinuation(s) {
		return Line{Message: strings.TrimSpace(s), Cont: true}
	}
	if s[0] == '{' {
		if l, ok := parseJSONLine(s); ok {
			return l
		}
	}
	if l, ok := parseLogfmt(s); ok {
		return l
	}
	var l Line
	rest := s
	if t, r, ok := parseTimestamp(s, year); ok {
		l.Time, rest = t, r
	} else if t, lvl, r, ok := parseGlog(s, year); ok {
		l.Time, l.Level, rest = t, lvl, r
	} else if t, lvl, ok := parseAccessLog(s); ok {
		l.Time, l.Level = t, lvl
		l.Message = strings.TrimSpace(s)
		return l
	}
	if l.Level == LevelUnknown {
		l.Level, rest = findLevel(rest)
	}
	l.Message = cleanMessage(rest)
	return l
}

func isContinuation(s string) bool {
	switch {
	case s[0] == ' ' || s[0] == '\t':
		return true
	case strings.HasPrefix(s, "Caused by:"), strings.HasPrefix(s, "Traceback "), strings.HasPrefix(s, "goroutine "),
		strings.HasPrefix(s, "... ") && strings.HasSuffix(s, " more"):
		return true
	}
	return false
}

var (
	jsonTimeKeys  = []string{"time", "ts", "timestamp", "@timestamp", "t", "date", "datetime"}
	jsonLevelKeys = []string{"level", "lvl", "severity", "log.level", "loglevel", "levelname"}
	jsonMsgKeys   = []string{"msg", "message", "event", "log"}
	jsonErrKeys   = []string{"error", "err", "exception"}
)

func parseJSONLine(s string) (Line, bool) {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return Line{}, false
	}
	var l Line
	for _, k := range jsonTimeKeys {
		switch v := m[k].(type) {
		case string:
			if t, _, ok := parseTimestamp(v, 0); ok {
				l.Time = t
			}
		case float64:
			l.Time = epoch(v)
		}
		if !l.Time.IsZero() {
			break
		}
	}
	for _, k := range jsonLevelKeys {
		if v, ok := m[k].(string); ok {
			if lvl, ok := parseLevelName(v); ok {
				l.Level = lvl
				break
			}
		}
	}
	var parts []string
	for _, keys := range [][]string{jsonMsgKeys, jsonErrKeys} {
		for _, k := range keys {
			if v, ok := m[k]; ok && v != nil {
				if s, ok := v.(string); ok {
					parts = append(parts, s)
				} else if b, err := json.Marshal(v); err == nil {
					parts = append(parts, string(b))
				}
				break
			}
		}
	}
	l.Message = strings.Join(parts, ": ")
	if l.Message == "" {
		l.Message = s
	}
	return l, true
}

// parseLogfmt reads key=value lines (Go's slog text handler, logrus,
// Heroku): it needs a level key to be sure the line is logfmt.
func parseLogfmt(s string) (Line, bool) {
	if !strings.Contains(s, "level=") && !strings.Contains(s, "lvl=") && !strings.Contains(s, "severity=") {
		return Line{}, false
	}
	kv := map[string]string{}
	for i := 0; i < len(s); {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		k := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			for i < len(s) && s[i] != ' ' {
				i++
			}
			continue
		}
		key := s[k:i]
		i++
		var val string
		if i < len(s) && s[i] == '"' {
			j := i + 1
			var b strings.Builder
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			val, i = b.String(), j+1
		} else {
			j := i
			for j < len(s) && s[j] != ' ' {
				j++
			}
			val, i = s[i:j], j
		}
		kv[key] = val
	}
	var l Line
	found := false
	for _, k := range jsonLevelKeys {
		if lvl, ok := parseLevelName(kv[k]); ok {
			l.Level, found = lvl, true
			break
		}
	}
	if !found {
		return Line{}, false
	}
	for _, k := range jsonTimeKeys {
		if t, _, ok := parseTimestamp(kv[k], 0); ok {
			l.Time = t
			break
		}
	}
	var parts []string
	for _, keys := range [][]string{jsonMsgKeys, jsonErrKeys} {
		for _, k := range keys {
			if v := kv[k]; v != "" {
				parts = append(parts, v)
				break
			}
		}
	}
	l.Message = strings.Join(parts, ": ")
	if l.Message == "" {
		l.Message = s
	}
	return l, true
}

// epoch reads seconds (or milliseconds, for values past the year 5000)
// since 1970.
func epoch(v float64) time.Time {
	if v > 1e11 {
		v /= 1000
	}
	sec := int64(v)
	return time.Unix(sec, int64((v-float64(sec))*1e9)).UTC()
}

func digitsAt(s string, i, n int) (int, bool) {
	if i < 0 || i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseTimestamp reads a timestamp at the start of s, optionally inside
// brackets or quotes, and returns the time and the rest of the line.
// Timestamps without a zone are taken as UTC.
func parseTimestamp(s string, year int) (time.Time, string, bool) {
	open := ""
	if s != "" && (s[0] == '[' || s[0] == '"') {
		open, s = s[:1], s[1:]
	}
	t, n, ok := parseISO(s)
	if !ok {
		t, n, ok = parseSyslog(s, year)
	}
	if !ok {
		t, n, ok = parseEpoch(s)
	}
	if !ok {
		return time.Time{}, "", false
	}
	rest := s[n:]
	if open == "[" {
		rest = strings.TrimPrefix(rest, "]")
	} else if open == `"` {
		rest = strings.TrimPrefix(rest, `"`)
	}
	return t, rest, true
}

// parseISO reads 2006-01-02T15:04:05.999999999Z07:00 and its relatives: a
// space for the T, "/" between date parts (Go's log package), "," before the
// fraction (Python), optional seconds, "Z", "+0100" or "+01:00".
func parseISO(s string) (time.Time, int, bool) {
	y, ok1 := digitsAt(s, 0, 4)
	mo, ok2 := digitsAt(s, 5, 2)
	d, ok3 := digitsAt(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != s[7] || (s[4] != '-' && s[4] != '/') {
		return time.Time{}, 0, false
	}
	if len(s) < 16 || (s[10] != 'T' && s[10] != ' ') {
		return time.Time{}, 0, false
	}
	h, ok4 := digitsAt(s, 11, 2)
	mi, ok5 := digitsAt(s, 14, 2)
	if !ok4 || !ok5 || s[13] != ':' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 {
		return time.Time{}, 0, false
	}
	i, sec, nsec := 16, 0, 0
	if i < len(s) && s[i] == ':' {
		var ok bool
		if sec, ok = digitsAt(s, i+1, 2); !ok || sec > 60 {
			return time.Time{}, 0, false
		}
		i += 3
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			frac := s[i+1 : j]
			if len(frac) > 9 {
				frac = frac[:9]
			}
			if frac != "" {
				nsec, _ = strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
				i = j
			}
		}
	}
	loc := time.UTC
	if i < len(s) {
		switch c := s[i]; {
		case c == 'Z':
			i++
		case c == '+' || c == '-':
			oh, okh := digitsAt(s, i+1, 2)
			j := i + 3
			if j < len(s) && s[j] == ':' {
				j++
			}
			om, okm := digitsAt(s, j, 2)
			if okh && okm && oh < 24 && om < 60 {
				off := oh*3600 + om*60
				if c == '-' {
					off = -off
				}
				loc = time.FixedZone("", off)
				i = j + 2
			}
		}
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nsec, loc).UTC()
	return t, i, true
}

var months = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseSyslog reads "Mar  5 14:03:22" (the year comes from the caller).
func parseSyslog(s string, year int) (time.Time, int, bool) {
	if len(s) < 15 || year == 0 {
		return time.Time{}, 0, false
	}
	mo := 0
	for i, m := range months {
		if s[:3] == m {
			mo = i + 1
		}
	}
	if mo == 0 || s[3] != ' ' {
		return time.Time{}, 0, false
	}
	i := 4
	if s[i] == ' ' {
		i++
	}
	d, ok := digitsAt(s, i, 2)
	n := 2
	if !ok {
		d, ok = digitsAt(s, i, 1)
		n = 1
	}
	if !ok || d < 1 || d > 31 {
		return time.Time{}, 0, false
	}
	i += n
	h, ok1 := digitsAt(s, i+1, 2)
	mi, ok2 := digitsAt(s, i+4, 2)
	sec, ok3 := digitsAt(s, i+7, 2)
	if !ok1 || !ok2 || !ok3 || s[i] != ' ' || s[i+3] != ':' || s[i+6] != ':' {
		return time.Time{}, 0, false
	}
	return time.Date(year, time.Month(mo), d, h, mi, sec, 0, time.UTC), i + 9, true
}

// parseEpoch reads 10-digit seconds or 13-digit milliseconds since 1970,
// optionally with a fraction, followed by a space.
func parseEpoch(s string) (time.Time, int, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 10 && i != 13 {
		return time.Time{}, 0, false
	}
	j := i
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	}
	if j < len(s) && s[j] != ' ' && s[j] != '\t' {
		return time.Time{}, 0, false
	}
	whole, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return time.Time{}, 0, false
	}
	frac := s[min(i+1, j):j]
	if len(frac) > 9 {
		frac = frac[:9]
	}
	nsec, _ := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
	if i == 13 { // milliseconds
		return time.Unix(whole/1000, (whole%1000)*1e6+int64(nsec)/1000).UTC(), j, true
	}
	return time.Unix(whole, int64(nsec)).UTC(), j, true
}

// parseGlog reads glog's "E0305 14:03:22.123456 1234 file.go:12] msg".
func parseGlog(s string, year int) (time.Time, Level, string, bool) {
	if len(s) < 21 || year == 0 {
		return time.Time{}, 0, "", false
	}
	var lvl Level
	switch s[0] {
	case 'I':
		lvl = LevelInfo
	case 'W':
		lvl = LevelWarn
	case 'E':
		lvl = LevelError
	case 'F':
		lvl = LevelFatal
	}
	mo, ok1 := digitsAt(s, 1, 2)
	d, ok2 := digitsAt(s, 3, 2)
	h, ok3 := digitsAt(s, 6, 2)
	mi, ok4 := digitsAt(s, 9, 2)
	sec, ok5 := digitsAt(s, 12, 2)
	if lvl == LevelUnknown || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || s[5] != ' ' || s[8] != ':' || s[11] != ':' || mo < 1 || mo > 12 {
		return time.Time{}, 0, "", false
	}
	rest := s[14:]
	if i := strings.Index(rest, "] "); i >= 0 && i < 60 {
		rest = rest[i+2:]
	}
	return time.Date(year, time.Month(mo), d, h, mi, sec, 0, time.UTC), lvl, rest, true
}

// parseAccessLog reads the Common/Combined Log Format of Apache and nginx:
// host ident user [05/Mar/2024:14:03:22 +0000] "GET / HTTP/1.1" 503 ...
func parseAccessLog(s string) (time.Time, Level, bool) {
	open := strings.IndexByte(s, '[')
	if open < 0 || open > 80 || len(s) < open+28 {
		return time.Time{}, 0, false
	}
	t, err := time.Parse("02/Jan/2006:15:04:05 -0700", s[open+1:open+27])
	if err != nil || s[open+27] != ']' {
		return time.Time{}, 0, false
	}
	rest := s[open+28:]
	lvl := LevelInfo
	if q := strings.Index(rest, `" `); q >= 0 {
		if code, ok := digitsAt(rest, q+2, 3); ok {
			switch {
			case code >= 500:
				lvl = LevelError
			case code >= 400:
				lvl = LevelWarn
			}
		}
	}
	return t.UTC(), lvl, true
}

// findLevel looks for a level word near the start of rest: an upper-case
// word (ERROR), a bracketed one ([error]), "level=error", or "error:" first.
// It returns the level and rest with that word cut out.
func findLevel(rest string) (Level, string) {
	window := rest
	if len(window) > 120 {
		window = window[:120]
	}
	for i := 0; i < len(window); {
		c := window[i]
		if !isLetter(c) {
			i++
			continue
		}
		j := i
		for j < len(window) && (isLetter(window[j]) || window[j] == '.') {
			j++
		}
		word := window[i:j]
		if lvl, ok := parseLevelName(word); ok {
			before := strings.TrimRight(window[:i], " ")
			upper := strings.ToUpper(word) == word
			bracketed := strings.HasSuffix(before, "[") || strings.HasSuffix(before, "<") || strings.HasSuffix(before, "(")
			keyed := strings.HasSuffix(before, "level=") || strings.HasSuffix(before, "severity=") || strings.HasSuffix(before, "lvl=")
			leading := strings.TrimSpace(before) == "" && j < len(window) && window[j] == ':'
			if upper || bracketed || keyed || leading {
				cut := strings.TrimRight(before, "[<(")
				for _, k := range []string{"level=", "severity=", "lvl="} {
					cut = strings.TrimSuffix(cut, k)
				}
				after := strings.TrimLeft(rest[j:], "]>):")
				return lvl, joinSpace(cut, after)
			}
		}
		i = j
	}
	return LevelUnknown, rest
}

// joinSpace joins two parts of a line with exactly one space.
func joinSpace(a, b string) string {
	a, b = strings.TrimRight(a, " "), strings.TrimLeft(b, " ")
	if a == "" || b == "" {
		return a + b
	}
	return a + " " + b
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// cleanMessage trims separators that loggers put between the prefix and the
// message.
func cleanMessage(s string) string {
	return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "-:|>] "))
}

// parseTimeArg reads since/until: an RFC 3339 or ISO 8601 time (UTC when it
// has no zone), or a date alone.
func parseTimeArg(s string) (time.Time, bool) {
	if len(s) == 10 {
		s += "T00:00:00"
	}
	t, n, ok := parseISO(s)
	return t, ok && n == len(s)
}

// parseDuration reads "90s", "15m", "2h", "1d", "1w" or Go's "1h30m".
func parseDuration(s string) (time.Duration, bool) {
	if n := len(s); n > 1 && (s[n-1] == 'd' || s[n-1] == 'w') {
		v, err := strconv.Atoi(s[:n-1])
		if err != nil || v <= 0 {
			return 0, false
		}
		unit := 24 * time.Hour
		if s[n-1] == 'w' {
			unit *= 7
		}
		return time.Duration(v) * unit, true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}
