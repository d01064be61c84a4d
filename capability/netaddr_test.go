package capability_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/packs-run/packs/capability"
)

// hostGrant is a grant of network to the pack asking exactly hosts, under
// pol (nil for none).
func hostGrant(t testing.TB, pol *capability.Policy, hosts ...string) capability.Grant {
	t.Helper()
	g, err := capability.Resolve(capability.PackRef{Name: "p"}, capability.Request{Network: hosts}, all(capability.Network), pol, testEnv)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", hosts, err)
	}
	return g
}

// TestHostZonedLiteral is defect 1 of issue 11: an IPv6 literal with a zone
// ID that looks like a granted name reaches loopback. It is not a name, and
// its zone is refused, under a grant and under a policy ceiling alike.
func TestHostZonedLiteral(t *testing.T) {
	pol, err := capability.ParsePolicy("policy.toml", []byte("[ceilings]\nnetwork = [\"*.corp.example\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		g    capability.Grant
		host string
	}{
		{"grant", hostGrant(t, nil, "*.wikipedia.org"), "::ffff:127.0.0.1%.en.wikipedia.org"},
		{"grant, brackets", hostGrant(t, nil, "*.wikipedia.org"), "[::ffff:127.0.0.1%.en.wikipedia.org]"},
		{"grant, port", hostGrant(t, nil, "*.wikipedia.org"), "[::ffff:127.0.0.1%.en.wikipedia.org]:443"},
		{"grant, escaped zone", hostGrant(t, nil, "*.wikipedia.org"), "[::ffff:127.0.0.1%25.en.wikipedia.org]:443"},
		{"grant, plain zone", hostGrant(t, nil, "*"), "fe80::1%eth0"},
		{"ceiling", hostGrant(t, pol, "*"), "::ffff:127.0.0.1%.corp.example"},
		{"ceiling, v4 zone", hostGrant(t, pol, "*"), "::ffff:10.0.0.1%.x.corp.example"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := tc.g.Host(tc.host); d.Allowed() {
				t.Fatalf("Host(%q) allowed (%s), want a denial", tc.host, d.Reason())
			}
		})
	}
	// The ceiling still lets its own names through.
	if g := hostGrant(t, pol, "*"); !g.Host("api.corp.example").Allowed() {
		t.Fatal("api.corp.example denied under the ceiling *.corp.example")
	}
}

