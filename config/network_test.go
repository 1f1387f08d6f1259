package config_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

func TestParseHostPattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, host string
		port     int
		err      string
	}{
		{in: "github.com", host: "github.com"},
		{in: "GitHub.COM.", host: "github.com"},
		{in: "*.npmjs.org", host: "*.npmjs.org"},
		{in: "127.0.0.1:5432", host: "127.0.0.1", port: 5432},
		{in: "github.com:443", host: "github.com", port: 443},
		{in: "::1", host: "::1"},
		{in: "[::1]:8080", host: "::1", port: 8080},
		{in: "[::1]", host: "::1"},
		{in: "::ffff:10.0.0.1", host: "10.0.0.1"},
		{in: "*", host: "*"},
		{in: "*:22", host: "*", port: 22},
		{in: "", err: "is empty"},
		{in: " github.com", err: "holds spaces"},
		{in: "https://github.com", err: "has a scheme: write only the host, with an optional port (\"github.com\", \"github.com:443\")"},
		{in: "github.com/org", err: "is not a host: write only the host, with an optional port (no path, no user)"},
		{in: "10.0.0.0/8", err: "is an address range; list the addresses (\"10.0.0.5\") or the names"},
		{in: "github.com:0", err: "has a port that is not a number from 1 to 65535"},
		{in: "github.com:https", err: "has a port that is not a number from 1 to 65535"},
		{in: "github.com:70000", err: "has a port that is not a number from 1 to 65535"},
		{in: "::1:80x", err: "is an IPv6 address with a port: write it as \"[::1]:8080\""},
		{in: "[github.com]:80", err: "has brackets around something that is not an IPv6 address"},
		{in: "[::1", err: "has a [ without its ]"},
		{in: "git*.com", err: "has a * that is not the whole first label (\"*.example.com\")"},
		{in: "*.*.com", err: "has a * that is not the whole first label (\"*.example.com\")"},
		{in: "a..b", err: "has an empty or over-long label (two dots in a row, or a leading dot)"},
		{in: "exa$mple.com", err: "has a character a host name cannot hold (\"$\")"},
		{in: "fe80::1%eth0", err: "has an IPv6 zone, which the proxy does not route"},
	}
	for _, tt := range tests {
		p, err := config.ParseHostPattern(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseHostPattern(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || p.Host != tt.host || p.Port != tt.port {
			t.Errorf("ParseHostPattern(%q) = %+v, %v; want host %q port %d", tt.in, p, err, tt.host, tt.port)
		}
		if again, err := config.ParseHostPattern(p.String()); err != nil || again != p {
			t.Errorf("ParseHostPattern(%q.String() = %q) = %+v, %v: does not round-trip", tt.in, p.String(), again, err)
		}
	}
}

func TestHostPatternMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, host string
		port          int
		want          bool
	}{
		{"github.com", "github.com", 443, true},
		{"github.com", "api.github.com", 443, false},
		{"github.com", "evilgithub.com", 443, false},
		{"*.npmjs.org", "registry.npmjs.org", 443, true},
		{"*.npmjs.org", "a.b.npmjs.org", 443, true},
		{"*.npmjs.org", "npmjs.org", 443, false},
		{"*.npmjs.org", "evilnpmjs.org", 443, false},
		{"github.com:443", "github.com", 22, false},
		{"github.com:443", "github.com", 443, true},
		{"127.0.0.1:5432", "127.0.0.1", 5432, true},
		{"127.0.0.1:5432", "127.0.0.1", 5433, false},
		{"*", "anything.example", 1, true},
		{"*", "127.0.0.1", 80, true},
		{"*.0.0.1", "127.0.0.1", 80, false}, // a wildcard never matches an address
		{"::1", "::1", 80, true},
	}
	for _, tt := range tests {
		p, err := config.ParseHostPattern(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(config.NormalizeHost(tt.host), tt.port); got != tt.want {
			t.Errorf("%q.Match(%q, %d) = %v, want %v", tt.pattern, tt.host, tt.port, got, tt.want)
		}
	}
	// An exact host beats a wildcard, a longer suffix a shorter one, a port none.
	order := []string{"*", "*:443", "*.org", "*.npmjs.org", "registry.npmjs.org", "registry.npmjs.org:443"}
	for i := 1; i < len(order); i++ {
		a, _ := config.ParseHostPattern(order[i-1])
		b, _ := config.ParseHostPattern(order[i])
		if a.Specificity() >= b.Specificity() {
			t.Errorf("%q (%d) is not less specific than %q (%d)", order[i-1], a.Specificity(), order[i], b.Specificity())
		}
	}
}

func TestLoadNetwork(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), config.FileName)
	c, err := config.Parse(path, []byte(`
[network]
allow = ["127.0.0.1:5432", "*.corp.example"]
deny = ["pastebin.com"]

[tools.bash]
network_allow = ["localhost:3000"]
network_deny = ["*.npmjs.org"]

[secrets.GITHUB_TOKEN]
hosts = ["github.com", "api.github.com"]

[secrets.LOCAL_ONLY]
hosts = []
`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Network.Allow, []string{"127.0.0.1:5432", "*.corp.example"}) || !slices.Equal(c.Network.Deny, []string{"pastebin.com"}) {
		t.Errorf("network = %+v", c.Network)
	}
	if b := c.Tools["bash"]; !slices.Equal(b.NetworkAllow, []string{"localhost:3000"}) || !slices.Equal(b.NetworkDeny, []string{"*.npmjs.org"}) {
		t.Errorf("tools.bash = %+v", b)
	}
	if got := c.Secrets["GITHUB_TOKEN"].Hosts; !slices.Equal(got, []string{"github.com", "api.github.com"}) {
		t.Errorf("secrets.GITHUB_TOKEN.hosts = %q", got)
	}
	if s, ok := c.Secrets["LOCAL_ONLY"]; !ok || len(s.Hosts) != 0 {
		t.Errorf("secrets.LOCAL_ONLY = %+v, %v; want present with no hosts", s, ok)
	}
}

func TestLoadNetworkErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ content, want string }{
		{"[network]\nallow = [\"https://github.com\"]\n",
			`network.allow[0] "https://github.com" has a scheme: write only the host, with an optional port ("github.com", "github.com:443")`},
		{"[network]\ndeny = [\"ok.com\", \"\"]\n", `network.deny[1] "" is empty`},
		{"[network]\nallowed = [\"github.com\"]\n", "unknown key network.allowed"},
		{"[tools.bash]\nnetwork_allow = [\"github.com/x\"]\n",
			`tools.bash.network_allow[0] "github.com/x" is not a host: write only the host, with an optional port (no path, no user)`},
		{"[tools.http]\nnetwork_allow = [\"github.com\"]\n",
			"tools.http: network_allow and network_deny are for host tools; the http tool runs inside hush and has allow_private"},
		{"[tools.bash]\nnetwork = \"none\"\nnetwork_deny = [\"github.com\"]\n",
			`tools.bash: network = "none" leaves no network for network_allow or network_deny to open or close; remove one`},
		{"[secrets.GITHUB_TOKEN]\nhosts = [\"github.com:99999\"]\n",
			`secrets.GITHUB_TOKEN.hosts[0] "github.com:99999" has a port that is not a number from 1 to 65535`},
		{"[secrets.GITHUB_TOKEN]\n",
			`secrets.GITHUB_TOKEN has no hosts: list where the secret may be sent (hosts = ["api.example.com"]), or hosts = [] for nowhere`},
		{"[secrets.\"MY-KEY\"]\nhosts = [\"x.com\"]\n", `secrets."MY-KEY": not a secret name (letters, digits and _, not starting with a digit)`},
		{"[secrets.GITHUB_TOKEN]\nhost = [\"github.com\"]\n", "unknown key secrets.GITHUB_TOKEN.host"},
		{"[Network]\nallow = [\"github.com\"]\n", "Network is not network"},
	}
	for _, tt := range tests {
		_, err := config.Parse("config.toml", []byte(tt.content))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.content, err, tt.want)
		}
	}
}

func TestMergeProjectNetwork(t *testing.T) {
	t.Parallel()
	user := config.Config{
		Network: config.Network{Allow: []string{"mine.example"}, Deny: []string{"bad.example"}},
		Secrets: map[string]config.SecretHosts{"GITHUB_TOKEN": {Hosts: []string{"github.com"}}},
	}
	proj := config.Config{
		Network: config.Network{Allow: []string{"*"}, Deny: []string{"pastebin.com"}},
		Secrets: map[string]config.SecretHosts{"GITHUB_TOKEN": {Hosts: []string{"evil.example"}}},
	}
	for _, trusted := range []bool{false, true} {
		got, notes := config.MergeProject(user, proj, trusted)
		if want := []string{"bad.example", "pastebin.com"}; !slices.Equal(got.Network.Deny, want) {
			t.Errorf("trusted=%v: deny %q, want %q (a project's deny always applies)", trusted, got.Network.Deny, want)
		}
		wantAllow := []string{"mine.example"}
		if trusted {
			wantAllow = append(wantAllow, "*")
		}
		if !slices.Equal(got.Network.Allow, wantAllow) {
			t.Errorf("trusted=%v: allow %q, want %q", trusted, got.Network.Allow, wantAllow)
		}
		if h := got.Secrets["GITHUB_TOKEN"].Hosts; !slices.Equal(h, []string{"github.com"}) {
			t.Errorf("trusted=%v: GITHUB_TOKEN hosts %q: a project chose where a secret goes", trusted, h)
		}
		all := strings.Join(notes, "; ")
		if !strings.Contains(all, "its [secrets] are ignored (a project does not choose where your secrets may be sent)") {
			t.Errorf("trusted=%v: notes %q do not say [secrets] was ignored", trusted, all)
		}
		if !trusted && !strings.Contains(all, "its [network] allow") {
			t.Errorf("untrusted: notes %q do not say [network] allow waits for trust", all)
		}
	}
	if len(user.Network.Deny) != 1 {
		t.Errorf("MergeProject changed the user's deny list: %q", user.Network.Deny)
	}
}

func TestDescribeProjectNamesNetworkAllow(t *testing.T) {
	t.Parallel()
	got := strings.Join(config.DescribeProject(config.Config{
		Network: config.Network{Allow: []string{"127.0.0.1:8888"}},
		Tools:   map[string]config.ToolConfig{"bash": {NetworkAllow: []string{"localhost:3000"}}},
	}, nil), "\n")
	for _, want := range []string{
		"settings for the bash tool, letting it reach localhost:3000",
		"host tools may reach 127.0.0.1:8888 (loopback and private addresses included where listed)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("DescribeProject = %q, want a line %q", got, want)
		}
	}
}
