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
	out := a.stdout
	if sb == nil {
		fmt.Fprintf(out, "# sandbox for %s: OFF ([unsafe] no_sandbox = true in config.toml)\n", tool)
		return nil
	}
	st := tools.SandboxStatus()
	state := "on"
	if !st.Namespaces {
		state = "OFF: " + st.Reason
		if sb.Required {
			state += "; [sandbox] required = true, so it refuses to run"
		}
	}
	fmt.Fprintf(out, "# sandbox for %s: %s\n", tool, state)
	fmt.Fprintln(out, "# protections")
	for _, p := range st.Protections {
		mark := "on "
		if !p.On {
			mark = "OFF"
		}
		if p.Name == tools.ProtectNetwork && st.Namespaces && !sb.NoNetwork {
			mark, p.Why = "-- ", "network is on for this tool; [tools."+tool+"] network = \"none\" leaves it only a loopback interface"
		}
		fmt.Fprintf(out, "%s  %-18s %s\n", mark, p.Name, p.Why)
	}
	masks, err := sb.Masks.Masks()
	if err != nil {
		return err
	}
	if st.Namespaces {
		fmt.Fprintf(out, "# hidden (%d)\n", len(masks))
	} else {
		fmt.Fprintf(out, "# NOT hidden now: what the sandbox hides where the kernel allows it (%d)\n", len(masks))
	}
	for _, m := range masks {
		kind := "file"
		if m.Dir {
			kind = "dir "
		}
		fmt.Fprintf(out, "%s  %s\n      %s\n", kind, m.Path, m.Reason)
	}
	if re := sb.Masks.Reopened(); len(re) > 0 {
		fmt.Fprintf(out, "# re-opened by [sandbox] allow (%d)\n", len(re))
		for _, m := range re {
			fmt.Fprintf(out, "      %s\n", m.Path)
		}
	}
	return nil
}
