package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

// writeConfig writes ta's config.toml.
func (ta *testApp) writeConfig(t *testing.T, body string) {
	t.Helper()
	if err := os.MkdirAll(ta.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ta.configDir, config.FileName), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// envOpts are `hush env`'s options on a's factory.
func envOpts(a *app, tool string, dropped bool) *envOptions {
	return &envOptions{Out: a.Stdout, Ambient: a.Ambient, Config: a.loadConfig, Vault: a.Vault, Tool: tool, Dropped: dropped}
}

// TestEnvCommand: `hush env` shows a plain variable the policy passes and
// masks a secret's value, which stays off the output; an unknown MCP
// server is an error.
func TestEnvCommand(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	ta.Ambient["LANG"] = "C.UTF-8"
	ta.Ambient["DEPLOY_TOKEN"] = "tok-0a1b2c3d4e5f6a7b8c9d"
	ta.writeConfig(t, "[tools.bash]\ninclude = [\"LANG\", \"DEPLOY_TOKEN\"]\n")
	if err := runEnv(envOpts(ta.app, "bash", true)); err != nil {
		t.Fatalf("%v\n%s", err, ta.errOut)
	}
	out := ta.out.String()
	if !strings.Contains(out, "LANG=C.UTF-8") || !strings.Contains(out, "DEPLOY_TOKEN") || strings.Contains(out, "tok-0a1b2c3d4e5f6a7b8c9d") {
		t.Errorf("hush env:\n%s", out)
	}
	if err := runEnv(envOpts(ta.again(""), "mcp:nosuch", false)); err == nil {
		t.Error("hush env --tool mcp:nosuch succeeded")
	}
}

// TestEnvCommandFlags: the command hands its flags to runF as options.
func TestEnvCommandFlags(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var got *envOptions
	cmd := newEnvCmd(ta.app, func(o *envOptions) error { got = o; return nil })
	if err := runCommand(ta.app, cmd, "env", "--tool", "mcp:gh", "--dropped"); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Tool != "mcp:gh" || !got.Dropped || got.Out != ta.out {
		t.Fatalf("options = %+v", got)
	}
}
