package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/hushcli/hush/config"
)

// Action is what the policy says of one connection.
type Action int

const (
	// Deny refuses the connection.
	Deny Action = iota
	// Allow lets it through.
	Allow
	// Ask leaves it to the person (hush chat); where nobody can answer
	// (hush run) it is refused.
	Ask
)

func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// Call is who is connecting: the tool ("bash", "background", "mcp:NAME")
// and the names of the secrets the call was granted (never their values).
type Call struct {
	Tool    string
	Secrets []string
	// Turn is the session's turn the call is in, for its records.
	Turn int
}

// Verdict is the policy's answer for one host and port, and why.
type Verdict struct {
	Action Action
	// Rule is the rule that decided, as the audit records it:
	// `network.deny "pastebin.com"`, `secrets.GITHUB_TOKEN.hosts
	// "github.com"`, `built-in GITHUB_TOKEN "github.com"`, `default public`.
	Rule string
	// Reason is one sentence for the tool's user: why, and for a refusal
	// what to add to config.toml.
	Reason string
	// private: the rule names the host, so it may resolve to a loopback or
	// private address; a default or built-in rule reaches public addresses
	// only.
	private bool
}

// rule is one parsed pattern and where it came from.
type rule struct {
	pat    config.HostPattern
	action Action
	key    string // "network.allow", "tools.bash.network_deny"
}

func (r rule) name() string { return r.key + " " + strconv.Quote(r.pat.String()) }

// binding is one host a secret may be sent to.
type binding struct {
	pat     config.HostPattern
	source  string // `secrets.NAME.hosts`, `built-in NAME`, `session NAME`
	private bool
}

// Policy decides connections from [network], [tools.NAME] network_allow
// and network_deny, [tools.NAME] network = "none", [secrets.NAME] hosts,
// the built-in bindings, and the bindings a session added (Bind). A Policy
// is never changed: Bind returns a new one, so a decision in flight reads
// one consistent policy.
type Policy struct {
	global  []rule
	tools   map[string][]rule
	none    map[string]bool
	secrets map[string][]binding // configured or built in, by name
	session map[string][]binding
}

// NewPolicy is the policy of a config (already validated by config.Parse;
// a bad pattern is still an error, naming its key).
func NewPolicy(c config.Config) (*Policy, error) {
	p := &Policy{tools: map[string][]rule{}, none: map[string]bool{}, secrets: map[string][]binding{}, session: map[string][]binding{}}
	add := func(dst []rule, key string, list []string, a Action) ([]rule, error) {
		pats, err := config.ParseHostPatterns(key, list)
		if err != nil {
			return nil, err
		}
		for _, pat := range pats {
			dst = append(dst, rule{pat: pat, action: a, key: key})
		}
		return dst, nil
	}
	var err error
	if p.global, err = add(p.global, "network.deny", c.Network.Deny, Deny); err != nil {
		return nil, err
	}
	if p.global, err = add(p.global, "network.allow", c.Network.Allow, Allow); err != nil {
		return nil, err
	}
	for name, t := range c.Tools {
		if t.Network == "none" {
			p.none[name] = true
		}
		var rs []rule
		if rs, err = add(rs, "tools."+name+".network_deny", t.NetworkDeny, Deny); err != nil {
			return nil, err
		}
		if rs, err = add(rs, "tools."+name+".network_allow", t.NetworkAllow, Allow); err != nil {
			return nil, err
		}
		if len(rs) > 0 {
			p.tools[name] = rs
		}
	}
	for name, s := range c.Secrets {
		key := "secrets." + name + ".hosts"
		pats, err := config.ParseHostPatterns(key, s.Hosts)
		if err != nil {
			return nil, err
		}
		bs := []binding{} // present and empty: bound to no host
		for _, pat := range pats {
			bs = append(bs, binding{pat: pat, source: key, private: pat.Host != "*"})
		}
		p.secrets[name] = bs
	}
	for name, hosts := range builtinHosts {
		if _, ok := p.secrets[name]; ok {
			continue
		}
		for _, h := range hosts {
			pat, err := config.ParseHostPattern(h)
			if err != nil {
				return nil, fmt.Errorf("built-in hosts of %s: %q %v", name, h, err)
			}
			p.secrets[name] = append(p.secrets[name], binding{pat: pat, source: "built-in " + name})
		}
	}
	return p, nil
}

