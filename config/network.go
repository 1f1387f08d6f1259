package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Network is [network]: where host tools may connect through hush's egress
// proxy. A call that holds no secret reaches every public host and no
// loopback or private address; Allow adds hosts (a listed host is reached
// even where it resolves to a private address), Deny removes them. A call
// that holds a granted secret is bound by [secrets.NAME] hosts instead;
// Deny still applies to it.
type Network struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

// SecretHosts is [secrets.NAME]: the hosts a granted secret may be sent to.
// It replaces the built-in hosts of a well-known name (GITHUB_TOKEN,
// OPENAI_API_KEY, …); an empty list binds the secret to no host at all.
type SecretHosts struct {
	Hosts []string `toml:"hosts"`
}

// HostPattern is one entry of a host list: "github.com", "*.npmjs.org"
// (any name under npmjs.org, not npmjs.org itself), "127.0.0.1:5432",
// "[::1]:8080", or "*" (every host); with ":PORT" it matches that port
// only. ParseHostPattern is the one parser of this syntax (config.toml,
// the egress proxy's policy, `hush sandbox show`).
type HostPattern struct {
	// Host is a lower-case name without a trailing dot, an IP address in
	// canonical form, "*.SUFFIX", or "*".
	Host string
	// Port is the one port matched; 0 matches any.
	Port int
}

// ParseHostPattern parses one host pattern; the error is one sentence
// about s that does not repeat it (the caller names the list and entry).
func ParseHostPattern(s string) (HostPattern, error) {
	switch {
	case s == "":
		return HostPattern{}, errors.New("is empty")
	case strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\r\n"):
		return HostPattern{}, errors.New("holds spaces")
	case strings.Contains(s, "://"):
		return HostPattern{}, errors.New("has a scheme: write only the host, with an optional port (\"github.com\", \"github.com:443\")")
	case strings.ContainsAny(s, "/?#@"):
		if _, err := netip.ParsePrefix(s); err == nil {
			return HostPattern{}, errors.New("is an address range; list the addresses (\"10.0.0.5\") or the names")
		}
		return HostPattern{}, errors.New("is not a host: write only the host, with an optional port (no path, no user)")
	}
	host, port := s, 0
	if ip, err := netip.ParseAddr(s); err == nil { // a bare IPv6 address has colons of its own
		if ip.Zone() != "" {
			return HostPattern{}, errors.New("has an IPv6 zone, which the proxy does not route")
		}
		return HostPattern{Host: ip.Unmap().String()}, nil
	}
	if strings.HasPrefix(s, "[") || strings.Contains(s, ":") {
		h, p, err := splitHostPort(s)
		if err != nil {
			return HostPattern{}, err
		}
		host, port = h, p
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return HostPattern{}, errors.New("has an IPv6 zone, which the proxy does not route")
		}
		return HostPattern{Host: ip.Unmap().String(), Port: port}, nil
	}
	if host == "*" {
		return HostPattern{Host: host, Port: port}, nil
	}
	name := strings.TrimPrefix(host, "*.")
	if strings.Contains(name, "*") {
		return HostPattern{}, errors.New("has a * that is not the whole first label (\"*.example.com\")")
	}
	if err := checkHostName(name); err != nil {
		return HostPattern{}, err
	}
	return HostPattern{Host: host, Port: port}, nil
}

func splitHostPort(s string) (string, int, error) {
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("has a [ without its ]")
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if _, err := netip.ParseAddr(host); err != nil {
			return "", 0, errors.New("has brackets around something that is not an IPv6 address")
		}
		if port == "" && len(s) > end+1 {
			return "", 0, errors.New("has a : with no port")
		}
		if port == "" {
			return host, 0, nil
		}
	} else {
		i := strings.LastIndexByte(s, ':')
		host, port = s[:i], s[i+1:]
		if strings.Contains(host, ":") {
			return "", 0, errors.New("is an IPv6 address with a port: write it as \"[::1]:8080\"")
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '+' {
		return "", 0, errors.New("has a port that is not a number from 1 to 65535")
	}
	return host, n, nil
}

// checkHostName accepts DNS names: labels of letters, digits, - and _.
func checkHostName(name string) error {
	if name == "" || len(name) > 253 {
		return errors.New("is not a host name")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("has an empty or over-long label (two dots in a row, or a leading dot)")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("has a character a host name cannot hold (%q)", string(rune(c)))
			}
		}
	}
	return nil
}

