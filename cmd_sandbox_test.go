package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sandboxShowOpts(a *app, tool string) *sandboxShowOptions {
	return &sandboxShowOptions{Out: a.Stdout, Config: a.loadConfig, HostSandbox: a.HostSandbox, Tool: tool}
}

// TestSandboxShow: docker-bash has no host sandbox to show; bash's hides
// the project's .env; an unknown MCP server is an error.
func TestSandboxShow(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runSandboxShow(sandboxShowOpts(ta.app, "dockerbash")); err == nil || !strings.HasPrefix(err.Error(), "dockerbash runs in a container, not the host sandbox") {
		t.Errorf("sandbox show dockerbash = %v", err)
	}
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
