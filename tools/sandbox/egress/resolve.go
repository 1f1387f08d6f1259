package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Resolver finds the addresses to connect to for host:port. The proxy
// calls it only for a host the policy allowed.
type Resolver interface {
	Resolve(ctx context.Context, host string, port int) ([]netip.AddrPort, error)
}

// SystemResolver resolves with the system's resolver (an address is
// itself).
type SystemResolver struct{}

// Resolve implements Resolver.
func (SystemResolver) Resolve(ctx context.Context, host string, port int) ([]netip.AddrPort, error) {
	if ip, ok := parseAddr(host); ok {
		return []netip.AddrPort{netip.AddrPortFrom(ip, uint16(port))}, nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		out = append(out, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
	}
	return out, nil
}

// StaticResolver maps "host:port" to one address, so that a test's
// "internet" of loopback listeners can stand for github.com:443 and
// evil.example:80. An address resolves to itself; any other name is
// not found (nothing reaches a real DNS server).
type StaticResolver map[string]netip.AddrPort

// Resolve implements Resolver.
func (m StaticResolver) Resolve(_ context.Context, host string, port int) ([]netip.AddrPort, error) {
	if a, ok := m[net.JoinHostPort(host, strconv.Itoa(port))]; ok {
		return []netip.AddrPort{a}, nil
	}
	if ip, ok := parseAddr(host); ok {
		return []netip.AddrPort{netip.AddrPortFrom(ip, uint16(port))}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// TestHostsVar names the setting, in hush's start-up environment, that
// replaces the system's resolver with a StaticResolver: hush's own
// end-to-end tests map github.com and evil.example to listeners on
// 127.0.0.1 with it. Its form is "host:port=address:port,…". No tool can
// set it: a tool never writes hush's environment.
const TestHostsVar = "HUSH_TEST_HOSTS"

// ParseStaticResolver reads TestHostsVar's value.
func ParseStaticResolver(s string) (StaticResolver, error) {
	m := StaticResolver{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, addr, ok := strings.Cut(kv, "=")
		ap, err := netip.ParseAddrPort(addr)
		if _, _, e := net.SplitHostPort(name); !ok || e != nil || err != nil {
			return nil, fmt.Errorf("%s: %q is not host:port=address:port", TestHostsVar, kv)
		}
		m[strings.ToLower(name)] = ap
	}
	return m, nil
}