// TestHostSpecialAddresses: each class of special-purpose address, written
// as a literal, is denied under "*" and under a name grant, with
// ErrSpecialAddress; a grant naming the address, or a CIDR holding it, on
// the port reaches it. Ordinary addresses pass under "*".
func TestHostSpecialAddresses(t *testing.T) {
	special := []struct{ class, addr, cidr string }{
		{"loopback v4", "127.0.0.1", "127.0.0.0/8"},
		{"loopback v4, not .1", "127.3.2.1", "127.0.0.0/8"},
		{"loopback v6", "::1", "::1/128"},
		{"private 10/8", "10.1.2.3", "10.0.0.0/8"},
		{"private 172.16/12", "172.20.0.1", "172.16.0.0/12"},
		{"private 192.168/16", "192.168.1.1", "192.168.0.0/16"},
		{"link-local v4", "169.254.1.1", "169.254.0.0/16"},
		{"cloud metadata v4", "169.254.169.254", "169.254.169.254/32"},
		{"cloud metadata v6", "fd00:ec2::254", "fd00:ec2::/32"},
		{"CGNAT", "100.64.0.1", "100.64.0.0/10"},
		{"unique-local", "fd12:3456::1", "fc00::/7"},
		{"link-local v6", "fe80::1", "fe80::/10"},
		{"unspecified v4", "0.0.0.0", "0.0.0.0/8"},
		{"this network", "0.1.2.3", "0.0.0.0/8"},
		{"unspecified v6", "::", "::/128"},
		{"multicast v4", "224.0.0.1", "224.0.0.0/4"},
		{"multicast v6", "ff02::1", "ff00::/8"},
		{"broadcast", "255.255.255.255", "255.255.255.255/32"},
		{"reserved v4", "240.0.0.1", "240.0.0.0/4"},
		{"documentation v4", "192.0.2.1", "192.0.2.0/24"},
		{"benchmarking", "198.18.0.1", "198.18.0.0/15"},
		{"v4-mapped loopback", "::ffff:127.0.0.1", "127.0.0.0/8"},
		{"v4-mapped private", "::ffff:10.0.0.1", "10.0.0.0/8"},
		{"v4-mapped metadata", "::ffff:169.254.169.254", "169.254.0.0/16"},
		{"v4-compatible", "::127.0.0.1", "::/96"},
		{"v4-compatible public", "::8.8.8.8", "::/96"},
		{"v4-translated", "::ffff:0:7f00:1", "::ffff:0:0:0/96"},
		{"NAT64 loopback", "64:ff9b::127.0.0.1", "64:ff9b::/96"},
		{"NAT64 metadata", "64:ff9b::a9fe:a9fe", "64:ff9b::/96"},
		{"local-use NAT64", "64:ff9b:1::7f00:1", "64:ff9b:1::/48"},
		{"6to4", "2002:7f00:1::1", "2002::/16"},
		{"6to4 of a public address", "2002:808:808::1", "2002::/16"},
		{"Teredo", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001::/32"},
		{"documentation v6", "2001:db8::1", "2001:db8::/32"},
		{"site-local", "fec0::1", "fec0::/10"},
		{"discard", "100::1", "100::/64"},
		{"outside 2000::/3", "4000::1", "4000::/2"},
	}
	bracket := func(a string) string {
		if netip.MustParseAddr(a).Is6() {
			return "[" + a + "]"
		}
		return a
	}
	for _, tc := range special {
		t.Run(tc.class, func(t *testing.T) {
			for _, grant := range [][]string{{"*"}, {"*:*"}, {"*.example.com"}} {
				d := hostGrant(t, nil, grant...).Host(tc.addr)
				if d.Allowed() || !errors.Is(d.Err(), capability.ErrDenied) {
					t.Fatalf("under %q: Host(%q) = %v (%s), want a denial", grant, tc.addr, d.Allowed(), d.Reason())
				}
				if grant[0] != "*.example.com" && !errors.Is(d.Err(), capability.ErrSpecialAddress) {
					t.Fatalf("under %q: Host(%q) = %v, want ErrSpecialAddress", grant, tc.addr, d.Err())
				}
			}
			byAddr := hostGrant(t, nil, bracket(tc.addr)+":9000")
			if d := byAddr.Host(bracket(tc.addr) + ":9000"); !d.Allowed() {
				t.Fatalf("a grant of %s:9000 does not reach it: %v", tc.addr, d.Err())
			}
			if d := byAddr.Host(bracket(tc.addr) + ":9001"); d.Allowed() {
				t.Fatalf("a grant of %s:9000 reaches port 9001", tc.addr)
			}
			byCIDR := hostGrant(t, nil, tc.cidr)
			if d := byCIDR.Host(bracket(tc.addr) + ":443"); !d.Allowed() {
				t.Fatalf("a grant of %s does not reach %s: %v", tc.cidr, tc.addr, d.Err())
			}
		})
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "[2606:4700:4700::1111]", "[64:ff9b::808:808]", "93.184.216.34:80"} {
		if d := hostGrant(t, nil, "*").Host(a); !d.Allowed() {
			t.Errorf("Host(%q) under \"*\": %v, want allowed", a, d.Err())
		}
	}
}

// TestDialResolvedName is defect 2 of issue 11: a granted name that
// resolves to a special-purpose address is not dialled unless that address
// is granted too. Dial decides the address, on its port.
func TestDialResolvedName(t *testing.T) {
	loop := netip.MustParseAddrPort("127.0.0.1:443")
	meta := netip.MustParseAddrPort("169.254.169.254:80")
	public := netip.MustParseAddrPort("93.184.216.34:443")
	cases := []struct {
		name   string
		grant  []string
		host   string
		addr   netip.AddrPort
		want   bool
		reason error
	}{
		{"granted name to loopback", []string{"evil.example"}, "evil.example", loop, false, capability.ErrSpecialAddress},
		{"granted wildcard to metadata", []string{"*.example"}, "evil.example", meta, false, capability.ErrSpecialAddress},
		{"any host to loopback", []string{"*"}, "evil.example", loop, false, capability.ErrSpecialAddress},
		{"localhost", []string{"localhost"}, "localhost", loop, false, capability.ErrSpecialAddress},
		{"name and address granted", []string{"localhost", "127.0.0.1"}, "localhost", loop, true, nil},
		{"name and CIDR granted", []string{"localhost", "127.0.0.0/8"}, "localhost", loop, true, nil},
		{"address granted on another port", []string{"localhost", "127.0.0.1:9000"}, "localhost", loop, false, capability.ErrSpecialAddress},
		{"address granted, name not", []string{"127.0.0.1"}, "localhost", loop, false, capability.ErrNotRequested},
		{"granted name to a public address", []string{"evil.example"}, "evil.example", public, true, nil},
		{"granted name on another port", []string{"evil.example"}, "evil.example", netip.MustParseAddrPort("93.184.216.34:8080"), false, capability.ErrNotRequested},
		{"granted name with its port", []string{"evil.example:8080"}, "evil.example", netip.MustParseAddrPort("93.184.216.34:8080"), true, nil},
		{"literal dialled elsewhere", []string{"*"}, "93.184.216.34", netip.MustParseAddrPort("8.8.8.8:443"), false, capability.ErrBadHost},
		{"mapped loopback", []string{"evil.example"}, "evil.example", netip.MustParseAddrPort("[::ffff:127.0.0.1]:443"), false, capability.ErrSpecialAddress},
		{"zoned link-local", []string{"evil.example"}, "evil.example", netip.AddrPortFrom(netip.MustParseAddr("fe80::1%eth0"), 443), false, capability.ErrSpecialAddress},
		{"zoned host", []string{"*"}, "fe80::1%eth0", netip.MustParseAddrPort("[fe80::1]:443"), false, capability.ErrBadHost},
		{"port zero", []string{"*:*"}, "evil.example", netip.MustParseAddrPort("93.184.216.34:0"), false, capability.ErrBadHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := hostGrant(t, nil, tc.grant...).Dial(tc.host, tc.addr)
			if d.Allowed() != tc.want {
				t.Fatalf("Dial(%q, %s) under %q = %v (%s), want %v", tc.host, tc.addr, tc.grant, d.Allowed(), d.Reason(), tc.want)
			}
			if tc.reason != nil && !errors.Is(d.Err(), tc.reason) {
				t.Fatalf("Dial(%q, %s) = %v, want %v", tc.host, tc.addr, d.Err(), tc.reason)
			}
		})
	}
}

