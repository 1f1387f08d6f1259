package session

import (
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools/sandbox"
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
	if _, err := HostSandbox(bad, masks, nil, "background"); err == nil || err.Error() != `tools.background.network = "bridge": want "proxy" (the default: out only through hush's egress proxy), "host" (the host's network, unfiltered) or "none" (only a loopback interface)` {
		t.Errorf("bad network: %v", err)
	}
	if sb, err := HostSandbox(config.Config{Unsafe: config.Unsafe{NoSandbox: true}}, masks, nil, "bash"); sb != nil || err != nil {
		t.Errorf("[unsafe] no_sandbox: %+v, %v; want none", sb, err)
	}
	if n := SandboxNotice(config.Config{Unsafe: config.Unsafe{NoSandbox: true}}); n != "" {
		t.Errorf("no_sandbox notice = %q; the [unsafe] warning says it", n)
	}
}

func TestHostLimits(t *testing.T) {
	t.Parallel()
	zero, big, neg := 0, 500, -1
	def := sandbox.DefaultLimits("[tools.bash]")
	if def.Processes != 4096 || def.Memory <= 0 {
		t.Fatalf("defaults: %+v; want 4096 processes and half of the memory", def)
	}
	for _, c := range []struct {
		tool    string
		cfg     config.ToolConfig
		procs   int
		mem     int64
		wantErr string
	}{
		{"bash", config.ToolConfig{}, 4096, def.Memory, ""},
		{"mcp", config.ToolConfig{MaxProcesses: &big, MaxMemory: "512MiB"}, 500, 512 << 20, ""},
		{"background", config.ToolConfig{MaxProcesses: &zero, MaxMemory: "off"}, 0, 0, ""},
		{"bash", config.ToolConfig{MaxMemory: "2G"}, 4096, 2 << 30, ""},
		{"bash", config.ToolConfig{MaxMemory: "100%"}, 4096, 2 * def.Memory, ""},
		{"bash", config.ToolConfig{MaxProcesses: &neg}, 0, 0, "tools.bash.max_processes = -1: want a number of processes from 1 to 4194304, or 0 for no limit"},
		{"bash", config.ToolConfig{MaxMemory: "lots"}, 0, 0, `tools.bash.max_memory = "lots": want a size such as "512MiB" or "8GiB", a share such as "50%", or "off"`},
		{"bash", config.ToolConfig{MaxMemory: "1MiB"}, 0, 0, `tools.bash.max_memory = "1MiB": below 16MiB nothing starts; want a size such as "512MiB", or "off"`},
		{"bash", config.ToolConfig{MaxMemory: "150%"}, 0, 0, `tools.bash.max_memory = "150%": want a share from 1% to 100% of memory, a size such as "4GiB", or "off"`},
	} {
		l, err := hostLimits(c.cfg, c.tool)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("%s %+v: error %v; want %s", c.tool, c.cfg, err, c.wantErr)
			}
			continue
		}
		// 100% is twice the default half, give or take a byte of rounding.
		if d := l.Memory - c.mem; err != nil || l.Processes != c.procs || d < -1 || d > 1 || l.Setting != "[tools."+c.tool+"]" {
			t.Errorf("%s %+v: %+v, %v; want %d processes, %d bytes", c.tool, c.cfg, l, err, c.procs, c.mem)
		}
	}
}
