package session

import (
	"testing"

	"github.com/hushcli/hush/config"
)

func TestHostSandbox(t *testing.T) {
	t.Parallel()
	masks, err := MaskSet(config.Config{}, config.Dirs{Config: t.TempDir(), Data: t.TempDir()}, map[string]string{"HOME": t.TempDir()}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	off := config.Config{Tools: map[string]config.ToolConfig{"bash": {Network: "none"}}, Sandbox: config.SandboxConfig{Required: true}}
	sb, err := HostSandbox(off, masks, nil, "bash")
	if err != nil || sb == nil || !sb.NoNetwork || !sb.Required || sb.Masks != masks {
		t.Errorf("bash with network = none: %+v, %v", sb, err)
	}
	if sb, err := HostSandbox(off, masks, nil, "mcp"); err != nil || sb == nil || sb.NoNetwork {
		t.Errorf("mcp keeps the network (its setting is bash's): %+v, %v", sb, err)
	}
	bad := config.Config{Tools: map[string]config.ToolConfig{"background": {Network: "bridge"}}}
	if _, err := HostSandbox(bad, masks, nil, "background"); err == nil || err.Error() != `tools.background.network = "bridge": want "host" (the default) or "none" (only a loopback interface)` {
		t.Errorf("bad network: %v", err)
	}
	if sb, err := HostSandbox(config.Config{Unsafe: config.Unsafe{NoSandbox: true}}, masks, nil, "bash"); sb != nil || err != nil {
		t.Errorf("[unsafe] no_sandbox: %+v, %v; want none", sb, err)
	}
	if n := SandboxNotice(config.Config{Unsafe: config.Unsafe{NoSandbox: true}}); n != "" {
		t.Errorf("no_sandbox notice = %q; the [unsafe] warning says it", n)
	}
}
