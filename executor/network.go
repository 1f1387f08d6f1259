package executor

import (
	"context"
	"net"
	"slices"

	"github.com/hushcli/hush/tools"
)

// Network is where host tools' calls go out: the session's egress proxy.
// An Agent without one leaves every host tool the network its sandbox
// gives.
type Network interface {
	// Proxied says whether the named tool's calls reach the network only
	// through the proxy.
	Proxied(tool string) bool
	// Serve answers the proxy requests of one call on l until ctx ends.
	Serve(ctx context.Context, l net.Listener, call NetCall)
	// Local are the session's local services (a dev server a background
	// process started), reached by its later calls.
	Local() *tools.LocalServices
}

// NetCall is one call behind the egress proxy: who it is, the names of the
// secrets it holds (never their values), and how to ask the person about
// a connection the policy does not decide (gate net.connect:HOST).
type NetCall struct {
	Tool    string
	Turn    int
	Secrets []string
	Ask     func(gateID, detail string) (Verdict, error)
}

// GateNetConnect is the gate of a connection the policy asks about:
// "net.connect:" + host.
const GateNetConnect = "net.connect:"

// Egress is what a host tool puts in its spawn spec (tools.Spec.Egress)
// for this call, after BuildEnv: nil when the tool's calls are not
// proxied. The call holds the secrets BuildEnv read for it.
func (tc *ToolContext) Egress() func(context.Context, net.Listener) {
	if tc.Network == nil || !tc.Network.Proxied(tc.Subject) {
		return nil
	}
	call := NetCall{Tool: tc.Subject, Turn: tc.Turn, Secrets: slices.Clone(tc.held), Ask: tc.Ask}
	n := tc.Network
	return func(ctx context.Context, l net.Listener) { n.Serve(ctx, l, call) }
}

// Local is what a host tool puts in its spawn spec (tools.Spec.Local)
// beside Egress: the session's local services, or nil.
func (tc *ToolContext) Local() *tools.LocalServices {
	if tc.Network == nil || !tc.Network.Proxied(tc.Subject) {
		return nil
	}
	return tc.Network.Local()
}
