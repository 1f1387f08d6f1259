package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes: the one list (README and `hush run --help` describe them).
const (
	exitOK          = 0
	exitFailure     = 1   // a command failed; the message says why
	exitUsage       = 2   // a flag or argument is wrong
	exitDenied      = 3   // hush run: the turn ended on a denial
	exitInternal    = 70  // a panic (EX_SOFTWARE); one redacted sentence is printed
	exitInterrupted = 130 // Ctrl-C (128 + SIGINT)
	exitTerminated  = 143 // SIGTERM (128 + SIGTERM)
)

// exitError carries an exit code through urfave/cli without a stack trace.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// run is main without os.Exit, so the whole CLI is testable in-process.
func run(args []string) (code int) {
	tools.RestoreTerm()
	ambient, guardErr := tools.Guard()
	a := &app{ambient: ambient, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	if guardErr != nil {
		fmt.Fprintf(a.stderr, "hush: warning: %v\n", guardErr)
	}
	// A panic's message and stack can carry values hush holds; print one
	// redacted sentence instead of the runtime's dump.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.stderr, "hush: internal error: %s (please report it)\n", a.redact(fmt.Sprint(r)))
			code = exitInternal
		}
	}()
	return a.main(args)
}

// warn prints one warning sentence.
func (a *app) warn(s string) { fmt.Fprintf(a.stderr, "hush: warning: %s\n", s) }

// redact scrubs every secret hush knows of from s (session.Redact).
func (a *app) redact(s string) string { return session.Redact(a.scrub, a.ambient, s) }

// app is built once per process and handed to every command. Its fields
// that touch the disk are lazy, so `hush --version` reads nothing.
type app struct {
	ambient map[string]string // the environment hush was started with (in memory only)
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer

	// workDir, when set, replaces the current directory as the project root.
	workDir string
	// instructions names the AGENTS.md files the session's prompt carries.
	instructions string

	once    sync.Once
	dirs    config.Dirs
	cfg     config.Config
	initErr error

	masksOnce sync.Once
	masks     *tools.MaskSet // the sandbox's mask list (sandbox_wiring.go)
	masksErr  error

	vaultOnce sync.Once
	vault     *vault.Layered
	proxy     *vault.Proxy
	scrub     *executor.SecretCache // the vault's secret snapshots, shared by everything that scrubs
	vaultErr  error
}

func (a *app) main(args []string) int {
	cliApp := a.cliApp()
	err := cliApp.Run(args)
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" {
		// An error can carry text from outside: a model server's error
		// body, a file name. Neither may drive the terminal.
		fmt.Fprintf(a.stderr, "hush: %s\n", outbuf.Sanitize(a.redact(msg)))
	}
	return code
}

func (a *app) cliApp() *cli.App {
	app := a.newCLIApp()
	hideLeafHelpCommands(app.Commands)
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if c.OnUsageError == nil {
				c.OnUsageError = usageError
			}
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	return app
}

// hideLeafHelpCommands drops the "help" (alias "h") subcommand urfave/cli
// gives every command from commands that have no subcommands of their own:
// there it swallowed an argument, so `hush mcp tools h` printed help
// instead of looking up server h. --help still works everywhere.
func hideLeafHelpCommands(cmds []*cli.Command) {
	for _, c := range cmds {
		if len(c.Subcommands) == 0 {
			c.HideHelpCommand = true
		}
		hideLeafHelpCommands(c.Subcommands)
	}
}

// usageError reports a bad flag in one line, then the command's usage
// line: not the whole help around the error twice.
func usageError(c *cli.Context, err error, _ bool) error {
	name, args := c.App.HelpName, c.App.ArgsUsage
	if c.Command != nil && c.Command.Name != "" {
		name, args = c.Command.HelpName, c.Command.ArgsUsage
	}
	usage := strings.TrimSpace(name + " [options] " + args)
	msg := err.Error()
	if flag, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if len(flag) > 1 {
			flag = "-" + flag
		}
		msg = "unknown flag -" + flag
	}
	return &exitError{exitUsage, fmt.Errorf("%s\nusage: %s\n(%s --help lists the options)", msg, usage, name)}
}

func (a *app) newCLIApp() *cli.App {
	return &cli.App{
		Name:    "hush",
		Usage:   "a coding agent that hands a tool a secret only when it was granted that secret",
		Version: version,
		Description: "hush chats with a model that calls tools (a host shell, background processes,\n" +
			"MCP servers, a shell in a container). Tools start with a clean environment:\n" +
			"a secret reaches a tool only through a ${NAME} reference the permission gate allowed.\n\n" +
			"Files: config.toml and mcp.json in the config dir ($HUSH_CONFIG_DIR, else\n" +
			"$XDG_CONFIG_HOME/hush); vault.env and audit.jsonl in the data dir ($HUSH_DATA_DIR,\n" +
			"else $XDG_DATA_HOME/hush).",
		Reader:    a.stdin,
		Writer:    a.stdout,
		ErrWriter: a.stderr,
		// The root command is chat: its flags work without the word chat
		// (hush --model x), as other agents' do.
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "project directory (default: the current directory)"},
		}, append(modelFlagList(), chatFlags()...)...),
		Action:       a.rootAction,
		OnUsageError: usageError,
		Before: func(c *cli.Context) error {
			if d := c.String("dir"); d != "" {
				abs, err := filepath.Abs(d)
				if err != nil {
					return err
				}
				a.workDir = abs
			}
			return nil
		},
		Commands: []*cli.Command{
			a.chatCommand(),
			a.runCommand(),
			a.envCommand(),
			a.setupCommand(),
			a.vaultCommand(),
			a.trustCommand(),
			a.auditCommand(),
			a.probeCommand(),
			a.mcpCommand(),
			a.sandboxCommand(),
			a.sessionsCommand(),
		},
		ExitErrHandler: func(*cli.Context, error) {}, // main() reports errors, once
	}
}

// projectDir is the project root tools run in.
func (a *app) projectDir() (string, error) {
	if a.workDir != "" {
		return a.workDir, nil
	}
	return os.Getwd()
}

// init loads the directories and config.toml once (session.LoadConfig).
func (a *app) init() error {
	a.once.Do(func() {
		dir, err := a.projectDir()
		if err != nil {
			a.initErr = err
			return
		}
		a.dirs, a.cfg, a.initErr = session.LoadConfig(a.ambient, dir, a.stderr)
	})
	return a.initErr
}

// openVault builds the layered vault: the configured backend behind a
// forwarding proxy, the legacy project .env, and the real environment.
func (a *app) openVault() (*vault.Layered, error) {
	a.vaultOnce.Do(func() {
		if err := a.init(); err != nil {
			a.vaultErr = err
			return
		}
		dir, err := a.projectDir()
		if err != nil {
			a.vaultErr = err
			return
		}
		v, err := session.OpenVault(a.cfg, a.vaultRegistry(), a.dirs.Data, a.ambient, dir)
		if err != nil {
			a.vaultErr = err
			return
		}
		for _, line := range v.Warnings {
			fmt.Fprintln(a.stderr, "hush: warning: "+line)
		}
		a.vault, a.proxy = v.Layered, v.Proxy
		a.scrub = executor.NewSecretCache(a.vault.All, a.vault.Version)
	})
	return a.vault, a.vaultErr
}
