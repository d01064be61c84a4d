package capability

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Network denials that no grant of a name can lift.
var (
	// ErrSpecialAddress: the destination is a loopback, private, link-local,
	// shared, unique-local, unspecified, multicast, broadcast, reserved or
	// cloud-metadata address (or an IPv6 form that embeds one), and no grant
	// names that address or a CIDR holding it. Granting a name that resolves
	// to such an address is not enough.
	ErrSpecialAddress = errors.New("capability: special-purpose address not granted by address")
	// ErrReservedAddress: the destination is one of packs' own listening
	// addresses (the web app, the MCP server). No grant reaches it.
	ErrReservedAddress = errors.New("capability: packs' own listening address")
	// ErrBadHost is wrapped by every error about a host that does not parse:
	// a zone ID, a name that IDNA lookup rules refuse, a name that ends in a
	// number, a bad port.
	ErrBadHost = errors.New("capability: not a valid host")
)

// The ports a host pattern without a port allows: http's and https's.
const (
	portHTTP  = 80
	portHTTPS = 443
)

// host is a destination host as decisions see it.
type host struct {
	name string     // lower-case ASCII (IDNA lookup rules), no trailing dot; "" for an address
	ip   netip.Addr // an address literal: no zone, IPv4-mapped forms unmapped
}

func badHost(s, why string) error { return fmt.Errorf("%w %q: %s", ErrBadHost, s, why) }

// ParseHost reads a host without a port: a name, an IPv4 address in four
// decimal parts, or an IPv6 address with or without brackets. It returns the
// name in the form every decision uses (lower-case ASCII under IDNA lookup
// rules, without a trailing dot), or else the address (an IPv4-mapped IPv6
// address as its IPv4 address). It refuses, wrapping ErrBadHost, anything
// ambiguous: zone IDs, percent signs, an IPv4 address in brackets, a name
// that does not normalize or whose last label is a number ("127.1",
// "0x7f.1", "2130706433").
func ParseHost(s string) (name string, addr netip.Addr, err error) {
	h, err := parseHost(s)
	return h.name, h.ip, err
}

func parseHost(s string) (host, error) {
	switch {
	case s == "":
		return host{}, badHost(s, "empty host")
	case strings.ContainsAny(s, "%@/\\ \t\r\n"):
		return host{}, badHost(s, "a host holds no zone ID, user info, path, escape or space")
	case strings.HasPrefix(s, "["):
		if !strings.HasSuffix(s, "]") {
			return host{}, badHost(s, "unclosed '['")
		}
		ip, err := netip.ParseAddr(s[1 : len(s)-1])
		if err != nil || !ip.Is6() {
			return host{}, badHost(s, "brackets hold an IPv6 address")
		}
		return host{ip: ip.Unmap()}, nil
	case strings.Contains(s, ":"):
		ip, err := netip.ParseAddr(s)
		if err != nil || !ip.Is6() {
			return host{}, badHost(s, "not an IPv6 address")
		}
		return host{ip: ip.Unmap()}, nil
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		return host{ip: ip}, nil
	}
	name, err := normalizeName(s)
	if err != nil {
		return host{}, badHost(s, err.Error())
	}
	labels := strings.Split(name, ".")
	if numericLabel(labels[len(labels)-1]) {
		return host{}, badHost(s, "a name cannot end in a number: write an IPv4 address as four decimal parts")
	}
	return host{name: name}, nil
}

// normalizeName applies IDNA lookup rules (UTS #46, as browsers do) and
// checks the DNS limits: labels of 1 to 63 letters, digits and inner
// hyphens, 253 bytes in all. One trailing dot (the root) is dropped.
func normalizeName(s string) (string, error) {
	a, err := idna.Lookup.ToASCII(s)
	if err != nil {
		return "", errors.New("not a valid host name under IDNA lookup rules")
	}
	a = strings.TrimSuffix(a, ".")
	if a == "" || len(a) > 253 {
		return "", errors.New("a host name has 1 to 253 characters")
	}
	for _, l := range strings.Split(a, ".") {
		if !ldhLabel(l) {
			return "", errors.New("labels hold 1 to 63 of a-z, 0-9 and inner '-'")
		}
	}
	return a, nil
}

func ldhLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// numericLabel reports whether URL parsers read l as a number (the WHATWG
// "ends in a number" rule): decimal digits, or 0x and hex digits.
func numericLabel(l string) bool {
	if h, ok := strings.CutPrefix(l, "0x"); ok {
		l = h
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return l != ""
}

// splitPort splits "host", "host:port", "[v6]", "[v6]:port" and a bare
// IPv6 address (more than one colon, no port).
func splitPort(s string) (h, port string, hasPort bool, err error) {
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return "", "", false, badHost(s, "unclosed '['")
		}
		switch rest := s[i+1:]; {
		case rest == "":
			return s, "", false, nil
		case rest[0] != ':':
			return "", "", false, badHost(s, "only a port may follow ']'")
		default:
			return s[:i+1], rest[1:], true, nil
		}
	}
	if strings.Count(s, ":") == 1 {
		h, port, _ = strings.Cut(s, ":")
		return h, port, true, nil
	}
	return s, "", false, nil
}

// parsePort reads a port: decimal, 1 to 65535, no sign and no leading zero.
func parsePort(s string) (uint16, error) {
	if s == "" || s[0] == '0' || len(s) > 5 {
		return 0, badHost(s, "a port is a number from 1 to 65535, without leading zeros")
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, badHost(s, "a port is a number from 1 to 65535, without leading zeros")
	}
	return uint16(n), nil
}

// parseDest reads host[:port] as Grant.Host takes it; without a port it
// is 443.
func parseDest(s string) (host, uint16, error) {
	hs, ps, hasPort, err := splitPort(s)
	if err != nil {
		return host{}, 0, err
	}
	port := uint16(portHTTPS)
	if hasPort {
		if port, err = parsePort(ps); err != nil {
			return host{}, 0, err
		}
	}
	h, err := parseHost(hs)
	return h, port, err
}

// special is one range of special-purpose addresses.
type special struct {
	prefix netip.Prefix
	class  string
}

var (
	// nat64 is the well-known NAT64 prefix (RFC 6052): its last 32 bits are
	// an IPv4 address, decided as that address.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// global6 is IPv6 global unicast; every IPv6 address outside it (but
	// nat64) is special.
	global6 = netip.MustParsePrefix("2000::/3")
	// specials lists the special-purpose ranges, narrow classes first
	// (IANA's special-purpose registries, RFC 6890 and its updates).
	specials = func() []special {
		var out []special
		for _, s := range []struct{ p, class string }{
			{"169.254.169.254/32", "cloud metadata"},
			{"0.0.0.0/8", "unspecified (this network)"},
			{"10.0.0.0/8", "private"},
			{"100.64.0.0/10", "shared (CGNAT)"},
			{"127.0.0.0/8", "loopback"},
			{"169.254.0.0/16", "link-local"},
			{"172.16.0.0/12", "private"},
			{"192.0.0.0/24", "IETF protocol assignment"},
			{"192.0.2.0/24", "documentation"},
			{"192.88.99.0/24", "6to4 relay anycast"},
			{"192.168.0.0/16", "private"},
			{"198.18.0.0/15", "benchmarking"},
			{"198.51.100.0/24", "documentation"},
			{"203.0.113.0/24", "documentation"},
			{"224.0.0.0/4", "multicast"},
			{"255.255.255.255/32", "broadcast"},
			{"240.0.0.0/4", "reserved"},
			{"fd00:ec2::254/128", "cloud metadata"},
			{"::/128", "unspecified"},
			{"::1/128", "loopback"},
			{"::/96", "IPv4-compatible (embeds an IPv4 address)"},
			{"::ffff:0:0:0/96", "IPv4-translated (embeds an IPv4 address)"},
			{"64:ff9b:1::/48", "local-use NAT64 (embeds an IPv4 address)"},
			{"100::/64", "discard-only"},
			{"2001::/32", "Teredo (embeds an IPv4 address)"},
			{"2001:2::/48", "benchmarking"},
			{"2001:10::/28", "ORCHID"},
			{"2001:20::/28", "ORCHIDv2"},
			{"2001:db8::/32", "documentation"},
			{"2002::/16", "6to4 (embeds an IPv4 address)"},
			{"3fff::/20", "documentation"},
			{"fc00::/7", "unique-local"},
			{"fe80::/10", "link-local"},
			{"fec0::/10", "site-local"},
			{"ff00::/8", "multicast"},
		} {
			out = append(out, special{netip.MustParsePrefix(s.p), s.class})
		}
		return out
	}()
)

// specialClass names the class of a special-purpose address, or returns ""
// for an ordinary one. IPv4-mapped and NAT64 addresses are decided as the
// IPv4 address they embed; the other embedding forms are special as a whole.
func specialClass(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return "invalid"
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		if c := specialClass(netip.AddrFrom4([4]byte(b[12:]))); c != "" {
			return "NAT64 of a " + c
		}
		return ""
	}
	for _, s := range specials {
		if s.prefix.Contains(ip) {
			return s.class
		}
	}
	if ip.Is6() && !global6.Contains(ip) {
		return "reserved"
	}
	return ""
}

