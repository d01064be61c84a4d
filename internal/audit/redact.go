package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a value that looks like a secret.
const Redacted = "[redacted]"

// secretKeys are the parts of an argument name that mark its value as a
// secret. Names are compared lower-case with '-', '_', '.' and spaces removed,
// so "API-Key", "api_key" and "apiKey" all match "apikey".
var secretKeys = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
	"privatekey", "authorization", "cookie", "session", "credential", "bearer", "signature",
}

// secretPrefixes mark a string value as a credential whatever its key.
var secretPrefixes = []string{
	"bearer ", "basic ", "sk-", "sk_live_", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-",
	"xoxb-", "xoxp-", "akia", "asia", "-----begin",
}

// Redactor masks secrets and cuts long values out of tool arguments and
// audit text before anything is stored.
type Redactor struct {
	MaxValue int // longest string kept whole, in bytes; longer ones are cut
	MaxDepth int // deeper JSON is replaced by a marker
	MaxTotal int // a redacted document larger than this is replaced by a summary
	// Known, when set, masks the values of the secret store wherever they
	// appear (internal/secrets.Store.Masker): a value is never stored
	// here, whatever its shape.
	Known KnownSecrets
}

// KnownSecrets masks known secret values in a string.
type KnownSecrets interface {
	MaskString(s string) string
}

// DefaultRedactor keeps strings up to 256 bytes, 32 levels, 64 KiB in all.
func DefaultRedactor() Redactor { return Redactor{MaxValue: 256, MaxDepth: 32, MaxTotal: 64 << 10} }

// keyFolder drops the separators secretKey ignores.
var keyFolder = strings.NewReplacer("-", "", "_", "", ".", "", " ", "")

// secretKey reports whether an object key names a secret.
func secretKey(k string) bool {
	k = keyFolder.Replace(strings.ToLower(k))
	switch {
	case k == "auth" || k == "pwd" || k == "pin":
		return true
	case strings.HasSuffix(k, "tokens"): // a count, as in max_tokens
		return false
	}
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// secretValue reports whether a string looks like a credential.
func secretValue(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	for _, p := range secretPrefixes {
		if strings.HasPrefix(l, p) && len(l) > len(p)+4 {
			return true
		}
	}
	return false
}

// scanMargin is how far past MaxValue a long string is scanned for
// secrets: a secret that starts in the kept part is found whole if it is
// shorter than this. The rest is cut without being scanned.
const scanMargin = 4096

// Text masks a credential-looking string, masks every secret found inside
// it (gitleaks' rules and packs' own, redact_rules.go) and cuts a long one.
func (r Redactor) Text(s string) string {
	if r.Known != nil {
		s = r.Known.MaskString(s)
	}
	if secretValue(s) {
		return Redacted
	}
	rs, err := defaultRules()
	if err != nil { // the embedded rules are checked by a test: this is a broken build
		panic(err)
	}
	dropped := 0
	if r.MaxValue > 0 && len(s) > r.MaxValue+scanMargin {
		n := r.MaxValue + scanMargin
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, dropped = s[:n], len(s)-n
	}
	return r.cutDropped(rs.redact(s), dropped)
}

// cutDropped cuts s to MaxValue; dropped bytes were cut already.
func (r Redactor) cutDropped(s string, dropped int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if r.MaxValue <= 0 || len(s) <= r.MaxValue && dropped == 0 {
		return s
	}
	n := min(r.MaxValue, len(s))
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s…[cut %d bytes]", s[:n], len(s)-n+dropped)
}

// JSON returns a redacted copy of a JSON document: values under secret keys
// and credential-looking strings become "[redacted]", long strings are cut,
// deep nesting is replaced by a marker. Input that is not JSON is not kept
// at all, only its size. Object keys come out sorted.
func (r Redactor) JSON(raw []byte) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return r.summary("not JSON", len(raw))
	}
	out, err := json.Marshal(r.value(v, 0))
	if err != nil {
		return r.summary("unencodable", len(raw))
	}
	if r.MaxTotal > 0 && len(out) > r.MaxTotal {
		return r.summary("too large", len(raw))
	}
	return out
}

func (r Redactor) summary(why string, n int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"redacted": why, "bytes": n})
	return b
}

func (r Redactor) value(v any, depth int) any {
	if r.MaxDepth > 0 && depth >= r.MaxDepth {
		return "[too deep]"
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if secretKey(k) {
				out[r.Text(k)] = Redacted
				continue
			}
			out[r.Text(k)] = r.value(x, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = r.value(x, depth+1)
		}
		return out
	case string:
		return r.Text(v)
	}
	return v
}
