package main

import (
	"fmt"
	"strings"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/dockerbash"
	"github.com/urfave/cli/v2"
)

func (a *app) sandboxCommand() *cli.Command {
	return &cli.Command{
		Name:      "sandbox",
		Usage:     "show what a host tool's sandbox hides, and why",
		UsageText: "hush sandbox show [--tool NAME]",
		Subcommands: []*cli.Command{{
			Name:  "show",
			Usage: "list the protections a tool runs with on this machine and the paths it does not see",
			Description: "Every host tool (bash, background processes, MCP servers) runs in a sandbox of its\n" +
				"own: its own PID namespace and /proc, a mount namespace hiding the paths listed here,\n" +
				"a user namespace (no capability over the host, even as root) and no_new_privs.\n" +
				"[sandbox] in config.toml sets it: allow = [\"~/.ssh\"] re-opens a hidden path,\n" +
				"hide = [...] hides more, docker = true leaves the Docker socket reachable,\n" +
				"required = true refuses host tools where the kernel refuses the sandbox.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tool", Value: "bash", Usage: "tool name: bash, background, or mcp:<server>"},
			},
			Action: func(c *cli.Context) error { return a.runSandboxShow(c.String("tool")) },
		}},
	}
}

// runSandboxShow prints tool's sandbox: protections on this machine, then
// every mask with its reason.
func (a *app) runSandboxShow(tool string) error {
	if tool == dockerbash.Name {
		return fmt.Errorf("%s runs in a container, not the host sandbox: the project is mounted read-only at /app with its .env files hidden (see `hush env --tool %s`)", tool, tool)
	}
	if err := a.init(); err != nil {
		return err
	}
	if _, _, err := session.EnvPolicy(a.cfg, a.dirs.Config, tool); err != nil {
		return err
	}
	sb, err := a.hostSandbox(strings.SplitN(tool, ":", 2)[0])
	if err != nil {
		return err
	}
	return tools.RenderSandbox(a.stdout, tool, sb, tools.SandboxStatus())
}
