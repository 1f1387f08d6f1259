package session

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox/egress"
)

// Network modes of a host tool ([tools.NAME] network).
const (
	NetworkProxy = "proxy" // a network of its own, out only through hush's egress proxy
	NetworkHost  = "host"  // the host's network, as without hush
	NetworkNone  = "none"  // only a loopback interface
)

// network is a session's egress: one proxy for every host tool whose
// network is "proxy", each call on a listener of its own inside the
// call's network namespace (tools.Spec.Egress).
type network struct {
	proxy   *egress.Proxy
	proxied map[string]bool
	local   tools.LocalServices
}

// Local implements executor.Network.
func (n *network) Local() *tools.LocalServices { return &n.local }

// netCallKey carries a call's executor.NetCall to the proxy's Ask.
type netCallKey struct{}

// Proxied implements executor.Network.
func (n *network) Proxied(tool string) bool {
	return n.proxied[networkKey(tool)]
}

// Serve implements executor.Network.
func (n *network) Serve(ctx context.Context, l net.Listener, call executor.NetCall) {
	_ = n.proxy.Serve(context.WithValue(ctx, netCallKey{}, call), l, egress.Call{Tool: call.Tool, Secrets: call.Secrets, Turn: call.Turn})
}

// NetworkMode is the named host tool's network setting: "proxy" unless
// [tools.NAME] network says otherwise.
func NetworkMode(cfg config.Config, tool string) (string, error) {
	switch n := cfg.Tools[tool].Network; n {
	case "", NetworkProxy:
		return NetworkProxy, nil
	case NetworkHost, NetworkNone:
		return n, nil
	default:
		return "", fmt.Errorf("tools.%s.network = %q: want \"proxy\" (the default: out only through hush's egress proxy), "+
			"\"host\" (the host's network, unfiltered) or \"none\" (only a loopback interface)", tool, n)
	}
}

// newNetwork makes the session's egress proxy for the host tools in
// proxied, from [network] and [secrets.NAME] hosts. Its asks go to the
// call's gate (net.connect:HOST; a person answers in chat, hush run
// refuses); its records go to the audit log and the event stream. The
// user's own proxy (HTTP_PROXY… in hush's start-up environment) is the
// proxy's upstream, never the tool's.
func newNetwork(cfg config.Config, ambient map[string]string, audit *auditlog.Log, session string, ev executor.Events, proxied map[string]bool) (*network, error) {
	pol, err := egress.NewPolicy(cfg)
	if err != nil {
		return nil, err
	}
	var resolver egress.Resolver
	if hosts := ambient[egress.TestHostsVar]; hosts != "" {
		if resolver, err = egress.ParseStaticResolver(hosts); err != nil {
			return nil, err
		}
	}
	upstream := userProxy(ambient)
	p, err := egress.New(egress.Options{
		Policy:   pol,
		Resolver: resolver,
		Upstream: upstream,
		Ask:      askGate,
		Audit: func(r egress.Record) {
			recordConnection(audit, session, ev, r)
		},
	})
	if err != nil {
		return nil, err
	}
	return &network{proxy: p, proxied: proxied}, nil
}

// askGate puts a connection the policy asks about to the call's gate, as
// net.connect:HOST with the tool as subject. Only an allow from the gate
// (a person, or a rule the user wrote) lets it through; --yes, which
// approves tool runs, never does.
func askGate(ctx context.Context, q egress.Question) egress.Answer {
	call, ok := ctx.Value(netCallKey{}).(executor.NetCall)
	if !ok || call.Ask == nil {
		return egress.Refuse
	}
	detail := fmt.Sprintf("%s:%d — %s", q.Host, q.Port, q.Reason)
	if len(q.Secrets) > 0 {
		detail += " (the call holds " + strings.Join(q.Secrets, ", ") + ")"
	}
	v, err := call.Ask(executor.GateNetConnect+q.Host, detail)
	if err != nil || v.Decision != executor.Allow {
		return egress.Refuse
	}
	return egress.AllowCall
}

// NetEvents is what an event sink implements to report connections
// (`hush run --json`'s net.connect).
type NetEvents interface {
	NetConnect(auditlog.Entry)
}

// recordConnection writes one connection's record to the audit log and
// the event stream: names and counts, never a value.
func recordConnection(audit *auditlog.Log, session string, ev executor.Events, r egress.Record) {
	d := auditlog.Deny
	if r.Action == egress.Allow {
		d = auditlog.Allow
	}
	src := "network"
	if r.Asked {
		src = "prompt"
	}
	e := auditlog.Entry{
		Time: r.Start, Session: session, Turn: r.Turn, Tool: r.Tool, Gate: executor.GateNetConnect + r.Host,
		Decision: d, Source: src, Rule: r.Rule,
		Net: &auditlog.Net{Method: r.Method, Host: r.Host, Port: r.Port, Secrets: r.Secrets, Reason: r.Reason,
			Sent: r.Sent, Received: r.Received, Error: r.Err},
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if audit != nil {
		_ = audit.Record(e)
	}
	if ne, ok := ev.(NetEvents); ok {
		ne.NetConnect(e)
	}
}

// NetworkView is what `hush sandbox show` says of the named host tool's
// network ("bash", "background", "mcp:NAME"): its mode, and with "proxy"
// the egress policy's entries for it.
func NetworkView(cfg config.Config, tool string) (mode string, entries []egress.Entry, err error) {
	if mode, err = NetworkMode(cfg, networkKey(tool)); err != nil || mode != NetworkProxy {
		return mode, nil, err
	}
	pol, err := egress.NewPolicy(cfg)
	if err != nil {
		return "", nil, err
	}
	return mode, pol.Describe(tool, nil), nil
}

// networkKey is the [tools.NAME] section that sets a tool's network: one
// "mcp" for every MCP server.
func networkKey(tool string) string {
	if strings.HasPrefix(tool, "mcp:") {
		return "mcp"
	}
	return tool
}
