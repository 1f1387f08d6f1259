package main

import (
	"context"

	"github.com/hushcli/hush/selftest"
	"github.com/urfave/cli/v2"
)

// newProbeCmd is run by the audit's tools, never by a person: its body
// is selftest's (the probes are what the audit checks).
func newProbeCmd(a *app) *cli.Command {
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
			&cli.IntFlag{Name: "key-serial"},
			&cli.IntFlag{Name: "squat"},
			&cli.StringFlag{Name: "squat-file"},
		},
		Action: func(c *cli.Context) error {
			return selftest.ProbeCommand{
				Probe: selftest.ProbeOptions{Env: a.Ambient, AgentPID: c.Int("agent"), Files: c.StringSlice("file"), GrantedVar: c.String("granted-var")},
				Attack: selftest.AttackOptions{MemPID: c.Int("mem-pid"), Needle: c.String("needle"), MemControl: c.Bool("mem-control"), Mark: a.Ambient["AUDIT_MARK"],
					Reveal: c.String("reveal"), RevealKey: c.String("key"), RevealData: c.String("reveal-data"), RevealConf: c.String("reveal-config"),
					SessionKey: c.String("session-key"), SSHAgents: c.IsSet("ssh-agent-control"), SSHAgentControl: c.String("ssh-agent-control"),
					KeySerial: c.Int("key-serial")},
				MCP: c.Bool("mcp"), MCPSpy: c.Bool("mcp-spy"), Connect: c.StringSlice("connect"),
				SquatPort: c.Int("squat"), SquatFile: c.String("squat-file"),
			}.Run(context.Background(), a.Stdout)
		},
	}
}
