package capability_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

func TestHostPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"api.example.com", "api.example.com", true},
		{"api.example.com", "API.Example.COM.", true},
		{"api.example.com", "www.example.com", false},
		{"api.example.com", "api.example.com.evil.org", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "notexample.com", false},
		{"*.example.com", "example.com.evil.org", false},
		{"api.*.example.com", "api.eu.example.com", true},
		{"api.*.example.com", "api.eu.west.example.com", false},
		{"api.*.example.com", "www.eu.example.com", false},
		{"10.0.0.7", "10.0.0.7", true},
		{"10.0.0.7", "10.0.0.8", false},
		{"[::1]", "::1", true},
		{"[::1]", "[::1]", true},
		{"::1", "0:0:0:0:0:0:0:1", true},
		{"[2001:db8::1]", "2001:DB8:0::1", true},
		{"::", "0::0", true},
		{"::ffff:10.0.0.1", "10.0.0.1", true},
		{"beef.example", "beef.example", true},
		{"*.example", "cafe.example", true},
		{"10.0.0.1", "10.0.0.1.", false}, // a name ending in a number is no address
		{"localhost", "127.0.0.1", false},
		{"127.0.0.1", "localhost", false},
		{"*.example.com", "10.0.0.1", false},
		{"*", "anything.at.all", true},
		{"*", "10.0.0.1", true},

		// Ports: none in the pattern allows 80 and 443 only.
		{"api.example.com", "api.example.com:443", true},
		{"api.example.com", "api.example.com:80", true},
		{"api.example.com", "api.example.com:8443", false},
		{"api.example.com:8443", "api.example.com:8443", true},
		{"api.example.com:8443", "api.example.com", false},
		{"api.example.com:8443", "api.example.com:443", false},
		{"*.example.com:*", "a.example.com:1", true},
		{"127.0.0.1:9000", "127.0.0.1:9000", true},
		{"127.0.0.1:9000", "127.0.0.1:9001", false},
		{"127.0.0.1", "127.0.0.1:9000", false},
		{"[::1]:9000", "[::1]:9000", true},
		{"[::1]:9000", "[::1]", false},
		{"*", "anything.example:8080", false},
		{"*:*", "anything.example:8080", true},

		// CIDRs hold addresses, never names.
		{"10.0.0.0/8", "10.1.2.3", true},
		{"10.0.0.0/8", "11.0.0.1", false},
		{"10.0.0.0/8:*", "10.1.2.3:22", true},
		{"10.0.0.0/8", "ten.example", false},
		{"fc00::/7", "[fd12::1]:443", true},
		{"[fc00::/7]:9000", "[fd12::1]:9000", true},
		{"127.0.0.0/8", "::ffff:127.0.0.2", true},

		// Zone IDs and other ambiguous hosts match nothing (defect 1).
		{"*.wikipedia.org", "::ffff:127.0.0.1%.en.wikipedia.org", false},
		{"*.wikipedia.org", "[::ffff:127.0.0.1%.en.wikipedia.org]:80", false},
		{"*.wikipedia.org", "[::ffff:127.0.0.1%25.en.wikipedia.org]:80", false},
		{"*", "::ffff:127.0.0.1%.en.wikipedia.org", false},
		{"*", "fe80::1%eth0", false},
		{"*.example.com", "user@a.example.com", false},
		{"*.example.com", "a.example.com:080", false},
		{"*.example.com", "a.example.com:", false},
		{"*.example.com", "a.example.com:65536", false},
		{"*", "127.1", false},
		{"*", "0x7f.0.0.1", false},
		{"*", "2130706433", false},
		{"*", "[127.0.0.1]", false},

		// Internationalized names are compared in their IDNA (punycode) form.
		{"xn--bcher-kva.example", "bücher.example", true},
		{"xn--bcher-kva.example", "BÜCHER.example", true},
		{"bücher.example", "xn--bcher-kva.example", true},
		{"*.bücher.example", "a.xn--bcher-kva.example", true},
		{"example.com", "ｅｘａｍｐｌｅ．ｃｏｍ", true},
		{"*.example.com", "a_b.example.com", false},
	}
	for _, tt := range tests {
		p, err := capability.ParseHostPattern(tt.pattern)
		if err != nil {
			t.Fatalf("ParseHostPattern(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.host); got != tt.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

func TestHostPatternErrors(t *testing.T) {
	for _, s := range []string{
		"", "  ", "https://api.example.com", "api.example.com/path",
		"a..b", "a*.example.com", "*example.com", "user@host", "-bad.example.com", "bad-.example.com",
		strings.Repeat("a", 64) + ".com", "exa mple.com",
		// Ports, CIDRs and addresses that are malformed or ambiguous.
		"api.example.com:", "api.example.com:0", "api.example.com:65536", "api.example.com:080",
		"api.example.com:+80", "api.example.com:http", "::1:9000x", "[::1]9000", "[::1", "[10.0.0.1]",
		"10.0.0.1/8", "10.0.0.0/33", "::ffff:10.0.0.0/104", "fe80::1%eth0", "[fe80::1%25eth0]:80",
		"::ffff:127.0.0.1%.en.wikipedia.org", "127.1", "0x7f.0.0.1", "10.0.0.256", "2130706433", "a.0x1f",
		"a_b.example.com", "xn--zz.example", "ex--ample.com",
	} {
		if _, err := capability.ParseHostPattern(s); err == nil {
			t.Errorf("ParseHostPattern(%q) = nil error, want one", s)
		}
	}
}

func TestHostPatternWithin(t *testing.T) {
	tests := []struct {
		p, c string
		want bool
	}{
		{"api.corp.example", "*.corp.example", true},
		{"a.b.corp.example", "*.corp.example", true},
		{"corp.example", "*.corp.example", false},
		{"*.corp.example", "*.corp.example", true},
		{"*.eu.corp.example", "*.corp.example", true},
		{"*.corp.example", "*.eu.corp.example", false},
		{"*.corp.example", "api.corp.example", false},
		{"api.*.corp.example", "*.corp.example", true},
		{"*.corp.example", "api.*.corp.example", false},
		{"api.eu.corp.example", "api.*.corp.example", true},
		{"api.*.corp.example", "api.eu.corp.example", false},
		{"*", "*.corp.example", false},
		{"*.corp.example", "*", true},
		{"10.0.0.1", "*", false}, // a private address is reached only through an address ceiling
		{"8.8.8.8", "*", true},
		{"10.0.0.1", "10.0.0.1", true},
		{"10.0.0.1", "*.corp.example", false},
		{"api.example.com", "10.0.0.1", false},
		{"*.*.example.com", "*.example.com", true},
		{"*.example.com", "*.*.example.com", false},

		// Ports: a pattern without one holds 80 and 443.
		{"api.corp.example:443", "*.corp.example", true},
		{"api.corp.example:8443", "*.corp.example", false},
		{"api.corp.example", "*.corp.example:443", false},
		{"api.corp.example:8443", "*.corp.example:8443", true},
		{"api.corp.example:8443", "*.corp.example:*", true},
		{"api.corp.example:*", "*.corp.example", false},
		{"*:*", "*", false},
		{"*", "*:*", true},

		// CIDRs hold addresses and narrower CIDRs of the same family.
		{"10.1.2.3", "10.0.0.0/8", true},
		{"10.1.0.0/16", "10.0.0.0/8", true},
		{"10.0.0.0/8", "10.1.0.0/16", false},
		{"10.0.0.0/8", "10.0.0.0/8", true},
		{"10.1.2.3:9000", "10.0.0.0/8", false},
		{"10.1.2.3:9000", "10.0.0.0/8:*", true},
		{"::ffff:10.1.2.3", "10.0.0.0/8", true},
		{"[fd00::1]", "fc00::/7", true},
		{"10.0.0.0/8", "fc00::/7", false},
		{"api.corp.example", "10.0.0.0/8", false},
		{"10.0.0.0/8", "*.corp.example", false},

		// "*" holds ordinary addresses and CIDRs, never special ones.
		{"127.0.0.1", "*", false},
		{"[::1]", "*", false},
		{"169.254.169.254", "*", false},
		{"[64:ff9b::7f00:1]", "*", false},
		{"[64:ff9b::808:808]", "*", true},
		{"8.0.0.0/8", "*", true},
		{"0.0.0.0/0", "*", false},
		{"2000::/3", "*", false},
		{"2a00::/16", "*", true},
		{"[::1]:9000", "*:*", false},
	}
	for _, tt := range tests {
		p, err := capability.ParseHostPattern(tt.p)
		if err != nil {
			t.Fatalf("ParseHostPattern(%q): %v", tt.p, err)
		}
		c, err := capability.ParseHostPattern(tt.c)
		if err != nil {
			t.Fatalf("ParseHostPattern(%q): %v", tt.c, err)
		}
		if got := p.Within(c); got != tt.want {
			t.Errorf("%q.Within(%q) = %v, want %v", tt.p, tt.c, got, tt.want)
		}
	}
}

func TestEnvPattern(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"HOME", "HOME", true},
		{"HOME", "home", false},
		{"HOME", "HOMEDIR", false},
		{"AWS_*", "AWS_REGION", true},
		{"AWS_*", "AWS_", true},
		{"AWS_*", "XAWS_REGION", false},
	}
	for _, tt := range tests {
		p, err := capability.ParseEnvPattern(tt.pattern)
		if err != nil {
			t.Fatalf("ParseEnvPattern(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.name); got != tt.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	for _, s := range []string{"", "*", "A-B", "A B", "A*B", "$HOME"} {
		if _, err := capability.ParseEnvPattern(s); err == nil {
			t.Errorf("ParseEnvPattern(%q) = nil error, want one", s)
		}
	}
	within := []struct {
		p, c string
		want bool
	}{
		{"AWS_REGION", "AWS_*", true},
		{"AWS_S3_*", "AWS_*", true},
		{"AWS_*", "AWS_REGION", false},
		{"AWS_*", "AWS_*", true},
		{"AW*", "AWS_*", false},
		{"HOME", "HOME", true},
	}
	for _, tt := range within {
		p, _ := capability.ParseEnvPattern(tt.p)
		c, _ := capability.ParseEnvPattern(tt.c)
		if got := p.Within(c); got != tt.want {
			t.Errorf("%q.Within(%q) = %v, want %v", tt.p, tt.c, got, tt.want)
		}
	}
}

func TestPathRule(t *testing.T) {
	env := map[string]string{"DATA": "/srv/data", "REL": "relative/dir"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		rule, root, glob string
		err              bool
	}{
		{rule: "/etc/hosts", root: "/etc/hosts"},
		{rule: "~/projects", root: "/home/ann/projects"},
		{rule: "~", root: "/home/ann"},
		{rule: "$DATA/in", root: "/srv/data/in"},
		{rule: "${DATA}/in", root: "/srv/data/in"},
		{rule: "./out", root: "/ws/out"},
		{rule: ".", root: "/ws"},
		{rule: "~/logs/*.log", root: "/home/ann/logs", glob: "*.log"},
		{rule: "/var/log/*/app.log", root: "/var/log", glob: "*/app.log"},
		{rule: "$MISSING/x", err: true},
		{rule: "$REL/x", err: true},
	}
	for _, tt := range tests {
		pr, err := capability.ParsePathRule(tt.rule)
		if err != nil {
			t.Fatalf("ParsePathRule(%q): %v", tt.rule, err)
		}
		root, glob, err := pr.Expand(getenv, "/home/ann", "/ws")
		if (err != nil) != tt.err {
			t.Errorf("Expand(%q) error = %v, want error %v", tt.rule, err, tt.err)
			continue
		}
		if root != tt.root || glob != tt.glob {
			t.Errorf("Expand(%q) = %q, %q; want %q, %q", tt.rule, root, glob, tt.root, tt.glob)
		}
	}
	for _, s := range []string{"", "relative/path", "../etc", "/a/../b", "~/../x", "$A*/x", "/a/[", "a\x00b", "~user/x",
		// "**" would read as "*" (filepath.Match): refused, not silently one level.
		"~/logs/**/*.log", "/data/**", "./a/**/b", "/x/a**b", "$DATA/**"} {
		if _, err := capability.ParsePathRule(s); err == nil {
			t.Errorf("ParsePathRule(%q) = nil error, want one", s)
		}
	}
	pr, _ := capability.ParsePathRule("~/x")
	if _, _, err := pr.Expand(getenv, "", "/ws"); err == nil {
		t.Error("Expand of ~ without a home: nil error, want one")
	}
	pr, _ = capability.ParsePathRule("./x")
	if _, _, err := pr.Expand(getenv, "/home/ann", "relative"); err == nil {
		t.Error("Expand of ./ with a relative workspace: nil error, want one")
	}
}

// FuzzHostPattern checks that parsing never panics, that Match is total,
// and that Within is sound: a host matched by p is matched by every pattern
// p is within. Policy ceilings rely on that.
func FuzzHostPattern(f *testing.F) {
	seeds := [][3]string{
		{"*.example.com", "*.com", "a.example.com"},
		{"api.*.example.com", "*.example.com", "api.x.example.com"},
		{"10.0.0.1", "*", "10.0.0.1"},
		{"[::1]", "::1", "::1"},
		{"*", "*.corp.example", "x.corp.example"},
		{"a..b", "*.", "."},
		{"*.*.x", "*.x", "a.b.x"},
		{"xn--bcher-kva.example", "*.example", "XN--BCHER-KVA.EXAMPLE."},
		{"10.0.0.0/8:*", "10.0.0.0/8", "10.1.2.3:8080"},
		{"[::1]:9000", "*:*", "[::1]:9000"},
		{"api.example.com:8443", "*.example.com:*", "api.example.com:8443"},
		{"bücher.example", "*.example", "[::ffff:127.0.0.1%25.bücher.example]:443"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ps, cs, host string) {
		p, err := capability.ParseHostPattern(ps)
		if err != nil {
			return
		}
		pm := p.Match(host)
		c, err := capability.ParseHostPattern(cs)
		if err != nil {
			return
		}
		if p.Within(c) && pm && !c.Match(host) {
			t.Fatalf("%q within %q, %q matches %q but %q does not", ps, cs, ps, host, cs)
		}
		if !p.Within(p) {
			t.Fatalf("%q is not within itself", ps)
		}
	})
}

// FuzzPathRule checks that parsing and expansion never panic, and that an
// expanded rule is an absolute, clean directory with no ".." left in it.
func FuzzPathRule(f *testing.F) {
	for _, s := range []string{"/etc/hosts", "~/x", "~", "$HOME/x", "${HOME}/x", "./out/*.log", ".", "/a/[b]/c", "~/../../etc", "$X", "/a/**/b"} {
		f.Add(s, "/home/ann", "/srv/x")
	}
	f.Fuzz(func(t *testing.T, s, home, val string) {
		pr, err := capability.ParsePathRule(s)
		if err != nil {
			return
		}
		root, glob, err := pr.Expand(func(string) string { return val }, home, "/ws")
		if err != nil {
			return
		}
		if !filepath.IsAbs(root) || filepath.Clean(root) != root {
			t.Fatalf("Expand(%q) root %q is not absolute and clean", s, root)
		}
		for _, el := range strings.Split(filepath.ToSlash(filepath.Join(root, glob)), "/") {
			if el == ".." {
				t.Fatalf("Expand(%q) = %q, %q: holds ..", s, root, glob)
			}
		}
		if strings.ContainsAny(root, "*?[") {
			t.Fatalf("Expand(%q) root %q holds a glob", s, root)
		}
	})
}
