package main

import (
	"regexp"
	"strings"
)

// A signature is a message with its variable parts masked, so that
// "timeout after 1503ms talking to 10.0.0.7:5432" and "timeout after 998ms
// talking to 10.0.0.9:5432" count as one kind of error.
var masks = []struct {
	re   *regexp.Regexp
	with string
	keep func(string) bool // when set, only matches it accepts are masked
}{
	{regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), "<uuid>", nil},
	{regexp.MustCompile(`[\w.+-]+@[\w-]+(\.[\w-]+)+`), "<email>", nil},
	{regexp.MustCompile(`(https?://[^\s?"'#]+)\?[^\s"'#]*`), "$1?<query>", nil},
	{regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?\b`), "<ip>", nil},
	{regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`), "<hex>", nil},
	{regexp.MustCompile(`\b[0-9a-fA-F]{8,}\b`), "<hex>", mixedHex},
	{regexp.MustCompile(`"[^"\n]{1,80}"`), `"<str>"`, nil},
	{regexp.MustCompile(`'[^'\n]{1,80}'`), `'<str>'`, nil},
	// A number not glued to a word or a dot: "v1.2.3" and "utf8" stay.
	{regexp.MustCompile(`(^|[^\w.])-?\d+(\.\d+)?`), "$1<n>", nil},
	{regexp.MustCompile(`\s+`), " ", nil},
}

// mixedHex accepts ids and hashes (digits and letters), not words like
// "deadbeef" or numbers, which the number mask handles.
func mixedHex(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdefABCDEF")
}

// maxSignature bounds a signature's length in bytes.
const maxSignature = 160

func signature(msg string) string {
	for _, m := range masks {
		if m.keep == nil {
			msg = m.re.ReplaceAllString(msg, m.with)
			continue
		}
		msg = m.re.ReplaceAllStringFunc(msg, func(s string) string {
			if m.keep(s) {
				return m.with
			}
			return s
		})
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > maxSignature {
		cut := maxSignature
		for cut > 0 && msg[cut]&0xC0 == 0x80 {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
