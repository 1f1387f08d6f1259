// Package egress is hush's egress proxy and the policy it enforces: where
// a host tool may connect, and where a granted secret may be sent.
//
// A host tool runs in a network of its own whose only way out is this
// proxy (HTTP_PROXY / HTTPS_PROXY: plain absolute-URI requests and
// CONNECT). The proxy resolves names itself, decides every connection by
// the Policy — a call that holds granted secrets reaches only the hosts
// bound to them; a call that holds none reaches public hosts and never
// the host's loopback or private ranges unless listed — checks the
// address it actually connects to, and reports every connection to an
// audit callback with the names, never the values, of the secrets the
// call held.
//
// Use: one Proxy per session, one listener per call.
//
//	pol, err := egress.NewPolicy(cfg)              // config.toml, validated
//	px, err := egress.New(egress.Options{Policy: pol,
//		Upstream: httpproxy.FromEnvironment-like func, // the user's proxy, or nil
//		Ask:      prompt,                            // nil in hush run: refuse
//		Audit:    record})                           // one Record per connection
//	ln := a listener inside the call's network namespace (127.0.0.1:0)
//	env, err := egress.ToolEnv(ln.Addr())          // the tool's proxy variables
//	go px.Serve(callCtx, ln, egress.Call{Tool: "bash", Secrets: granted})
//
// Policy.Describe is the network section of `hush sandbox show`; Dial is
// the tool's side of a tunnel, for a ProxyCommand.
//
// It must never: connect, or resolve a name, before the policy allowed
// the host (a name sent to a DNS server is data leaving); send a byte of
// a refused request anywhere; hand the user's upstream proxy to a tool;
// import package tools (the sandbox starts processes, this package only
// serves sockets it is given).
package egress
