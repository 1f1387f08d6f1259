package session

import (
	"fmt"
	"os"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/background"
	"github.com/hushcli/hush/toolset/bash"
)

// HostSandbox is the sandbox of a host tool ("bash", "background",
// "mcp:NAME") in a session, from [sandbox] and the tool's network
// setting; nil when [unsafe] no_sandbox turns it off.
func HostSandbox(cfg config.Config, masks *sandbox.MaskSet, policy *sandbox.Policy, tool string) (*sandbox.Config, error) {
	if cfg.Unsafe.NoSandbox {
		return nil, nil
	}
	var err error
	sb := &sandbox.Config{Masks: masks, Policy: policy, Constructed: cfg.Sandbox.ConstructedWorld() && policy != nil, Required: cfg.Sandbox.Required,
		EnvLayer: tool == background.Name || tool == "mcp"}
	if tool == bash.Name || tool == background.Name || tool == "mcp" {
		// "proxy" (the default) is per call: a call's spawn spec asks for
		// the proxy's network (tools.Spec.Egress, network.go).
		mode, err := NetworkMode(cfg, tool)
		if err != nil {
			return nil, err
		}
		sb.NoNetwork = mode == NetworkNone
	}
	if sb.Limits, err = hostLimits(cfg.Tools[tool], tool); err != nil {
		return nil, err
	}
	return sb, nil
}

// hostLimits are a host tool's limits per call from its [tools.NAME]
// section (tool "mcp" for every MCP server): max_processes and
// max_memory, each defaulting to sandbox.DefaultLimits.
func hostLimits(t config.ToolConfig, tool string) (sandbox.Limits, error) {
	l := sandbox.DefaultLimits("[tools." + tool + "]")
	if p := t.MaxProcesses; p != nil {
		if *p < 0 || *p > 1<<22 {
			return l, fmt.Errorf("tools.%s.max_processes = %d: want a number of processes from 1 to 4194304, or 0 for no limit", tool, *p)
		}
		l.Processes = *p
	}
	if t.MaxMemory != "" {
		m, err := sandbox.ParseMemory(t.MaxMemory)
		if err != nil {
			return l, fmt.Errorf("tools.%s.max_memory = %w", tool, err)
		}
		l.Memory = m
	}
	return l, nil
}

// MaskSet is a session's one mask list (sandbox.MaskSet): what the sandbox
// hides from host tools and what the file tools refuse, for the project
// at dir.
func MaskSet(cfg config.Config, dirs config.Dirs, ambient map[string]string, dir string) (*sandbox.MaskSet, error) {
	var other []string
	if def, err := config.ResolveDirs(map[string]string{"HOME": ambient["HOME"],
		"XDG_CONFIG_HOME": ambient["XDG_CONFIG_HOME"], "XDG_DATA_HOME": ambient["XDG_DATA_HOME"]}); err == nil {
		for _, d := range []string{def.Config, def.Data} {
			if d != dirs.Config && d != dirs.Data {
				other = append(other, d)
			}
		}
	}
	// hush's own binary is read-only to tools: one that rewrote it would
	// be the user's next hush. (Not found: nothing to protect there.)
	exe, _ := os.Executable()
	masks, err := sandbox.NewMaskSet(sandbox.MaskOptions{
		Executable: exe, PathEnv: ambient["PATH"], Home: ambient["HOME"], ConfigDir: dirs.Config, DataDir: dirs.Data, OtherHushDirs: other,
		RuntimeDir: ambient["XDG_RUNTIME_DIR"], BusAddress: ambient["DBUS_SESSION_BUS_ADDRESS"],
		DockerHost: ambient["DOCKER_HOST"], SSHAuthSock: ambient["SSH_AUTH_SOCK"], GnuPGHome: ambient["GNUPGHOME"], Project: dir,
		Tmux: ambient["TMUX"], TmuxTmpDir: ambient["TMUX_TMPDIR"], ScreenDir: ambient["SCREENDIR"],
		Docker: cfg.Sandbox.Docker, Allow: cfg.Sandbox.Allow, Hide: cfg.Sandbox.Hide,
	})
	if err != nil {
		return nil, fmt.Errorf("config.toml: %w", err)
	}
	return masks, nil
}

// World is a session's world for its host tools (sandbox.Policy), for
// the project at dir, with tmp (sandbox.SessionTmp) as its /tmp: hush's
// own dirs, and those of every other profile at their default places, are
// never in it.
func World(cfg config.Config, dirs config.Dirs, ambient map[string]string, dir, tmp string) (*sandbox.Policy, error) {
	hushDirs := []string{dirs.Config, dirs.Data}
	if def, err := config.ResolveDirs(map[string]string{"HOME": ambient["HOME"],
		"XDG_CONFIG_HOME": ambient["XDG_CONFIG_HOME"], "XDG_DATA_HOME": ambient["XDG_DATA_HOME"]}); err == nil {
		hushDirs = append(hushDirs, def.Config, def.Data)
	}
	exe, _ := os.Executable()
	p, err := sandbox.NewPolicy(sandbox.PolicyOptions{
		Dir: dir, Executable: exe, Tmp: tmp, Home: ambient["HOME"], PathEnv: ambient["PATH"], HushDirs: hushDirs,
		SSHAuthSock: ambient["SSH_AUTH_SOCK"], GnuPGHome: ambient["GNUPGHOME"], RuntimeDir: ambient["XDG_RUNTIME_DIR"],
		DockerHost: ambient["DOCKER_HOST"], Docker: cfg.Sandbox.Docker, Allow: cfg.Sandbox.Allow, Hide: cfg.Sandbox.Hide,
	})
	if err != nil {
		return nil, fmt.Errorf("config.toml: %w", err)
	}
	return p, nil
}

// SandboxNotice is the one sentence a session prints at start when host
// tools will not get the sandbox, or "".
func SandboxNotice(cfg config.Config) string {
	if cfg.Unsafe.NoSandbox {
		return "" // the [unsafe] warning has said so
	}
	st := sandbox.Status()
	switch {
	case st.Namespaces:
		return ""
	case cfg.Sandbox.Required:
		return "warning: " + st.Reason + "; [sandbox] required = true, so host tools (bash, background, MCP servers) will refuse to run"
	case st.LandlockOnly:
		return "warning: " + st.Reason + ". It still keeps hush's files, the vault, the rest of the home, other tools' environments and hush's memory from them, " +
			"and their TCP goes only to the call's egress proxy port (Landlock names the port, not the host: a server elsewhere on that port is reached too; no UDP), " +
			"but not the project's .env files, and they see every process (`hush sandbox show` lists what is missing)"
	}
	return "warning: " + st.Reason + " (set [sandbox] required = true to refuse them instead)"
}
