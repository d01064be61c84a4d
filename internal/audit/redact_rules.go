package audit

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// gitleaksRules (gitleaks_rules.go) is gitleaks' maintained rule set,
// gitleaks/gitleaks.toml (gitleaks/README.md says which version, and how to
// update it), written as a Go value by go generate: parsing the TOML cost
// every packs run that audits a call about a millisecond. Only its data is
// used.
//
//go:generate go test -run ^TestGitleaksRulesGenerated$ -update .

// The parts of a gitleaks config that apply to a string with no file path.
type (
	glConfig struct {
		Allowlist glAllowlist `toml:"allowlist"`
		Rules     []glRule    `toml:"rules"`
	}
	glRule struct {
		ID          string        `toml:"id"`
		Regex       string        `toml:"regex"`
		SecretGroup int           `toml:"secretGroup"`
		Entropy     float64       `toml:"entropy"`
		Keywords    []string      `toml:"keywords"`
		Path        string        `toml:"path"`
		Allowlists  []glAllowlist `toml:"allowlists"`
	}
	glAllowlist struct {
		Condition   string   `toml:"condition"`
		RegexTarget string   `toml:"regexTarget"`
		Regexes     []string `toml:"regexes"`
		Paths       []string `toml:"paths"`
		Stopwords   []string `toml:"stopwords"`
	}
)

// packsRules are shapes gitleaks leaves to context that an audit log
// cannot: a credential after an Authorization header or the word bearer, a
// password in a URL, and a value assigned to a name that names a secret
// (the same names that mask a JSON key). They are checked like gitleaks'.
var packsRules = []glRule{
	{ID: "authorization-header", Keywords: []string{"authorization"},
		Regex: `(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|digest|negotiate|api-?key)[ \t]+)?([^\s"',;]{4,})`},
	{ID: "bearer-token", Keywords: []string{"bearer"}, Entropy: 3,
		Regex: `(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{12,}=*)`},
	{ID: "url-password", Keywords: []string{"://"},
		Regex: `\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^/\s:@"']{1,100}:([^/\s@"']{3,200})@`},
	{ID: "secret-assignment", Keywords: []string{"pass", "pwd", "secret", "token", "key", "credential", "auth", "session"}, SecretGroup: 2,
		Regex: `(?i)([a-z0-9_.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key|credential|auth|session)[a-z0-9_.-]*)["']?[ \t]*[:=][ \t]*["']?([^\s"'&;,@]{4,})`},
	{ID: "private-key-block", Keywords: []string{"private key"},
		Regex: `-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.)*?(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\z)`},
}

// pattern is a regular expression compiled on its first use. A call's
// audit row holds a few of the rules' keywords, and compiling all ~230
// patterns up front was a quarter of a cold packs run (12 ms).
type pattern func() (*regexp.Regexp, error)

func newPattern(src string) pattern {
	return sync.OnceValues(func() (*regexp.Regexp, error) { return regexp.Compile(src) })
}

// re is the compiled pattern. The patterns are embedded and every one is
// compiled by a test, so one that does not compile is a broken build.
func (p pattern) re() *regexp.Regexp {
	re, err := p()
	if err != nil {
		panic(fmt.Errorf("audit: redaction rule: %w", err))
	}
	return re
}

// rule is one secret shape.
type rule struct {
	id      string
	pattern pattern
	group   int     // the capture group holding the secret; 0: the first non-empty one, else the whole match
	entropy float64 // the least Shannon entropy, in bits per byte, of a secret
	allow   []allowlist
	named   bool // group 1 is a name, which must name a secret (secretKey)
}

// allowlist says when a match is not a secret after all.
type allowlist struct {
	target    string // what the regexes test: "secret" (default), "match" or "line"
	regexes   []pattern
	stopwords []string // lower case; a secret containing one is not a secret
	and       bool     // both the regexes and the stopwords must say so
}

func (a allowlist) allows(secret, match, line string) bool {
	s := secret
	switch a.target {
	case "match":
		s = match
	case "line":
		s = line
	}
	re := slices.ContainsFunc(a.regexes, func(p pattern) bool { return p.re().MatchString(s) })
	ls := strings.ToLower(secret)
	stop := slices.ContainsFunc(a.stopwords, func(w string) bool { return strings.Contains(ls, w) })
	if a.and {
		return (re || len(a.regexes) == 0) && (stop || len(a.stopwords) == 0)
	}
	return re || stop
}

// ruleSet is every rule, with a keyword index: a rule runs only on text
// that holds one of its keywords, as in gitleaks.
type ruleSet struct {
	rules  []rule
	global []allowlist
	always []int                // rules without keywords
	pairs  map[uint16][]keyword // keywords by their first two bytes, lower case
	seen   [1 << 16 / 64]uint64 // the pairs that start a keyword, to skip the map for the rest
	minLen int                  // shorter text holds no keyword
}

type keyword struct {
	word  string
	rules []int
}

// defaultRules is the compiled rule set, built once on first use.
var defaultRules = sync.OnceValues(loadRules)

