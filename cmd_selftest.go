package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hushcli/hush/selftest"
	"github.com/urfave/cli/v2"
)

func (a *app) auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "prove on this machine that no secret leaks to a tool (and inspect the decision log)",
		Description: "Plants fresh canary secrets in a temporary vault, a project .env, the environment of a\n" +
			"hush it starts, and an MCP server's config; runs one replayed turn through every spawn\n" +
			"path (bash, background, an MCP server, docker-bash when an engine answers) under your\n" +
			"tool policies; and checks each place a secret could surface: the tool's environment,\n" +
			"files it can read, the agent's /proc environ and memory, every command line on the\n" +
			"machine while tools run, tool output, the transcript and the audit log. A granted\n" +
			"secret must arrive (the positive control) and come back redacted.\n\n" +
			"Then a hostile turn attacks, as root (when the audit runs as root) and unprivileged:\n" +
			"ungranted tools read other tools' granted secrets by /proc and ps eww (SIBLINGS), read\n" +
			"the vault file, reach the keyring socket, write config.toml and the trust file and drive\n" +
			"`hush vault reveal` in a pty (STORAGE), dump .env, .env.local, sub/.env and .envrc with\n" +
			"od -c and xxd (DOTENV), read hush's memory through /proc/<pid>/mem and process_vm_readv\n" +
			"(MEMORY), and leave a detached child holding a granted secret (LINGER). Each attack has\n" +
			"a positive control; one that could not run says `not checked`. --sandbox off runs the\n" +
			"audit's own tools without the sandbox, which must turn those rows red.\n\n" +
			"Prints the matrices, a verdict and the configuration risks it sees; exits 1 on any leak.\n" +
			"Nothing of your own vault or data is touched.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.BoolFlag{Name: "no-docker", Usage: "leave out the docker-bash path"},
			&cli.DurationFlag{Name: "timeout", Value: 90 * time.Second, Usage: "bound each run of the agent under test"},
			&cli.StringFlag{Name: "sandbox", Value: "on", Usage: "`on`, or off to run the audit's own tools without the sandbox ([unsafe] no_sandbox in the audit's config only), which must turn the attack rows red"},
		},
		Subcommands: []*cli.Command{a.auditLogCommand()},
		Action: func(c *cli.Context) error {
			noSandbox := false
			switch c.String("sandbox") {
			case "on":
			case "off":
				noSandbox = true
			default:
				return &exitError{exitUsage, fmt.Errorf("--sandbox %s: say on or off", c.String("sandbox"))}
			}
			return a.SelfTest(c.Bool("json"), !c.Bool("no-docker"), noSandbox, c.Duration("timeout"))
		},
	}
}

// probeCommand is run by the audit's tools, never by a person.
func (a *app) probeCommand() *cli.Command {
	return &cli.Command{
		Name:   "__probe",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "agent"},
			&cli.StringSliceFlag{Name: "file"},
			&cli.StringFlag{Name: "granted-var"},
			&cli.BoolFlag{Name: "mcp"},
			// The attack turn's probes (selftest/attackprobe.go).
			&cli.BoolFlag{Name: "mcp-spy"},
			&cli.StringSliceFlag{Name: "connect"},
			&cli.IntFlag{Name: "mem-pid"},
			&cli.StringFlag{Name: "needle"},
			&cli.BoolFlag{Name: "mem-control"},
			&cli.StringFlag{Name: "reveal"},
			&cli.StringFlag{Name: "reveal-data"},
			&cli.StringFlag{Name: "reveal-config"},
			&cli.StringFlag{Name: "key"},
			&cli.StringFlag{Name: "session-key"},
			&cli.StringFlag{Name: "ssh-agent-control"},
		},
		Action: func(c *cli.Context) error {
			return selftest.ProbeCommand{
				Probe: selftest.ProbeOptions{Env: a.Ambient, AgentPID: c.Int("agent"), Files: c.StringSlice("file"), GrantedVar: c.String("granted-var")},
				Attack: selftest.AttackOptions{MemPID: c.Int("mem-pid"), Needle: c.String("needle"), MemControl: c.Bool("mem-control"), Mark: a.Ambient["AUDIT_MARK"],
					Reveal: c.String("reveal"), RevealKey: c.String("key"), RevealData: c.String("reveal-data"), RevealConf: c.String("reveal-config"),
					SessionKey: c.String("session-key"), SSHAgents: c.IsSet("ssh-agent-control"), SSHAgentControl: c.String("ssh-agent-control")},
				MCP: c.Bool("mcp"), MCPSpy: c.Bool("mcp-spy"), Connect: c.StringSlice("connect"),
			}.Run(context.Background(), a.Stdout)
		},
	}
}