// NormalizeHost is host as patterns are matched against it: lower case, no
// trailing dot, no IPv6 brackets, an IP address in canonical form.
func NormalizeHost(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().String()
	}
	return host
}

// Wildcard reports whether p matches more than one name ("*", "*.x").
func (p HostPattern) Wildcard() bool { return strings.HasPrefix(p.Host, "*") }

// Match reports whether p matches host (as NormalizeHost gives it) on port.
// A name pattern never matches an IP address, and an address pattern
// only that address: listing "github.com" does not open its addresses.
func (p HostPattern) Match(host string, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	switch {
	case p.Host == "*":
		return true
	case strings.HasPrefix(p.Host, "*."):
		if _, err := netip.ParseAddr(host); err == nil {
			return false
		}
		return strings.HasSuffix(host, p.Host[1:])
	}
	return p.Host == host
}

// Specificity orders patterns that match one host: an exact host beats a
// wildcard, a longer suffix a shorter one, "*" loses to all, and with a
// port beats without.
func (p HostPattern) Specificity() int {
	s := 0
	switch {
	case p.Host == "*":
	case strings.HasPrefix(p.Host, "*."):
		s = 10 * strings.Count(p.Host, ".")
	default:
		s = 10000
	}
	if p.Port != 0 {
		s++
	}
	return s
}

// String is p as written in config.toml.
func (p HostPattern) String() string {
	if p.Port == 0 {
		return p.Host
	}
	if strings.Contains(p.Host, ":") {
		return "[" + p.Host + "]:" + strconv.Itoa(p.Port)
	}
	return p.Host + ":" + strconv.Itoa(p.Port)
}

// ParseHostPatterns parses a list; where names it in the error
// ("network.allow").
func ParseHostPatterns(where string, list []string) ([]HostPattern, error) {
	out := make([]HostPattern, 0, len(list))
	for i, s := range list {
		p, err := ParseHostPattern(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d] %q %s", where, i, s, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// checkNetwork validates [network], [secrets.NAME] and the tools' network
// lists.
func (c *Config) checkNetwork() error {
	for _, l := range []struct {
		key  string
		list []string
	}{{"network.allow", c.Network.Allow}, {"network.deny", c.Network.Deny}} {
		if _, err := ParseHostPatterns(l.key, l.list); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		if (len(t.NetworkAllow) > 0 || len(t.NetworkDeny) > 0) && name == "http" {
			return errors.New("tools.http: network_allow and network_deny are for host tools; the http tool runs inside hush and has allow_private")
		}
		if (len(t.NetworkAllow) > 0 || len(t.NetworkDeny) > 0) && t.Network == "none" {
			return fmt.Errorf("tools.%s: network = \"none\" leaves no network for network_allow or network_deny to open or close; remove one", name)
		}
		for _, l := range []struct {
			key  string
			list []string
		}{{"network_allow", t.NetworkAllow}, {"network_deny", t.NetworkDeny}} {
			if _, err := ParseHostPatterns("tools."+name+"."+l.key, l.list); err != nil {
				return err
			}
		}
	}
	for _, name := range sortedKeys(c.Secrets) {
		if !ValidSecretName(name) {
			return fmt.Errorf("secrets.%q: not a secret name (letters, digits and _, not starting with a digit)", name)
		}
		if _, err := ParseHostPatterns("secrets."+name+".hosts", c.Secrets[name].Hosts); err != nil {
			return err
		}
	}
	return nil
}
