package tools

import (
	"bytes"
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvShowRender: plain values are shown; a secret, a credential-named
// variable and a credential-looking value never are; with Dropped, what was
// kept out says why.
func TestEnvShowRender(t *testing.T) {
	t.Parallel()
	const secret = "envshow-canary-77a1"
	ambient := map[string]string{"PATH": "/bin", "HOME": "/h", "GITHUB_TOKEN": "ghp_x", "LD_PRELOAD": "/evil.so", "SAME": secret, "OTHER": "o"}
	s := EnvShow{Tool: "bash", Ambient: ambient, Policy: Policy{Set: map[string]string{"API": "${API_KEY}", "DB": "postgres://u:pw@h/db"}},
		Secrets: NewSecretSet(map[string]string{"API_KEY": secret}), Dropped: true}
	var out bytes.Buffer
	if err := s.Render(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"# environment for tool bash (", "PATH=/bin\n", "API=<granted at run time: vault.read:API_KEY>\n", "DB=<masked>\n",
		"#   GITHUB_TOKEN: credential-named; grant it as a secret instead\n", "#   LD_PRELOAD: loader injection variable\n",
		"#   SAME: value equals the value of a secret\n", "#   and 1 other variable(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, secret) || strings.Contains(got, "ghp_x") || strings.Contains(got, "pw@") {
		t.Errorf("a secret value is shown:\n%s", got)
	}
}

func TestRenderSandbox(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := sandbox.Render(&out, "bash", nil, sandbox.State{}); err != nil || out.String() != "# sandbox for bash: OFF ([unsafe] no_sandbox = true in config.toml)\n" {
		t.Errorf("no sandbox: %q, %v", out.String(), err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(home, "hush")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	masks, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: home, ConfigDir: filepath.Join(home, "c"), DataDir: filepath.Join(home, "d"), Project: t.TempDir(),
		Hide: []string{"~/.ssh"}, Executable: exe})
	if err != nil {
		t.Fatal(err)
	}
	st := sandbox.State{Namespaces: false, Reason: "user namespaces are off", Protections: []sandbox.Protection{{Name: sandbox.ProtectNetwork, On: false, Why: "w"}}}
	out.Reset()
	if err := sandbox.Render(&out, "bash", &sandbox.Config{Masks: masks, Required: true}, st); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"# sandbox for bash: OFF: user namespaces are off; [sandbox] required = true, so it refuses to run\n",
		"OFF  " + sandbox.ProtectNetwork, "# NOT hidden now: ", "dir   " + filepath.Join(home, ".ssh") + "\n",
		"# NOT read-only now: what the sandbox makes read-only where the kernel allows its namespaces (1)\nfile  " + exe + "\n      " + sandbox.ReasonHushExe + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// With the namespaces: read-only, and ~/.ssh (hidden whole by hide) not listed twice.
	out.Reset()
	if err := sandbox.Render(&out, "bash", &sandbox.Config{Masks: masks}, sandbox.State{Namespaces: true}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "# read-only: readable, not writable, not replaceable (1)\nfile  "+exe+"\n") || strings.Contains(got, sandbox.ReasonSSHLogin) {
		t.Errorf("with the namespaces:\n%s", got)
	}
}