// TestDialReserved: packs' own listening addresses are out of reach,
// whatever the grant, on the exact address or, for an unspecified one, on
// every address with that port.
func TestDialReserved(t *testing.T) {
	g := hostGrant(t, nil, "localhost:*", "127.0.0.0/8:*", "[::1]:*", "0.0.0.0:*", "[::]:*", "*:*")
	web := netip.MustParseAddrPort("127.0.0.1:7777")
	mcp := netip.MustParseAddrPort("[::]:8888")
	cases := []struct {
		host string
		addr string
		want bool
	}{
		{"127.0.0.1", "127.0.0.1:7777", false},
		{"localhost", "127.0.0.1:7777", false},
		{"localhost", "[::ffff:127.0.0.1]:7777", false},
		{"127.0.0.1", "127.0.0.1:7778", true},
		{"127.0.0.2", "127.0.0.2:7777", true},
		{"::1", "[::1]:8888", false},
		{"127.0.0.1", "127.0.0.1:8888", false},
		{"evil.example", "93.184.216.34:8888", false},
		{"evil.example", "93.184.216.34:443", true},
		{"0.0.0.0", "0.0.0.0:7777", false},
		{"::", "[::]:7777", false},
		{"evil.example", "0.0.0.0:7777", false},
	}
	for _, tc := range cases {
		d := g.Dial(tc.host, netip.MustParseAddrPort(tc.addr), web, mcp)
		if d.Allowed() != tc.want {
			t.Errorf("Dial(%q, %s) = %v (%s), want %v", tc.host, tc.addr, d.Allowed(), d.Reason(), tc.want)
		}
		if !tc.want && !errors.Is(d.Err(), capability.ErrReservedAddress) {
			t.Errorf("Dial(%q, %s) = %v, want ErrReservedAddress", tc.host, tc.addr, d.Err())
		}
	}
}

