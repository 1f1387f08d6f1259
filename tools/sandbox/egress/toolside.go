package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// What a tool is given to reach the proxy, and the tool's side of a
// tunnel (for a ProxyCommand).

// CheckProxyURL is seed 001's rule for the proxy a tool is pointed at: an
// http:// URL on a loopback address with an explicit port, and nothing
// else (no user, no path). Anything else would hand the tool a proxy it
// could not reach inside its network, or one outside hush.
func CheckProxyURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("the tool's proxy is not a URL")
	}
	ip, err := netip.ParseAddr(u.Hostname())
	switch {
	case u.Scheme != "http":
		return fmt.Errorf("the tool's proxy %s: want an http:// URL", s)
	case err != nil || !ip.IsLoopback():
		return fmt.Errorf("the tool's proxy %s: want a loopback address (127.0.0.1 or [::1]), not a name", s)
	case u.Port() == "":
		return fmt.Errorf("the tool's proxy %s: want an explicit port", s)
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("the tool's proxy %s: want only scheme, address and port", s)
	}
	if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("the tool's proxy %s: want a port from 1 to 65535", s)
	}
	return nil
}

// LocalNames is NO_PROXY for a tool: its own loopback, which inside its
// network is the namespace's (a dev server a tool of the session started),
// never the host's, is reached directly.
const LocalNames = "localhost,127.0.0.1,::1"

// ToolEnv is the proxy variables of a tool whose proxy listens at addr
// (inside the tool's network): HTTP_PROXY, HTTPS_PROXY and ALL_PROXY set to
// it, NO_PROXY to LocalNames, each in both cases. It replaces any the tool
// would inherit, the user's upstream proxy among them.
func ToolEnv(addr net.Addr) (map[string]string, error) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return nil, fmt.Errorf("the tool's proxy listens at %s, not an address and port", addr)
	}
	u := "http://" + ap.String()
	if err := CheckProxyURL(u); err != nil {
		return nil, err
	}
	return ProxyVars(u), nil
}

// ProxyVars is the proxy variables of ToolEnv for the proxy URL u, without
// its check that u is on the tool's loopback: for a container, whose proxy
// listens on its network's gateway (docker-bash's network = "proxy").
func ProxyVars(u string) map[string]string {
	env := map[string]string{}
	for _, n := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env[n] = u
		env[strings.ToLower(n)] = u
	}
	env["NO_PROXY"], env["no_proxy"] = LocalNames, LocalNames
	return env
}

// Dial opens a tunnel to host:port through the proxy at proxyAddr: the
// tool's side of CONNECT, for a ProxyCommand (ssh, git over ssh) or a
// forwarded port. A refusal is an error carrying the proxy's sentence.
func Dial(ctx context.Context, proxyAddr, host string, port int) (net.Conn, error) {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	c, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "tcp", proxyAddr)
	if err != nil {
		return nil, fmt.Errorf("reach hush's proxy: %w", err)
	}
	c, status, msg, err := handshake(ctx, c, target, "")
	switch {
	case err != nil:
		return nil, fmt.Errorf("reach hush's proxy: %w", err)
	case status != "" && len(msg) > 0:
		return nil, errors.New(strings.TrimRight(string(msg), "\r\n"))
	case status != "":
		return nil, fmt.Errorf("hush's proxy answered %s", status)
	}
	return c, nil
}