func loadRules() (*ruleSet, error) {
	cfg := gitleaksRules
	rs := &ruleSet{pairs: map[uint16][]keyword{}, minLen: math.MaxInt}
	if a, ok := readAllowlist(cfg.Allowlist); ok {
		rs.global = append(rs.global, a)
	}
	words := map[string][]int{}
	for _, gr := range append(cfg.Rules, packsRules...) {
		if gr.Regex == "" || gr.Path != "" {
			continue // a rule about file names, which strings here do not have
		}
		r := rule{id: gr.ID, pattern: newPattern(gr.Regex), group: gr.SecretGroup, entropy: gr.Entropy, named: gr.ID == "secret-assignment"}
		for _, ga := range gr.Allowlists {
			if a, ok := readAllowlist(ga); ok {
				r.allow = append(r.allow, a)
			}
		}
		i := len(rs.rules)
		rs.rules = append(rs.rules, r)
		if len(gr.Keywords) == 0 {
			rs.always = append(rs.always, i)
		}
		for _, w := range gr.Keywords {
			w = strings.ToLower(w)
			words[w] = append(words[w], i)
		}
	}
	for w, rules := range words {
		if len(w) < 2 || !isASCII(w) {
			return nil, fmt.Errorf("audit: redaction keyword %q cannot be indexed: it must be two ASCII bytes or more", w)
		}
		p := uint16(w[0])<<8 | uint16(w[1])
		rs.pairs[p] = append(rs.pairs[p], keyword{word: w, rules: rules})
		rs.seen[p/64] |= 1 << (p % 64)
		rs.minLen = min(rs.minLen, len(w))
	}
	return rs, nil
}

// readAllowlist reads a, reporting false for one that can never apply
// here (it needs a file path to match).
func readAllowlist(ga glAllowlist) (allowlist, bool) {
	a := allowlist{target: ga.RegexTarget, and: strings.EqualFold(ga.Condition, "AND")}
	if len(ga.Paths) > 0 && a.and {
		return a, false
	}
	for _, s := range ga.Regexes {
		a.regexes = append(a.regexes, newPattern(s))
	}
	for _, w := range ga.Stopwords {
		a.stopwords = append(a.stopwords, strings.ToLower(w))
	}
	return a, len(a.regexes)+len(a.stopwords) > 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lower is b in ASCII lower case.
func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// hasPrefixFold reports whether s starts with the lower-case ASCII word w,
// ignoring ASCII case.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if lower(s[i]) != w[i] {
			return false
		}
	}
	return true
}

// candidates returns the rules whose keywords s holds, in rule order.
func (rs *ruleSet) candidates(s string) []int {
	hit := slices.Clone(rs.always)
	for i := 0; i+1 < len(s); i++ {
		p := uint16(lower(s[i]))<<8 | uint16(lower(s[i+1]))
		if rs.seen[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, kw := range rs.pairs[p] {
			if hasPrefixFold(s[i:], kw.word) {
				hit = append(hit, kw.rules...)
			}
		}
	}
	slices.Sort(hit)
	return slices.Compact(hit)
}

// redact replaces every secret the rules find in s with Redacted, keeping
// the text around it.
func (rs *ruleSet) redact(s string) string {
	if len(s) < rs.minLen {
		return s
	}
	var spans [][2]int
	for _, i := range rs.candidates(s) {
		r := &rs.rules[i]
		for _, m := range r.pattern.re().FindAllStringSubmatchIndex(s, -1) {
			if sp, ok := rs.secret(r, s, m); ok {
				spans = append(spans, sp)
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var out strings.Builder
	at := 0
	for _, sp := range spans {
		if sp[0] < at { // overlaps the span before: widen it
			at = max(at, sp[1])
			continue
		}
		out.WriteString(s[at:sp[0]])
		out.WriteString(Redacted)
		at = sp[1]
	}
	out.WriteString(s[at:])
	return out.String()
}

// secret picks the secret out of match m of rule r in s and applies the
// rule's checks; it reports the secret's span.
func (rs *ruleSet) secret(r *rule, s string, m []int) ([2]int, bool) {
	sp := [2]int{m[0], m[1]}
	switch {
	case r.group > 0 && 2*r.group+1 < len(m):
		if m[2*r.group] < 0 {
			return sp, false
		}
		sp = [2]int{m[2*r.group], m[2*r.group+1]}
	case r.group == 0:
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				sp = [2]int{m[2*g], m[2*g+1]}
				break
			}
		}
	}
	secret, match := s[sp[0]:sp[1]], s[m[0]:m[1]]
	if sp[1] <= sp[0] || (r.entropy > 0 && entropy(secret) < r.entropy) {
		return sp, false
	}
	if r.named && (m[2] < 0 || !secretKey(s[m[2]:m[3]]) || authScheme(secret)) {
		return sp, false
	}
	start, end := strings.LastIndexByte(s[:m[0]], '\n')+1, len(s)
	if n := strings.IndexByte(s[m[1]:], '\n'); n >= 0 {
		end = m[1] + n
	}
	line := s[start:end]
	for _, a := range rs.global {
		if a.allows(secret, match, line) {
			return sp, false
		}
	}
	for _, a := range r.allow {
		if a.allows(secret, match, line) {
			return sp, false
		}
	}
	return sp, true
}

// authScheme reports whether s is an HTTP authentication scheme, which
// the authorization-header rule skips to mask the credential after it.
func authScheme(s string) bool {
	switch strings.ToLower(s) {
	case "bearer", "basic", "token", "digest", "negotiate":
		return true
	}
	return false
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}
