package egress

import "net/netip"

// nonPublic are the ranges beyond netip's own predicates that a call
// without a listed host never reaches: each is the user's machine, the
// user's network, or an address that routes to one of them.
var nonPublic = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified address"}, // 0.0.0.0 reaches the host's loopback
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address (Tailscale and the like)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"}, // and 255.255.255.255
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address"},   // can reach IPv4 private ranges
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64 address"},
}

// AddressKind says why ip is not a public address ("a loopback address"),
// or "" when it is one. It is the one list of ranges a call reaches only
// through a rule that names the host.
func AddressKind(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "an invalid address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsMulticast():
		return "a multicast address"
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	return ""
}

// Public reports whether ip is a public address.
func Public(ip netip.Addr) bool { return AddressKind(ip) == "" }
