package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools/dockerbash"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/urfave/cli/v2"
)

// sandboxShowOptions is `hush sandbox show`.
type sandboxShowOptions struct {
	Out    io.Writer
	Config func() (loaded, error)
	// HostSandbox is the sandbox a host tool gets in this project.
	HostSandbox func(tool string) (*sandbox.Config, error)
	Tool        string
}

func (a *app) sandboxCommand() *cli.Command {
	return &cli.Command{
		Name:        "sandbox",
		Usage:       "show what a host tool's sandbox hides, and why",
		UsageText:   "hush sandbox show [--tool NAME]",
		Subcommands: []*cli.Command{newSandboxShowCmd(a, nil)},
	}
}

func newSandboxShowCmd(f *app, runF func(*sandboxShowOptions) error) *cli.Command {
	if runF == nil {
		runF = runSandboxShow
	}
	return &cli.Command{
		Name:  "show",
		Usage: "list the protections a tool runs with on this machine, the paths it does not see and those it may only read",
		Description: "Every host tool (bash, background processes, MCP servers) runs in a sandbox of its\n" +
			"own: its own PID namespace and /proc, a mount namespace hiding the paths listed here\n" +
			"and making hush's own executable and ~/.ssh read-only (the next hush, an ssh login),\n" +
			"a user namespace (no capability over the host, even as root) and no_new_privs.\n" +
			"[sandbox] in config.toml sets it: allow = [\"~/.ssh\"] re-opens a hidden path,\n" +
			"hide = [...] hides more, docker = true leaves the Docker socket reachable,\n" +
			"required = true refuses host tools where the kernel refuses the sandbox.\n" +
			"Each call is limited too: [tools.NAME] max_processes (4096) and max_memory (half of\n" +
			"RAM per process); \"# limits per call\" says how this machine enforces them.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Value: "bash", Usage: "tool name: bash, background, or mcp:<server>"},
		},
		Action: func(c *cli.Context) error {
			return runF(&sandboxShowOptions{Out: f.Stdout, Config: f.loadConfig, HostSandbox: f.HostSandbox, Tool: c.String("tool")})
		},
	}
}

// runSandboxShow prints the tool's sandbox, the protections on this
// machine, then every mask with its reason.
func runSandboxShow(opts *sandboxShowOptions) error {
	if opts.Tool == dockerbash.Name {
		return fmt.Errorf("%s runs in a container, not the host sandbox: the project is mounted read-only at /app with its .env files hidden (see `hush env --tool %s`)", opts.Tool, opts.Tool)
	}
	l, err := opts.Config()
	if err != nil {
		return err
	}
	if _, _, err := session.EnvPolicy(*l.Config, l.Dirs.Config, opts.Tool); err != nil {
		return err
	}
	sb, err := opts.HostSandbox(strings.SplitN(opts.Tool, ":", 2)[0])
	if err != nil {
		return err
	}
	return sandbox.Render(opts.Out, opts.Tool, sb, sandbox.Status())
}
