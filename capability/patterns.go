package capability

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
)

// HostPattern matches a host name or IP literal. Forms:
//
//	"api.example.com"   exactly that host
//	"*.example.com"     any subdomain, at any depth, but not example.com itself
//	"api.*.example.com" "*" inside a name is exactly one label
//	"10.0.0.7", "[::1]" exactly that address
//	"*"                 any host (a policy ceiling can forbid this)
//
// Matching is case-insensitive and ignores a trailing dot.
type HostPattern struct {
	raw    string
	labels []string // lower case; "*" is a wildcard label
	ip     net.IP
	any    bool
}

// ParseHostPattern compiles s or explains why it cannot.
func ParseHostPattern(s string) (HostPattern, error) {
	p := HostPattern{raw: s}
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	switch {
	case h == "":
		return HostPattern{raw: s}, errors.New("empty host pattern")
	case h == "*":
		p.any = true
		return p, nil
	case strings.Contains(h, "://") || strings.ContainsAny(h, "/?#@ "):
		return HostPattern{raw: s}, errors.New("a host pattern is a host name, not a URL: drop the scheme, path and port")
	}
	if ip := parseIP(h); ip != nil {
		p.ip = ip
		return p, nil
	}
	if strings.Contains(h, ":") {
		return HostPattern{raw: s}, errors.New("ports are not part of a host pattern")
	}
	p.labels = strings.Split(h, ".")
	for _, l := range p.labels {
		switch {
		case l == "*":
		case l == "":
			return HostPattern{raw: s}, errors.New("empty label (two dots in a row)")
		case strings.Contains(l, "*"):
			return HostPattern{raw: s}, errors.New(`"*" must be a whole label, as in "*.example.com"`)
		case !validLabel(l):
			return HostPattern{raw: s}, errors.New("labels hold only a-z, 0-9, '_' and inner '-', at most 63 of them")
		}
	}
	return p, nil
}

// parseIP parses an IP literal, brackets allowed. Host names (which hold a
// letter beyond a-f, or no digit at all) skip the parser: it allocates an
// error for every name.
func parseIP(h string) net.IP {
	h = strings.Trim(h, "[]")
	digit := false
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.' || c == ':' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
		default:
			return nil
		}
	}
	if !digit && !strings.Contains(h, "::") {
		return nil
	}
	return net.ParseIP(h)
}

func validLabel(l string) bool {
	if len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// String returns the pattern as written.
func (p HostPattern) String() string { return p.raw }

// Match reports whether host (a name or an IP literal, without port) matches.
func (p HostPattern) Match(host string) bool {
	if p.any {
		return true
	}
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if p.ip != nil {
		ip := parseIP(h)
		return ip != nil && ip.Equal(p.ip)
	}
	if len(p.labels) == 0 || parseIP(h) != nil {
		return false
	}
	got := strings.Split(h, ".")
	want := p.labels
	if want[0] == "*" {
		// A leading "*" matches one or more labels.
		if len(got) < len(want) {
			return false
		}
		got = got[len(got)-(len(want)-1):]
		want = want[1:]
	}
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if want[i] != "*" && want[i] != got[i] {
			return false
		}
	}
	return true
}

// Within reports whether every host p matches is also matched by c, so a
// policy or a person can keep p under the ceiling c unchanged.
func (p HostPattern) Within(c HostPattern) bool {
	switch {
	case c.any:
		return true
	case p.any:
		return false
	case p.ip != nil:
		return c.ip != nil && c.ip.Equal(p.ip)
	case c.ip != nil || len(p.labels) == 0 || len(c.labels) == 0:
		return false
	}
	pw, cw := p.labels[0] == "*", c.labels[0] == "*"
	switch {
	case !pw && !cw:
		return len(p.labels) == len(c.labels) && labelsWithin(p.labels, c.labels)
	case !pw && cw:
		// c's leading "*" takes one or more labels, p's front must supply them.
		tail := c.labels[1:]
		return len(p.labels) > len(tail) && labelsWithin(p.labels[len(p.labels)-len(tail):], tail)
	case pw && cw:
		// p matches names of any length above its tail, so c's tail may be no
		// longer than p's.
		pt, ct := p.labels[1:], c.labels[1:]
		return len(ct) <= len(pt) && labelsWithin(pt[len(pt)-len(ct):], ct)
	}
	return false // p's leading "*" is unbounded, c has a fixed length
}

// labelsWithin compares two equal-length label lists position by position.
func labelsWithin(p, c []string) bool {
	for i := range c {
		if c[i] != "*" && (p[i] == "*" || p[i] != c[i]) {
			return false
		}
	}
	return true
}

