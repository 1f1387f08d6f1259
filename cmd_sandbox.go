package main

import (
	"github.com/urfave/cli/v2"
)

func (a *app) sandboxCommand() *cli.Command {
	return &cli.Command{
		Name:      "sandbox",
		Usage:     "show what a host tool's sandbox hides, and why",
		UsageText: "hush sandbox show [--tool NAME]",
		Subcommands: []*cli.Command{{
			Name:  "show",
			Usage: "list the protections a tool runs with on this machine, the paths it does not see and those it may only read",
			Description: "Every host tool (bash, background processes, MCP servers) runs in a sandbox of its\n" +
				"own: its own PID namespace and /proc, a mount namespace hiding the paths listed here\n" +
				"and making hush's own executable and ~/.ssh read-only (the next hush, an ssh login),\n" +
				"a user namespace (no capability over the host, even as root) and no_new_privs.\n" +
				"[sandbox] in config.toml sets it: allow = [\"~/.ssh\"] re-opens a hidden path,\n" +
				"hide = [...] hides more, docker = true leaves the Docker socket reachable,\n" +
				"required = true refuses host tools where the kernel refuses the sandbox.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tool", Value: "bash", Usage: "tool name: bash, background, or mcp:<server>"},
			},
			Action: func(c *cli.Context) error { return a.SandboxShow(c.String("tool")) },
		}},
	}
}
