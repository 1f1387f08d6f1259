package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools/sandbox"
)

func sandboxShowOpts(a *app, tool string) *sandboxShowOptions {
	return &sandboxShowOptions{Out: a.Stdout, Config: a.loadConfig, HostSandbox: a.HostSandbox, Tool: tool}
}

// TestSandboxShow: docker-bash has no host sandbox to show; bash's hides
// the project's .env; an unknown MCP server is an error.
func TestSandboxShow(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runSandboxShow(sandboxShowOpts(ta.app, "dockerbash")); err == nil || !strings.HasPrefix(err.Error(), "dockerbash runs in a container, not the host sandbox") ||
		!strings.HasSuffix(err.Error(), "its network: none (the default)") {
		t.Errorf("sandbox show dockerbash = %v", err)
	}
	ta.writeConfig(t, "[tools.dockerbash]\nimage = \"busybox\"\nnetwork = \"proxy\"\n")
	if err := runSandboxShow(sandboxShowOpts(ta.again(""), "dockerbash")); err == nil || !strings.Contains(err.Error(), "out only through hush's egress proxy") {
		t.Errorf("sandbox show dockerbash, network = \"proxy\": %v", err)
	}
	ta.writeConfig(t, "")
	if err := os.WriteFile(filepath.Join(ta.project, ".env"), []byte("K=v\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := runSandboxShow(sandboxShowOpts(ta.again(""), "bash")); err != nil {
		t.Fatal(err)
	}
	out := ta.out.String()
	if !strings.HasPrefix(out, "# sandbox for bash: ") || !strings.Contains(out, "# the tool's world, built from this list") ||
		!strings.Contains(out, ".env, .env.*, .envrc (at any depth)  [hidden]\n") {
		t.Errorf("the bash sandbox's world does not hide the project's .env family:\n%s", out)
	}
	if strings.Contains(out, "mount-masks        hush's files") || !strings.Contains(out, "mount-masks        the tool's root is built from an allowlist") {
		t.Errorf("the constructed world is described as masks:\n%s", out)
	}
	if err := runSandboxShow(sandboxShowOpts(ta.again(""), "mcp:nosuch")); err == nil {
		t.Error("sandbox show of an unknown MCP server succeeded")
	}
}

func TestSandboxShowFlags(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var got *sandboxShowOptions
	cmd := under("sandbox", newSandboxShowCmd(ta.app, func(o *sandboxShowOptions) error { got = o; return nil }))
	if err := runCommand(ta.app, cmd, "sandbox", "show", "--tool", "background"); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Tool != "background" {
		t.Fatalf("options = %+v", got)
	}
	if err := runCommand(ta.app, cmd, "sandbox", "show", "extra"); err == nil {
		t.Error("sandbox show took a stray argument")
	}
}

// TestSandboxShowNetwork: the network section says the tool's mode, and
// with the proxy (the default) where each secret may be sent.
func TestSandboxShowNetwork(t *testing.T) {
	t.Parallel()
	proxied := config.Config{Secrets: map[string]config.SecretHosts{"DEPLOY_KEY": {Hosts: []string{"deploy.example.com"}}}}
	var b strings.Builder
	if err := renderNetwork(&b, proxied, "bash", &sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if sandbox.Status().LandlockOnly {
		t.Skip("the kernel refuses network namespaces here: TestSandboxShowNetworkLandlock covers the section")
	}
	for _, want := range []string{"egress proxy at http://127.0.0.1:1023", "a program that ignores them reaches no host at all", "bound  DEPLOY_KEY", "deploy.example.com (secrets.DEPLOY_KEY.hosts)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the network section lacks %q:\n%s", want, out)
		}
	}
	for mode, want := range map[string]string{"none": "network: none", "host": "network: the host's, unfiltered (tools.bash.network = \"host\")"} {
		b.Reset()
		cfg := config.Config{Tools: map[string]config.ToolConfig{"bash": {Network: mode}}}
		if err := renderNetwork(&b, cfg, "bash", &sandbox.Config{}); err != nil || !strings.Contains(b.String(), want) {
			t.Errorf("network = %q: %v\n%s", mode, err, b.String())
		}
	}
	b.Reset()
	if err := renderNetwork(&b, proxied, "bash", nil); err != nil || !strings.Contains(b.String(), "the sandbox is off") {
		t.Errorf("no sandbox: %v\n%s", err, b.String())
	}
}

// TestSandboxShowNetworkLandlock: where the kernel refuses the namespaces
// the section says what the Landlock fallback gives a "proxy" tool (TCP
// only to the call's proxy port, no UDP) and what it cannot.
func TestSandboxShowNetworkLandlock(t *testing.T) {
	t.Parallel()
	proxied := config.Config{Secrets: map[string]config.SecretHosts{"DEPLOY_KEY": {Hosts: []string{"deploy.example.com"}}}}
	st := sandbox.State{LandlockOnly: true}
	var b strings.Builder
	if err := renderNetworkFor(&b, proxied, "bash", &sandbox.Config{}, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TCP only to hush's egress proxy", "a port of the call's own", "UDP (DNS included)", "answers only the call's own processes", "names a port, not an address",
		"a program that ignores them reaches no host at all", "deploy.example.com (secrets.DEPLOY_KEY.hosts)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the Landlock network section lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	cfg := config.Config{Tools: map[string]config.ToolConfig{"bash": {Network: "none"}}}
	if err := renderNetworkFor(&b, cfg, "bash", &sandbox.Config{}, st); err != nil || !strings.Contains(b.String(), "no internet socket at all") {
		t.Errorf("network = none in the Landlock world: %v\n%s", err, b.String())
	}
}