// Bind returns p with host:port (port 0: any) bound to each of secrets for
// the rest of the session: the answer "for this session" to an ask.
func (p *Policy) Bind(secrets []string, host string, port int) *Policy {
	host = config.NormalizeHost(host)
	q := *p
	q.session = make(map[string][]binding, len(p.session)+len(secrets))
	for k, v := range p.session {
		q.session[k] = v
	}
	// The person saw the host; where it is an address or localhost they
	// saw that too. (A name the config lists may be private as well:
	// decideHolding asks Named.)
	_, literal := parseAddr(host)
	private := literal || isLocalhost(host)
	for _, s := range secrets {
		b := binding{pat: config.HostPattern{Host: host, Port: port}, source: "session " + s, private: private}
		q.session[s] = append(slices.Clone(q.session[s]), b)
	}
	return &q
}

// Hosts is what a secret is bound to, as config.toml would spell it, and
// where the binding comes from ("secrets.NAME.hosts", "built-in NAME", or
// "" for no binding), for `hush sandbox show`.
func (p *Policy) Hosts(secret string) (hosts []string, source string) {
	bs, ok := p.secrets[secret]
	if !ok {
		return nil, ""
	}
	source = "secrets." + secret + ".hosts"
	for _, b := range bs {
		hosts = append(hosts, b.pat.String())
		source = b.source
	}
	return hosts, source
}

// Decide is the verdict for call connecting to host:port, by the name
// alone: it resolves nothing, so a refused name never reaches a DNS
// server. An allowed verdict still needs Addrs on the addresses the name
// resolves to.
func (p *Policy) Decide(call Call, host string, port int) Verdict {
	host = config.NormalizeHost(host)
	hp := hostPort(host, port)
	if p.none[call.Tool] {
		return Verdict{Action: Deny, Rule: "tools." + call.Tool + ".network",
			Reason: fmt.Sprintf("%s has no network (tools.%s.network = \"none\" in config.toml)", call.Tool, call.Tool)}
	}
	// A tool's own lists decide first; [network] where none of them matches.
	r, ok := best(p.tools[call.Tool], host, port)
	if !ok {
		r, ok = best(p.global, host, port)
	}
	if ok && r.action == Deny {
		return Verdict{Action: Deny, Rule: r.name(),
			Reason: fmt.Sprintf("%s is refused by %s in config.toml", hp, r.name())}
	}
	if len(call.Secrets) > 0 {
		return p.decideHolding(call, host, port)
	}
	if ok {
		return Verdict{Action: Allow, Rule: r.name(), Reason: fmt.Sprintf("%s is listed in %s", hp, r.name()), private: r.pat.Host != "*"}
	}
	if ip, literal := parseAddr(host); literal && !Public(ip) || isLocalhost(host) {
		kind := "a loopback name"
		if literal {
			kind = AddressKind(ip)
		}
		return Verdict{Action: Deny, Rule: "default private",
			Reason: fmt.Sprintf("%s is %s, which tools reach only where config.toml lists it: add %q to [network] allow", host, kind, hp)}
	}
	return Verdict{Action: Allow, Rule: "default public", Reason: hp + " is a public host"}
}

