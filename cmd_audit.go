package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hushcli/hush/selftest"

	"github.com/hushcli/hush/executor/auditlog"
	"github.com/urfave/cli/v2"
)

// auditLogOptions is `hush audit log`.
type auditLogOptions struct {
	Out, Err io.Writer
	Config   func() (loaded, error)
	JSON     bool
	// Last, when > 0, keeps only the last entries.
	Last int
}

func newAuditLogCmd(f *app, runF func(*auditLogOptions) error) *cli.Command {
	if runF == nil {
		runF = runAuditLog
	}
	return &cli.Command{
		Name:  "log",
		Usage: "print the permission decisions: which tool asked for which secret, and what was decided",
		Description: "Reads audit.jsonl in the data dir. Every gate decision is there — tool runs and\n" +
			"secret reads, allowed or denied, and what decided (a rule, a prompt, the session).\n" +
			"No secret value is ever written to it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the entries as JSON lines"},
			&cli.IntFlag{Name: "last", Usage: "only the last `N` entries"},
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("last") && c.Int("last") < 1 {
				return &exitError{exitUsage, fmt.Errorf("--last %d: give a number of entries, 1 or more", c.Int("last"))}
			}
			return runF(&auditLogOptions{Out: f.Stdout, Err: f.Stderr, Config: f.loadConfig, JSON: c.Bool("json"), Last: c.Int("last")})
		},
	}
}

// runAuditLog prints the gate's decisions from audit.jsonl, as a table or
// JSON lines; damage in the file is a warning.
func runAuditLog(opts *auditLogOptions) error {
	l, err := opts.Config()
	if err != nil {
		return err
	}
	path := filepath.Join(l.Dirs.Data, auditlog.FileName)
	entries, damage, err := auditlog.Read(path)
	if err != nil {
		return err
	}
	if msg := damage.Describe(path); msg != "" {
		fmt.Fprintf(opts.Err, "hush: warning: %s\n", msg)
	}
	entries = auditlog.Last(entries, opts.Last)
	if opts.JSON {
		return auditlog.WriteJSON(opts.Out, entries)
	}
	return auditlog.WriteTable(opts.Out, entries, path)
}

// auditOptions is `hush audit`.
type auditOptions struct {
	Out, Progress io.Writer
	Ambient       map[string]string
	Config        func() (loaded, error)
	Project       func() (string, error)
	// Executable is the hush binary under audit.
	Executable func() (string, error)
	JSON       bool
	Docker     bool
	NoSandbox  bool
	Timeout    time.Duration
}

func newAuditCmd(f *app, runF func(*auditOptions) error) *cli.Command {
	if runF == nil {
		runF = runAudit
	}
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
		Subcommands: []*cli.Command{newAuditLogCmd(f, nil)},
		Action: func(c *cli.Context) error {
			noSandbox := false
			switch c.String("sandbox") {
			case "on":
			case "off":
				noSandbox = true
			default:
				return &exitError{exitUsage, fmt.Errorf("--sandbox %s: say on or off", c.String("sandbox"))}
			}
			return runF(&auditOptions{Out: f.Stdout, Progress: f.Stderr, Ambient: f.Ambient, Config: f.loadConfig, Project: f.ProjectDir, Executable: os.Executable,
				JSON: c.Bool("json"), Docker: !c.Bool("no-docker"), NoSandbox: noSandbox, Timeout: c.Duration("timeout")})
		},
	}
}

// runAudit audits this hush binary under the user's tool policies
// (selftest.Command); Ctrl-C or SIGTERM stops it.
func runAudit(opts *auditOptions) error {
	l, err := opts.Config()
	if err != nil {
		return err
	}
	hush, err := opts.Executable()
	if err != nil {
		return fmt.Errorf("find the hush binary to audit: %w", err)
	}
	dir, err := opts.Project()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return selftest.Command{Options: selftest.Options{Hush: hush, Ambient: opts.Ambient, User: *l.Config, Docker: opts.Docker, NoSandbox: opts.NoSandbox, Timeout: opts.Timeout},
		ProjectDir: dir, ConfigDir: l.Dirs.Config, DataDir: l.Dirs.Data, JSON: opts.JSON, Progress: opts.Progress}.Run(ctx, opts.Out)
}
