package chat

import (
	"strings"
	"unicode"
)

// ParseInvocation reads an explicit invocation (spec 002 §6.2): a message
// that starts with "/<pack-name>" followed by whitespace or the end. It
// returns the pack name and the message with the prefix stripped. ok is
// false when the message does not start that way, or the token cannot be a
// pack name; such a message is ordinary text.
func ParseInvocation(msg string) (name, rest string, ok bool) {
	if !strings.HasPrefix(msg, "/") {
		return "", msg, false
	}
	end := strings.IndexFunc(msg, unicode.IsSpace)
	if end < 0 {
		end = len(msg)
	}
	name = msg[1:end]
	if !validPackName(name) {
		return "", msg, false
	}
	return name, strings.TrimLeftFunc(msg[end:], unicode.IsSpace), true
}

// validPackName applies the Agent Skills name rule: 1–64 of a-z, 0-9 and
// '-', with no leading, trailing or doubled '-'.
func validPackName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
