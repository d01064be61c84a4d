package capability

import (
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
)

// HostPattern matches a destination: a host and a port. Forms:
//
//	"api.example.com"      exactly that name
//	"*.example.com"        any subdomain, at any depth, but not example.com itself
//	"api.*.example.com"    "*" inside a name is exactly one label
//	"10.0.0.7", "[::1]"    exactly that address
//	"10.0.0.0/8", "fc00::/7" any address in that CIDR
//	"*"                    any name and any ordinary address (a policy ceiling can forbid this)
//
// Each form may end in ":PORT" (an IPv6 address or CIDR in brackets then:
// "[::1]:9000") or ":*" for every port; without one, a pattern allows ports
// 80 and 443 only. Names are normalized under IDNA lookup rules
// (golang.org/x/net/idna), so "bücher.example" and "xn--bcher-kva.example"
// are the same pattern; matching is case-insensitive and ignores a trailing
// dot. A name pattern never matches an address, and an address or CIDR
// never matches a name. A special-purpose address (loopback, private,
// link-local, metadata...) is reached only through an address or CIDR
// pattern that holds it: "*" and names that resolve to it do not (see
// Grant.Dial).
type HostPattern struct {
	raw    string
	labels []string     // a name pattern: lower-case ASCII; "*" is a wildcard label
	prefix netip.Prefix // an address (a /32 or /128) or a CIDR, unmapped
	any    bool         // "*"
	ports  portSet
}

// portSet is the ports a pattern allows: 80 and 443 (the zero value), one
// port, or every port.
type portSet struct {
	port uint16
	any  bool
}

func (s portSet) has(p uint16) bool {
	switch {
	case s.any:
		return true
	case s.port == 0:
		return p == portHTTP || p == portHTTPS
	}
	return p == s.port
}

// within reports whether every port of s is in c.
func (s portSet) within(c portSet) bool {
	switch {
	case c.any:
		return true
	case s.any:
		return false
	case s.port == 0:
		return c.port == 0
	}
	return c.has(s.port)
}

// ParseHostPattern compiles s or explains why it cannot.
func ParseHostPattern(s string) (HostPattern, error) {
	p := HostPattern{raw: s}
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return HostPattern{raw: s}, errors.New("empty host pattern")
	case strings.Contains(t, "://") || strings.ContainsAny(t, "?#@ \\%"):
		return HostPattern{raw: s}, errors.New("a host pattern is a host with an optional port, not a URL: drop the scheme, user info, path and zone")
	}
	h, port, hasPort, err := splitPort(t)
	if err != nil {
		return HostPattern{raw: s}, errors.New(`write an IPv6 address with a port as "[::1]:9000"`)
	}
	if hasPort {
		if port == "*" {
			p.ports.any = true
		} else if p.ports.port, err = parsePort(port); err != nil {
			return HostPattern{raw: s}, errors.New(`a port is a number from 1 to 65535 (no leading zero), or "*" for every port`)
		}
	}
	switch {
	case h == "*":
		p.any = true
		return p, nil
	case strings.Contains(h, "/"):
		c := h
		if strings.HasPrefix(c, "[") && strings.HasSuffix(c, "]") {
			c = c[1 : len(c)-1]
		}
		pfx, err := netip.ParsePrefix(c)
		addr, _, _ := strings.Cut(c, "/")
		switch {
		case err != nil && !isDottedQuad(addr) && !strings.Contains(addr, ":"):
			return HostPattern{raw: s}, errors.New("a host pattern is a host with an optional port, not a URL: drop the path")
		case err != nil:
			return HostPattern{raw: s}, errors.New(`a CIDR is an address and a prefix length, as in "10.0.0.0/8" or "fc00::/7"`)
		case pfx.Addr().Is4In6():
			return HostPattern{raw: s}, errors.New("write an IPv4 CIDR in IPv4 form, as in 10.0.0.0/8")
		case pfx != pfx.Masked():
			return HostPattern{raw: s}, errors.New("the CIDR has host bits set: write " + pfx.Masked().String())
		}
		p.prefix = pfx
		return p, nil
	case strings.HasPrefix(h, "[") || strings.Contains(h, ":") || isDottedQuad(h):
		a, err := parseHost(h)
		if err != nil || a.name != "" {
			return HostPattern{raw: s}, errors.New("not an IP address: write IPv4 as four decimal parts, IPv6 in brackets when a port follows")
		}
		p.prefix = netip.PrefixFrom(a.ip, a.ip.BitLen())
		return p, nil
	}
	labels := strings.Split(strings.TrimSuffix(h, "."), ".")
	for i, l := range labels {
		switch {
		case l == "*":
			continue
		case l == "":
			return HostPattern{raw: s}, errors.New("empty label (two dots in a row)")
		case strings.Contains(l, "*"):
			return HostPattern{raw: s}, errors.New(`"*" must be a whole label, as in "*.example.com"`)
		}
		a, err := normalizeName(l)
		if err != nil || strings.Contains(a, ".") {
			return HostPattern{raw: s}, errors.New("labels hold letters, digits and inner '-' (IDNA lookup rules), at most 63 of them")
		}
		labels[i] = a
	}
	if last := labels[len(labels)-1]; numericLabel(last) {
		return HostPattern{raw: s}, errors.New("a name cannot end in a number: write an IPv4 address as four decimal parts")
	}
	p.labels = labels
	return p, nil
}

