package egress

import (
	"slices"
	"testing"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, policyTOML)
	got := p.Describe("bash", []string{"GITHUB_TOKEN", "MY_KEY"})
	want := []Entry{
		{"allow", "localhost:3000", "tools.bash.network_allow; reached even where it resolves to a loopback or private address"},
		{"allow", "good.evil.example", "tools.bash.network_allow; reached even where it resolves to a loopback or private address"},
		{"deny", "*.npmjs.org", "tools.bash.network_deny"},
		{"allow", "127.0.0.1:5432", "network.allow; reached even where it resolves to a loopback or private address"},
		{"deny", "pastebin.com", "network.deny"},
		{"allow", "db.internal", "network.allow; reached even where it resolves to a loopback or private address"},
		{"deny", "*.ngrok.io", "network.deny"},
		{"deny", "*.evil.example", "network.deny"},
		{"allow", "*.corp.example", "network.allow; reached even where it resolves to a loopback or private address"},
		{"allow", "*", "a call holding no secret: every public host (default)"},
		{"deny", "loopback, private, link-local", "a call holding no secret: this machine and its network, unless listed above (default); checked on the address a name resolves to"},
		{"bound", "DEPLOY_KEY", "deploy.corp.example, 127.0.0.1:9000 (secrets.DEPLOY_KEY.hosts)"},
		{"bound", "GITHUB_TOKEN", "github.com, api.github.com, uploads.github.com, codeload.github.com, *.githubusercontent.com, ghcr.io (built in for this name, public addresses only; [secrets.GITHUB_TOKEN] hosts replaces it)"},
		{"ask", "MY_KEY", "bound to no host yet: a call holding it asks (chat) or is refused (run) at its first connection; add [secrets.MY_KEY] hosts = [\"HOST\"]"},
		{"bound", "NEVER_SENT", "to no host (secrets.NEVER_SENT.hosts = [])"},
		{"bound", "OPENAI_API_KEY", "llm.corp.example (secrets.OPENAI_API_KEY.hosts)"},
		{"ask", "other hosts", "a call holding secrets reaches only the hosts bound to at least one of them; [network] allow does not widen that"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Describe =\n%v\nwant\n%v", got, want)
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Errorf("first difference at %d", i)
				break
			}
		}
	}
	if got := p.Describe("quiet", nil); len(got) != 1 || got[0].Action != "deny" {
		t.Errorf("Describe(quiet) = %v", got)
	}
}
