package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
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
			"Prints a matrix, a verdict and the configuration risks it sees; exits 1 on any leak.\n" +
			"Nothing of your own vault or data is touched.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.BoolFlag{Name: "no-docker", Usage: "leave out the docker-bash path"},
			&cli.DurationFlag{Name: "timeout", Value: 90 * time.Second, Usage: "bound each run of the agent under test"},
		},
		Subcommands: []*cli.Command{a.auditLogCommand()},
		Action: func(c *cli.Context) error {
			return a.selfTest(c.Bool("json"), !c.Bool("no-docker"), c.Duration("timeout"))
		},
	}
}

func (a *app) selfTest(asJSON, docker bool, timeout time.Duration) error {
	if err := a.init(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the hush binary to audit: %w", err)
	}
	dir, err := a.projectDir()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return selftest.Command{Options: selftest.Options{Hush: exe, Ambient: a.ambient, User: a.cfg, Docker: docker, Timeout: timeout},
		ProjectDir: dir, ConfigDir: a.dirs.Config, DataDir: a.dirs.Data, JSON: asJSON, Progress: a.stderr}.Run(ctx, a.stdout)
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
		},
		Action: func(c *cli.Context) error {
			o := selftest.ProbeOptions{Env: a.ambient, AgentPID: c.Int("agent"), Files: c.StringSlice("file"), GrantedVar: c.String("granted-var")}
			if c.Bool("mcp") {
				return selftest.ServeProbeMCP(context.Background(), o)
			}
			fmt.Fprintln(a.stdout, selftest.RunProbe(o).Line())
			return nil
		},
	}
}