// TestParseHost: the one canonical form of a host, and what is refused.
func TestParseHost(t *testing.T) {
	good := []struct{ in, name, addr string }{
		{"Example.COM.", "example.com", ""},
		{"bücher.example", "xn--bcher-kva.example", ""},
		{"ｅｘａｍｐｌｅ．ｃｏｍ", "example.com", ""},
		{"10.0.0.1", "", "10.0.0.1"},
		{"[::1]", "", "::1"},
		{"::ffff:127.0.0.1", "", "127.0.0.1"},
		{"[::ffff:127.0.0.1]", "", "127.0.0.1"},
	}
	for _, tc := range good {
		name, addr, err := capability.ParseHost(tc.in)
		got := addr.String()
		if !addr.IsValid() {
			got = ""
		}
		if err != nil || name != tc.name || got != tc.addr {
			t.Errorf("ParseHost(%q) = %q, %q, %v; want %q, %q", tc.in, name, got, err, tc.name, tc.addr)
		}
	}
	for _, s := range []string{
		"", "::ffff:127.0.0.1%.en.wikipedia.org", "[::1%25lo]", "fe80::1%eth0", "[10.0.0.1]", "127.1", "0x7f.0.0.1",
		"2130706433", "017700000001", "127.0.0.1.", "a..b", "a_b.example", "user@host", "ex%61mple.com", "a b", "xn--zz.example",
		"[::1]:80", "host:80",
	} {
		if _, _, err := capability.ParseHost(s); !errors.Is(err, capability.ErrBadHost) {
			t.Errorf("ParseHost(%q) = %v, want ErrBadHost", s, err)
		}
	}
}

// FuzzHostDecision: any host string under a fixed grant never panics, and an
// allowed address literal is one the grant names, or an ordinary address on
// an allowed port.
func FuzzHostDecision(f *testing.F) {
	for _, s := range []string{
		"api.example.com", "[::ffff:127.0.0.1%25.en.wikipedia.org]:80", "127.0.0.1:9000", "[::1]:9000", "10.9.9.9:22",
		"8.8.8.8", "bücher.example", "0x7f.1", "[64:ff9b::7f00:1]", "169.254.169.254:80", "a.example.com:8443",
	} {
		f.Add(s)
	}
	g := hostGrant(f, nil, "*.example.com", "api.example.org:8443", "10.0.0.0/8:*", "[::1]:9000", "198.51.100.7", "*")
	granted := []struct {
		p    netip.Prefix
		port uint16 // 0: any
		dflt bool
	}{
		{netip.MustParsePrefix("10.0.0.0/8"), 0, false},
		{netip.MustParsePrefix("::1/128"), 9000, false},
		{netip.MustParsePrefix("198.51.100.7/32"), 0, true},
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := g.Host(s)
		if !d.Allowed() {
			return
		}
		name, addr, port, err := splitForTest(s)
		if err != nil {
			t.Fatalf("Host(%q) allowed a host that does not parse: %v", s, err)
		}
		if name != "" {
			if port != 80 && port != 443 && !(name == "api.example.org" && port == 8443) {
				t.Fatalf("Host(%q) allowed port %d", s, port)
			}
			return
		}
		for _, gr := range granted {
			if gr.p.Contains(addr) && (gr.port == 0 && (!gr.dflt || port == 80 || port == 443) || gr.port == port) {
				return
			}
		}
		if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsMulticast() || addr.IsUnspecified() || !addr.IsGlobalUnicast() {
			t.Fatalf("Host(%q) allowed the special address %s (%s)", s, addr, d.Reason())
		}
		if port != 80 && port != 443 {
			t.Fatalf("Host(%q) allowed port %d", s, port)
		}
	})
}

// splitForTest reads s as Grant.Host does, through the exported parser.
func splitForTest(s string) (name string, addr netip.Addr, port uint16, err error) {
	port = 443
	h := s
	if ap, e := netip.ParseAddrPort(s); e == nil {
		h, port = ap.Addr().String(), ap.Port()
	} else if i := lastColon(s); i > 0 && s[0] != '[' && countColons(s) == 1 {
		var p int
		for _, c := range s[i+1:] {
			p = p*10 + int(c-'0')
		}
		h, port = s[:i], uint16(p)
	}
	name, addr, err = capability.ParseHost(h)
	return name, addr, port, err
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}

func countColons(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			n++
		}
	}
	return n
}