// overlapsSpecial reports whether prefix holds a special-purpose address.
func overlapsSpecial(prefix netip.Prefix) bool {
	if prefix.IsSingleIP() {
		return specialClass(prefix.Addr()) != ""
	}
	if prefix.Addr().Is6() && (prefix.Overlaps(nat64) || !global6.Contains(prefix.Addr()) || prefix.Bits() < global6.Bits()) {
		return true
	}
	for _, s := range specials {
		if s.prefix.Overlaps(prefix) {
			return true
		}
	}
	return false
}

// Host decides whether the pack may contact host, written "name",
// "address", "name:port" or "address:port" (an IPv6 address in brackets
// when a port follows). Without a port it is 443. A name is decided by name
// alone: Dial decides each address it resolves to. An address is decided
// as Dial decides it.
func (g Grant) Host(hostport string) Decision {
	if !g.Has(Network) {
		return g.missing(Network, hostport)
	}
	h, port, err := parseDest(hostport)
	if err != nil {
		return deny(Network, hostport, LayerRequest, ErrBadHost, err.Error())
	}
	if h.name == "" {
		return g.dial(hostport, h, netip.AddrPortFrom(h.ip, port), nil)
	}
	return g.matchHost(hostport, h, port)
}

// Dial decides whether the pack may open a connection to addr, one address
// that host (a name, or the address itself) resolved to. It is the decision
// on the address actually dialled: the name must be granted on addr's port;
// a special-purpose address (ErrSpecialAddress) also needs a grant that
// names it or a CIDR holding it; and no grant reaches an address in
// reserved (ErrReservedAddress), packs' own listeners. A reserved address
// whose IP is unspecified (0.0.0.0 or ::) reserves its port on every
// address, and a dial to an unspecified address on a reserved port is
// refused.
func (g Grant) Dial(host string, addr netip.AddrPort, reserved ...netip.AddrPort) Decision {
	ip := addr.Addr().WithZone("").Unmap()
	resource := net.JoinHostPort(ip.String(), strconv.Itoa(int(addr.Port())))
	if host != ip.String() && host != "["+ip.String()+"]" {
		resource = net.JoinHostPort(host, strconv.Itoa(int(addr.Port()))) + " (" + ip.String() + ")"
	}
	if !g.Has(Network) {
		return g.missing(Network, resource)
	}
	h, err := parseHost(host)
	switch {
	case err != nil:
		return deny(Network, resource, LayerRequest, ErrBadHost, err.Error())
	case !ip.IsValid() || addr.Port() == 0:
		return deny(Network, resource, LayerRequest, ErrBadHost, "no address or port to dial")
	case h.name == "" && h.ip != ip:
		return deny(Network, resource, LayerRequest, ErrBadHost, "the address dialled is not the address literal")
	}
	return g.dial(resource, h, netip.AddrPortFrom(ip, addr.Port()), reserved)
}

// dial decides h reached at addr (no zone, unmapped).
func (g Grant) dial(resource string, h host, addr netip.AddrPort, reserved []netip.AddrPort) Decision {
	ip, port := addr.Addr(), addr.Port()
	for _, r := range reserved {
		// An unspecified address on either side means every local address:
		// a listener on [::] takes connections to 10.0.0.5, and a connection
		// to 0.0.0.0 reaches a listener on 127.0.0.1.
		if r.Port() == port && (r.Addr().IsUnspecified() || ip.IsUnspecified() || r.Addr().WithZone("").Unmap() == ip) {
			return deny(Network, resource, LayerRequest, ErrReservedAddress, "packs' own listening address "+r.String()+": no pack reaches it, whatever it was granted")
		}
	}
	d := g.matchHost(resource, h, port)
	class := specialClass(ip)
	if !d.Allowed() || class == "" {
		return d
	}
	for _, p := range g.g.c.hosts {
		if p.grantsAddr(ip, port) {
			return allow(Network, resource, "matches "+p.String())
		}
	}
	d = g.outside(Network, resource, func(it item) bool { return it.host.grantsAddr(ip, port) })
	d.cause = ErrSpecialAddress
	d.reason = ip.String() + " is a " + class + " address, reached only through a grant of that address or a CIDR holding it: " + d.reason
	return d
}

// matchHost decides h on port by the host patterns alone.
func (g Grant) matchHost(resource string, h host, port uint16) Decision {
	for _, p := range g.g.c.hosts {
		if p.covers(h, port) {
			return allow(Network, resource, "matches "+p.String())
		}
	}
	return g.outside(Network, resource, func(it item) bool { return it.host.covers(h, port) })
}