// EnvPattern matches environment variable names: "HOME" exactly, or a
// prefix with a trailing "*" ("AWS_*"). Names are case-sensitive.
type EnvPattern struct {
	raw    string
	prefix bool
	name   string
}

// ParseEnvPattern compiles s or explains why it cannot.
func ParseEnvPattern(s string) (EnvPattern, error) {
	p := EnvPattern{raw: s, name: s}
	if strings.HasSuffix(s, "*") {
		p.prefix = true
		p.name = strings.TrimSuffix(s, "*")
	}
	if p.name == "" {
		return p, errors.New(`a variable pattern needs a name or prefix: "*" alone would expose the whole environment`)
	}
	for _, r := range p.name {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return p, errors.New("variable names hold only A-Z, a-z, 0-9 and '_', with an optional trailing '*'")
		}
	}
	return p, nil
}

func (p EnvPattern) String() string { return p.raw }

// Match reports whether the variable name matches.
func (p EnvPattern) Match(name string) bool {
	if p.prefix {
		return strings.HasPrefix(name, p.name)
	}
	return name == p.name
}

// Within reports whether every name p matches is also matched by c.
func (p EnvPattern) Within(c EnvPattern) bool {
	if c.prefix {
		return strings.HasPrefix(p.name, c.name)
	}
	return !p.prefix && p.name == c.name
}

// PathRule is a filesystem path from a manifest. It may start with "~/" (the
// user's home), "$VAR" (an environment variable) or "./" (the chat
// workspace), and its last elements may be a glob ("logs/*.log"). Expansion
// happens when a grant is resolved; the syntax is checked at load.
type PathRule struct {
	raw string
}

// ParsePathRule compiles s or explains why it cannot.
func ParsePathRule(s string) (PathRule, error) {
	p := PathRule{raw: s}
	switch {
	case s == "":
		return p, errors.New("empty path")
	case strings.ContainsRune(s, 0):
		return p, errors.New("path holds a NUL byte")
	}
	rest := s
	switch {
	case rest == "~" || strings.HasPrefix(rest, "~/"):
	case strings.HasPrefix(rest, "$"):
		name, _, _ := strings.Cut(rest[1:], "/")
		if _, err := ParseEnvPattern(strings.Trim(name, "{}")); err != nil || strings.HasSuffix(name, "*") {
			return p, errors.New("a path may start with $NAME, a plain variable name")
		}
	case rest == "." || strings.HasPrefix(rest, "./"):
	case filepath.IsAbs(rest):
	default:
		return p, errors.New(`a path is absolute, or starts with "~/", "$VAR/" or "./"`)
	}
	for _, el := range strings.Split(filepath.ToSlash(rest), "/") {
		if el == ".." {
			return p, errors.New(`".." is not allowed in a granted path`)
		}
		if _, err := filepath.Match(el, ""); err != nil {
			return p, errors.New("bad glob: " + err.Error())
		}
	}
	return p, nil
}

func (p PathRule) String() string { return p.raw }

// Expand resolves the rule's prefix. getenv reads the person's environment,
// home is the home directory and workspace the chat workspace. It returns the
// absolute directory to mount (the part before any glob) and the glob that
// names inside it must match ("" when the whole directory is granted).
func (p PathRule) Expand(getenv func(string) string, home, workspace string) (root, glob string, err error) {
	s := p.raw
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		if home == "" {
			return "", "", errors.New("capability: no home directory to expand " + s)
		}
		s = filepath.Join(home, strings.TrimPrefix(s, "~"))
	case strings.HasPrefix(s, "$"):
		name, tail, _ := strings.Cut(s[1:], "/")
		v := getenv(strings.Trim(name, "{}"))
		if v == "" || !filepath.IsAbs(v) {
			return "", "", errors.New("capability: $" + name + " is unset or not an absolute path")
		}
		s = filepath.Join(v, tail)
	case s == "." || strings.HasPrefix(s, "./"):
		if workspace == "" {
			return "", "", errors.New("capability: no workspace to expand " + s)
		}
		s = filepath.Join(workspace, s)
	}
	if !filepath.IsAbs(s) {
		return "", "", errors.New("capability: " + p.raw + " does not expand to an absolute path")
	}
	m := splitMount(filepath.Clean(s), false)
	return m.HostPath, m.Glob, nil
}

func checkCommand(s string) error {
	switch {
	case s == "":
		return errors.New("empty command")
	case strings.ContainsAny(s, " \t\n;&|<>$`'\"\\*?(){}[]!#~"):
		return errors.New("a command is one program name or absolute path, with no spaces or shell characters")
	case strings.Contains(s, "/") && !filepath.IsAbs(s):
		return errors.New("a command is a bare program name or an absolute path")
	}
	return nil
}
