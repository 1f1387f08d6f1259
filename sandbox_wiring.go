package main

import (
	"fmt"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/background"
	"github.com/hushcli/hush/tools/bash"
)

// hostSandbox is the sandbox of a host tool ("bash", "background",
// "mcp:NAME") in this session, from [sandbox] and the tool's network
// setting; nil when [unsafe] no_sandbox turns it off.
func (a *app) hostSandbox(tool string) (*tools.Sandbox, error) {
	if err := a.init(); err != nil {
		return nil, err
	}
	if a.cfg.Unsafe.NoSandbox {
		return nil, nil
	}
	masks, err := a.maskSet()
	if err != nil {
		return nil, err
	}
	sb := &tools.Sandbox{Masks: masks, Required: a.cfg.Sandbox.Required}
	if tool == bash.Name || tool == background.Name {
		switch n := a.cfg.Tools[tool].Network; n {
		case "", "host":
		case "none":
			sb.NoNetwork = true
		default:
			return nil, fmt.Errorf("tools.%s.network = %q: want \"host\" (the default) or \"none\" (only a loopback interface)", tool, n)
		}
	}
	return sb, nil
}

// maskSet is the session's one mask list (tools.MaskSet), built once.
func (a *app) maskSet() (*tools.MaskSet, error) {
	a.masksOnce.Do(func() {
		dir, err := a.projectDir()
		if err != nil {
			a.masksErr = err
			return
		}
		var other []string
		if def, err := config.ResolveDirs(map[string]string{"HOME": a.ambient["HOME"],
			"XDG_CONFIG_HOME": a.ambient["XDG_CONFIG_HOME"], "XDG_DATA_HOME": a.ambient["XDG_DATA_HOME"]}); err == nil {
			for _, d := range []string{def.Config, def.Data} {
				if d != a.dirs.Config && d != a.dirs.Data {
					other = append(other, d)
				}
			}
		}
		a.masks, a.masksErr = tools.NewMaskSet(tools.MaskOptions{
			Home: a.ambient["HOME"], ConfigDir: a.dirs.Config, DataDir: a.dirs.Data, OtherHushDirs: other,
			RuntimeDir: a.ambient["XDG_RUNTIME_DIR"], BusAddress: a.ambient["DBUS_SESSION_BUS_ADDRESS"],
			DockerHost: a.ambient["DOCKER_HOST"], Project: dir,
			Docker: a.cfg.Sandbox.Docker, Allow: a.cfg.Sandbox.Allow, Hide: a.cfg.Sandbox.Hide,
		})
		if a.masksErr != nil {
			a.masksErr = fmt.Errorf("config.toml: %w", a.masksErr)
		}
	})
	return a.masks, a.masksErr
}

// sandboxNotice is the one sentence a session prints at start when host
// tools will not get the sandbox, or "".
func (a *app) sandboxNotice() string {
	if a.cfg.Unsafe.NoSandbox {
		return "" // the [unsafe] warning has said so
	}
	st := tools.SandboxStatus()
	switch {
	case st.Namespaces:
		return ""
	case a.cfg.Sandbox.Required:
		return "warning: " + st.Reason + "; [sandbox] required = true, so host tools (bash, background, MCP servers) will refuse to run"
	}
	return "warning: " + st.Reason + " (set [sandbox] required = true to refuse them instead)"
}