// decideHolding decides for a call that holds secrets: the host must be
// bound to at least one of them (docs/network.md says why not to all),
// and a secret with no binding at all asks at its first connection.
func (p *Policy) decideHolding(call Call, host string, port int) Verdict {
	hp := hostPort(host, port)
	held := slices.Compact(slices.Sorted(slices.Values(call.Secrets)))
	names := strings.Join(held, ", ")
	var unbound []string
	for _, s := range held {
		if _, ok := p.secrets[s]; !ok && len(p.session[s]) == 0 {
			unbound = append(unbound, s)
		}
	}
	if len(unbound) > 0 {
		return Verdict{Action: Ask, Rule: "no binding: " + strings.Join(unbound, ","),
			Reason: fmt.Sprintf("%s holds %s, and %s %s not bound to any host yet: to send %s to %s, add [secrets.%s] hosts = [%q] to config.toml",
				call.Tool, names, strings.Join(unbound, ", "), isAre(len(unbound)), them(len(unbound)), hp, unbound[0], hp)}
	}
	for _, s := range held {
		var found binding
		var ok bool
		for _, b := range append(slices.Clone(p.session[s]), p.secrets[s]...) {
			if b.pat.Match(host, port) && (!ok || b.pat.Specificity() > found.pat.Specificity()) {
				found, ok = b, true
			}
		}
		if ok {
			rule := found.source + " " + strconv.Quote(found.pat.String())
			return Verdict{Action: Allow, Rule: rule, Reason: fmt.Sprintf("%s is bound to %s (%s)", s, hp, rule),
				private: found.private || strings.HasPrefix(found.source, "session ") && p.Named(call.Tool, host, port)}
		}
	}
	var bound []string
	for _, s := range held {
		for _, b := range append(slices.Clone(p.session[s]), p.secrets[s]...) {
			if !slices.Contains(bound, b.pat.String()) {
				bound = append(bound, b.pat.String())
			}
		}
	}
	where := "no host"
	if len(bound) > 0 {
		where = strings.Join(bound, ", ")
	}
	return Verdict{Action: Ask, Rule: "not bound: " + strings.Join(held, ","),
		Reason: fmt.Sprintf("%s holds %s, which may be sent only to %s: to allow %s, add %q to hosts under [secrets.%s] in config.toml",
			call.Tool, names, where, hp, hp, held[0])}
}

// Named reports whether the user's config names host:port for tool
// itself — an allow of [network] or the tool's own that is not "*" —
// so that an approval of it may reach what it resolves to, private
// addresses included.
func (p *Policy) Named(tool, host string, port int) bool {
	host = config.NormalizeHost(host)
	r, ok := best(p.tools[tool], host, port)
	if !ok {
		r, ok = best(p.global, host, port)
	}
	return ok && r.action == Allow && r.pat.Host != "*"
}

// Addrs keeps the addresses host may be reached at under v: all of them
// where the rule named the host, the public ones otherwise. With none
// left the verdict becomes a refusal that says what the name resolved to.
func (v Verdict) Addrs(host string, addrs []netip.Addr) ([]netip.Addr, Verdict) {
	if v.private {
		return addrs, v
	}
	var kept []netip.Addr
	var first netip.Addr
	for _, a := range addrs {
		if Public(a) {
			kept = append(kept, a)
		} else if !first.IsValid() {
			first = a
		}
	}
	if len(kept) > 0 || !first.IsValid() {
		return kept, v
	}
	host = config.NormalizeHost(host)
	fix := fmt.Sprintf("add %q to [network] allow in config.toml", host)
	if strings.HasPrefix(v.Rule, "built-in ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(v.Rule, "built-in "), " ")
		fix = fmt.Sprintf("list %q in [secrets.%s] hosts in config.toml", host, name)
	}
	return nil, Verdict{Action: Deny, Rule: v.Rule + " (public addresses only)",
		Reason: fmt.Sprintf("%s resolves to %s, %s, and the rule that allowed it (%s) reaches public addresses only: to reach it, %s", host, first.Unmap(), AddressKind(first), v.Rule, fix)}
}

// best is the most specific rule matching host:port; deny wins a tie.
func best(rules []rule, host string, port int) (rule, bool) {
	var out rule
	var ok bool
	for _, r := range rules {
		if !r.pat.Match(host, port) {
			continue
		}
		s, o := r.pat.Specificity(), out.pat.Specificity()
		if !ok || s > o || s == o && r.action == Deny {
			out, ok = r, true
		}
	}
	return out, ok
}

func parseAddr(host string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(host)
	return ip.Unmap(), err == nil
}

func isLocalhost(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