// isDottedQuad reports whether h looks like an IPv4 address (digits and
// dots only), so that a malformed one is refused rather than read as a name.
func isDottedQuad(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// String returns the pattern as written.
func (p HostPattern) String() string { return p.raw }

// Match reports whether the destination host, written as Grant.Host takes
// it ("name", "address", either with ":port"; without a port, 443),
// matches. A host that does not parse matches nothing.
func (p HostPattern) Match(hostport string) bool {
	h, port, err := parseDest(hostport)
	return err == nil && p.covers(h, port)
}

// covers reports whether the pattern allows h on port.
func (p HostPattern) covers(h host, port uint16) bool {
	switch {
	case !p.ports.has(port):
		return false
	case p.any:
		return true
	case p.prefix.IsValid():
		return h.name == "" && p.prefix.Contains(h.ip)
	case h.name == "" || len(p.labels) == 0:
		return false
	}
	got := strings.Split(h.name, ".")
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

// grantsAddr reports whether the pattern names ip (unmapped, no zone) on
// port by address or CIDR: what a special-purpose address needs.
func (p HostPattern) grantsAddr(ip netip.Addr, port uint16) bool {
	return p.prefix.IsValid() && p.prefix.Contains(ip) && p.ports.has(port)
}

// Within reports whether every destination p allows is also allowed by c,
// so a policy or a person can keep p under the ceiling c unchanged: p's
// ports lie within c's, and its hosts within c's. "*" holds every name
// pattern and every address or CIDR free of special-purpose addresses,
// which only an address or CIDR ceiling holds.
func (p HostPattern) Within(c HostPattern) bool {
	if !p.ports.within(c.ports) {
		return false
	}
	switch {
	case c.any:
		return !p.prefix.IsValid() || !overlapsSpecial(p.prefix)
	case p.any:
		return false
	case p.prefix.IsValid():
		return c.prefix.IsValid() && c.prefix.Bits() <= p.prefix.Bits() && c.prefix.Contains(p.prefix.Addr())
	case c.prefix.IsValid() || len(p.labels) == 0 || len(c.labels) == 0:
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
		if strings.Contains(el, "**") {
			// filepath.Match would read "**" as "*": one level, not any depth.
			return p, errors.New(`"**" is not supported in a granted path: each "*" matches within one level; name the levels ("logs/*/*.log") or grant the directory`)
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
