package egress

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/hushcli/hush/config"
)

func testPolicy(t *testing.T, toml string) *Policy {
	t.Helper()
	c, err := config.Parse("config.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const policyTOML = `
[network]
allow = ["127.0.0.1:5432", "*.corp.example", "db.internal"]
deny = ["pastebin.com", "*.ngrok.io", "*.evil.example"]

[tools.bash]
network_allow = ["localhost:3000", "good.evil.example"]
network_deny = ["*.npmjs.org"]

[tools.quiet]
network = "none"

[secrets.DEPLOY_KEY]
hosts = ["deploy.corp.example", "127.0.0.1:9000"]

[secrets.NEVER_SENT]
hosts = []

[secrets.OPENAI_API_KEY]
hosts = ["llm.corp.example"]
`

func TestDecide(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, policyTOML)
	tests := []struct {
		tool    string
		secrets []string
		host    string
		port    int
		action  Action
		rule    string
		reason  string
	}{
		// No secret: public hosts allowed, the machine's own addresses not.
		{"bash", nil, "example.com", 443, Allow, "default public", "example.com:443 is a public host"},
		{"bash", nil, "127.0.0.1", 8000, Deny, "default private",
			`127.0.0.1 is a loopback address, which tools reach only where config.toml lists it: add "127.0.0.1:8000" to [network] allow`},
		{"bash", nil, "0.0.0.0", 8000, Deny, "default private",
			`0.0.0.0 is an unspecified address, which tools reach only where config.toml lists it: add "0.0.0.0:8000" to [network] allow`},
		{"bash", nil, "[::1]", 80, Deny, "default private",
			`::1 is a loopback address, which tools reach only where config.toml lists it: add "[::1]:80" to [network] allow`},
		{"bash", nil, "10.1.2.3", 80, Deny, "default private",
			`10.1.2.3 is a private address, which tools reach only where config.toml lists it: add "10.1.2.3:80" to [network] allow`},
		{"bash", nil, "169.254.169.254", 80, Deny, "default private",
			`169.254.169.254 is a link-local address, which tools reach only where config.toml lists it: add "169.254.169.254:80" to [network] allow`},
		{"bash", nil, "LocalHost.", 3001, Deny, "default private",
			`localhost is a loopback name, which tools reach only where config.toml lists it: add "localhost:3001" to [network] allow`},
		{"bash", nil, "::ffff:127.0.0.1", 80, Deny, "default private",
			`127.0.0.1 is a loopback address, which tools reach only where config.toml lists it: add "127.0.0.1:80" to [network] allow`},
		// [network] and the tool's own lists.
		{"bash", nil, "127.0.0.1", 5432, Allow, `network.allow "127.0.0.1:5432"`, `127.0.0.1:5432 is listed in network.allow "127.0.0.1:5432"`},
		{"bash", nil, "localhost", 3000, Allow, `tools.bash.network_allow "localhost:3000"`, `localhost:3000 is listed in tools.bash.network_allow "localhost:3000"`},
		{"background", nil, "localhost", 3000, Deny, "default private",
			`localhost is a loopback name, which tools reach only where config.toml lists it: add "localhost:3000" to [network] allow`},
		{"bash", nil, "pastebin.com", 443, Deny, `network.deny "pastebin.com"`, `pastebin.com:443 is refused by network.deny "pastebin.com" in config.toml`},
		{"bash", nil, "x.evil.example", 443, Deny, `network.deny "*.evil.example"`, `x.evil.example:443 is refused by network.deny "*.evil.example" in config.toml`},
		{"bash", nil, "good.evil.example", 443, Allow, `tools.bash.network_allow "good.evil.example"`, `good.evil.example:443 is listed in tools.bash.network_allow "good.evil.example"`},
		{"background", nil, "good.evil.example", 443, Deny, `network.deny "*.evil.example"`, `good.evil.example:443 is refused by network.deny "*.evil.example" in config.toml`},
		{"bash", nil, "registry.npmjs.org", 443, Deny, `tools.bash.network_deny "*.npmjs.org"`, `registry.npmjs.org:443 is refused by tools.bash.network_deny "*.npmjs.org" in config.toml`},
		{"background", nil, "registry.npmjs.org", 443, Allow, "default public", "registry.npmjs.org:443 is a public host"},
		{"quiet", nil, "example.com", 443, Deny, "tools.quiet.network", `quiet has no network (tools.quiet.network = "none" in config.toml)`},
		// Holding secrets: only bound hosts; a deny still applies.
		{"bash", []string{"GITHUB_TOKEN"}, "api.github.com", 443, Allow, `built-in GITHUB_TOKEN "api.github.com"`, `GITHUB_TOKEN is bound to api.github.com:443 (built-in GITHUB_TOKEN "api.github.com")`},
		{"bash", []string{"GITHUB_TOKEN"}, "objects.githubusercontent.com", 443, Allow, `built-in GITHUB_TOKEN "*.githubusercontent.com"`, `GITHUB_TOKEN is bound to objects.githubusercontent.com:443 (built-in GITHUB_TOKEN "*.githubusercontent.com")`},
		{"bash", []string{"GITHUB_TOKEN"}, "evil.example", 80, Ask, "not bound: GITHUB_TOKEN",
			`bash holds GITHUB_TOKEN, which may be sent only to github.com, api.github.com, uploads.github.com, codeload.github.com, *.githubusercontent.com, ghcr.io: to allow evil.example:80, add "evil.example:80" to hosts under [secrets.GITHUB_TOKEN] in config.toml`},
		{"bash", []string{"GITHUB_TOKEN"}, "example.com", 443, Ask, "not bound: GITHUB_TOKEN", ""}, // [network]'s default does not widen a secret's hosts
		{"bash", []string{"GITHUB_TOKEN"}, "db.internal", 443, Ask, "not bound: GITHUB_TOKEN", ""}, // nor does [network] allow
		{"bash", []string{"GITHUB_TOKEN"}, "pastebin.com", 443, Deny, `network.deny "pastebin.com"`, ""},
		{"bash", []string{"OPENAI_API_KEY"}, "api.openai.com", 443, Ask, "not bound: OPENAI_API_KEY",
			`bash holds OPENAI_API_KEY, which may be sent only to llm.corp.example: to allow api.openai.com:443, add "api.openai.com:443" to hosts under [secrets.OPENAI_API_KEY] in config.toml`},
		{"bash", []string{"OPENAI_API_KEY"}, "llm.corp.example", 443, Allow, `secrets.OPENAI_API_KEY.hosts "llm.corp.example"`, ""},
		{"bash", []string{"NEVER_SENT"}, "github.com", 443, Ask, "not bound: NEVER_SENT",
			`bash holds NEVER_SENT, which may be sent only to no host: to allow github.com:443, add "github.com:443" to hosts under [secrets.NEVER_SENT] in config.toml`},
		{"bash", []string{"DEPLOY_KEY"}, "127.0.0.1", 9000, Allow, `secrets.DEPLOY_KEY.hosts "127.0.0.1:9000"`, ""},
		{"bash", []string{"DEPLOY_KEY"}, "127.0.0.1", 9001, Ask, "not bound: DEPLOY_KEY", ""},
		// Several secrets share their hosts (at least one must be bound).
		{"bash", []string{"NPM_TOKEN", "GITHUB_TOKEN"}, "registry.npmjs.org", 443, Deny, `tools.bash.network_deny "*.npmjs.org"`, ""},
		{"background", []string{"NPM_TOKEN", "GITHUB_TOKEN"}, "registry.npmjs.org", 443, Allow, `built-in NPM_TOKEN "registry.npmjs.org"`, ""},
		{"background", []string{"NPM_TOKEN", "GITHUB_TOKEN"}, "github.com", 443, Allow, `built-in GITHUB_TOKEN "github.com"`, ""},
		// A secret with no binding at all asks at every host until bound.
		{"bash", []string{"GITHUB_TOKEN", "MY_API_KEY"}, "github.com", 443, Ask, "no binding: MY_API_KEY",
			`bash holds GITHUB_TOKEN, MY_API_KEY, and MY_API_KEY is not bound to any host yet: to send it to github.com:443, add [secrets.MY_API_KEY] hosts = ["github.com:443"] to config.toml`},
	}
	for _, tt := range tests {
		v := p.Decide(Call{Tool: tt.tool, Secrets: tt.secrets}, tt.host, tt.port)
		if v.Action != tt.action || v.Rule != tt.rule || (tt.reason != "" && v.Reason != tt.reason) {
			t.Errorf("Decide(%s %v, %s:%d) = %v %q\n  %s\nwant %v %q\n  %s", tt.tool, tt.secrets, tt.host, tt.port, v.Action, v.Rule, v.Reason, tt.action, tt.rule, tt.reason)
		}
	}
}

func TestDecideMostSpecificWins(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, `
[network]
deny = ["*", "github.com:22"]
allow = ["github.com", "*.npmjs.org", "registry.npmjs.org:443"]
`)
	tests := []struct {
		host   string
		port   int
		action Action
	}{
		{"github.com", 443, Allow},
		{"github.com", 22, Deny}, // with a port beats without
		{"registry.npmjs.org", 443, Allow},
		{"example.com", 443, Deny}, // deny = ["*"]: only what is listed
		{"api.github.com", 443, Deny},
	}
	for _, tt := range tests {
		if v := p.Decide(Call{Tool: "bash"}, tt.host, tt.port); v.Action != tt.action {
			t.Errorf("Decide(%s:%d) = %v (%s), want %v", tt.host, tt.port, v.Action, v.Rule, tt.action)
		}
	}
	// On a tie deny wins.
	p = testPolicy(t, "[network]\nallow = [\"x.example\"]\ndeny = [\"x.example\"]\n")
	if v := p.Decide(Call{Tool: "bash"}, "x.example", 443); v.Action != Deny {
		t.Errorf("allow and deny of one host: %v, want deny", v.Action)
	}
}

func TestVerdictAddrs(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, policyTOML)
	lo, pub, ten := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("140.82.112.3"), netip.MustParseAddr("10.0.0.7")
	// The default reaches only public addresses: a public name that
	// resolves to loopback is refused (DNS rebinding), and of a mixed
	// answer only the public addresses are kept.
	v := p.Decide(Call{Tool: "bash"}, "rebind.example", 80)
	if kept, got := v.Addrs("rebind.example", []netip.Addr{lo}); got.Action != Deny || kept != nil ||
		got.Reason != `rebind.example resolves to 127.0.0.1, a loopback address, and the rule that allowed it (default public) reaches public addresses only: to reach it, add "rebind.example" to [network] allow in config.toml` {
		t.Errorf("default, loopback answer: %v %v %q", kept, got.Action, got.Reason)
	}
	if kept, got := v.Addrs("rebind.example", []netip.Addr{lo, pub, ten}); got.Action != Allow || !slices.Equal(kept, []netip.Addr{pub}) {
		t.Errorf("default, mixed answer: kept %v, %v", kept, got.Action)
	}
	// A built-in binding is public only too.
	v = p.Decide(Call{Tool: "bash", Secrets: []string{"GITHUB_TOKEN"}}, "github.com", 443)
	if _, got := v.Addrs("github.com", []netip.Addr{lo}); got.Action != Deny ||
		got.Reason != `github.com resolves to 127.0.0.1, a loopback address, and the rule that allowed it (built-in GITHUB_TOKEN "github.com") reaches public addresses only: to reach it, list "github.com" in [secrets.GITHUB_TOKEN] hosts in config.toml` {
		t.Errorf("built-in, loopback answer: %v %q", got.Action, got.Reason)
	}
	// A host the user listed may be private.
	for _, c := range []struct {
		call Call
		host string
	}{
		{Call{Tool: "bash"}, "db.internal"},
		{Call{Tool: "bash"}, "x.corp.example"},
		{Call{Tool: "bash", Secrets: []string{"DEPLOY_KEY"}}, "deploy.corp.example"},
	} {
		v := p.Decide(c.call, c.host, 443)
		if kept, got := v.Addrs(c.host, []netip.Addr{ten}); got.Action != Allow || !slices.Equal(kept, []netip.Addr{ten}) {
			t.Errorf("%s (%s): kept %v, %v %q", c.host, v.Rule, kept, got.Action, got.Reason)
		}
	}
	// allow = ["*"] is not a listing of every private address.
	p = testPolicy(t, "[network]\nallow = [\"*\"]\n")
	if _, got := p.Decide(Call{Tool: "bash"}, "rebind.example", 80).Addrs("rebind.example", []netip.Addr{lo}); got.Action != Deny {
		t.Errorf(`allow = ["*"] reached a loopback answer: %v`, got.Action)
	}
}

func TestBindForTheSession(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, "")
	call := Call{Tool: "bash", Secrets: []string{"GITHUB_TOKEN", "MY_KEY"}}
	if v := p.Decide(call, "api.example.com", 443); v.Action != Ask {
		t.Fatalf("before Bind: %v, want ask", v.Action)
	}
	q := p.Bind(call.Secrets, "API.example.com.", 443)
	if v := q.Decide(call, "api.example.com", 443); v.Action != Allow || v.Rule != `session GITHUB_TOKEN "api.example.com:443"` {
		t.Errorf("after Bind: %v %q", v.Action, v.Rule)
	}
	if v := q.Decide(Call{Tool: "bash", Secrets: []string{"MY_KEY"}}, "api.example.com", 443); v.Action != Allow {
		t.Errorf("after Bind, MY_KEY alone: %v %q", v.Action, v.Reason)
	}
	if v := q.Decide(call, "api.example.com", 80); v.Action != Ask {
		t.Errorf("after Bind, another port: %v, want ask", v.Action)
	}
	if v := p.Decide(call, "api.example.com", 443); v.Action != Ask {
		t.Errorf("Bind changed the policy it was called on: %v", v.Action)
	}
	// A name the person approved is public only; an address they saw is not.
	if _, v := q.Decide(call, "api.example.com", 443).Addrs("api.example.com", []netip.Addr{netip.MustParseAddr("127.0.0.1")}); v.Action != Deny {
		t.Errorf("a session-bound name reached loopback: %v", v.Action)
	}
	r := p.Bind([]string{"MY_KEY"}, "127.0.0.1", 8080)
	if _, v := r.Decide(Call{Tool: "bash", Secrets: []string{"MY_KEY"}}, "127.0.0.1", 8080).Addrs("127.0.0.1", []netip.Addr{netip.MustParseAddr("127.0.0.1")}); v.Action != Allow {
		t.Errorf("a session-bound address was refused: %v %q", v.Action, v.Reason)
	}
}

func TestHosts(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, policyTOML)
	for _, tt := range []struct {
		name   string
		hosts  []string
		source string
	}{
		{"GH_TOKEN", append([]string(nil), builtinHosts["GITHUB_TOKEN"]...), "built-in GH_TOKEN"},
		{"OPENAI_API_KEY", []string{"llm.corp.example"}, "secrets.OPENAI_API_KEY.hosts"},
		{"NEVER_SENT", nil, "secrets.NEVER_SENT.hosts"},
		{"MY_KEY", nil, ""},
	} {
		hosts, source := p.Hosts(tt.name)
		if !slices.Equal(hosts, tt.hosts) || source != tt.source {
			t.Errorf("Hosts(%s) = %q, %q; want %q, %q", tt.name, hosts, source, tt.hosts, tt.source)
		}
	}
}

func TestAddressKind(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1": "a loopback address", "127.9.9.9": "a loopback address", "::1": "a loopback address",
		"0.0.0.0": "an unspecified address", "::": "an unspecified address", "0.1.2.3": "an unspecified address",
		"10.0.0.1": "a private address", "172.16.0.1": "a private address", "192.168.1.1": "a private address",
		"fc00::1": "a private address", "fd12::1": "a private address",
		"169.254.169.254": "a link-local address", "fe80::1": "a link-local address",
		"100.100.100.100": "a carrier-grade NAT address (Tailscale and the like)",
		"224.0.0.1":       "a multicast address", "255.255.255.255": "a reserved address",
		"64:ff9b::a00:1": "a NAT64 address", "::ffff:192.168.0.1": "a private address",
		"140.82.112.3": "", "2606:4700::1111": "", "8.8.8.8": "",
	} {
		if got := AddressKind(netip.MustParseAddr(addr)); got != want {
			t.Errorf("AddressKind(%s) = %q, want %q", addr, got, want)
		}
	}
}
