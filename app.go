package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/guard"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"
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
	ambient, guardErr := guard.Guard()
	sandbox.NoteStartupEnv(ambient)
	a := &app{Ambient: ambient, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Version: version}
	if guardErr != nil {
		a.Warn(guardErr.Error())
	}
	// A panic's message and stack can carry values hush holds; print one
	// redacted sentence instead of the runtime's dump.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(a.Stderr, "hush: internal error: %s (please report it)\n", a.Redact(fmt.Sprint(r)))
			code = exitInternal
		}
	}()
	return runMain(a, args)
}

// asExit is err with the exit code hush ends with: its own, a usage
// error's, a stop signal's, or 1.
func asExit(err error) *exitError {
	var ee *exitError
	var stopped *stoppedError
	switch {
	case errors.As(err, &ee):
		return &exitError{ee.code, err} // the whole message, wrapping and all
	case errors.As(err, &stopped):
		return &exitError{signalExit(stopped.Signal).code, err}
	}
	return &exitError{exitFailure, err}
}

// cliMu serializes the runs of a cli.App in one process: urfave/cli
// mutates package globals (its help command, the --help flag) on every
// Run, so two at once race — hush runs one, its tests many.
var cliMu sync.Mutex

// runCLI runs c with args under cliMu.
func runCLI(c *cli.App, args []string) error {
	cliMu.Lock()
	defer cliMu.Unlock()
	return c.Run(args)
}

// runMain runs hush's command line args on the factory f and reports an
// error, once, as one redacted sentence.
func runMain(f *app, args []string) int {
	err := runCLI(newApp(f), args)
	if err != nil {
		err = noHelpTopic(err)
	}
	if err == nil {
		return exitOK
	}
	code := asExit(err).code
	if msg := err.Error(); msg != "" {
		// An error can carry text from outside: a model server's error
		// body, a file name. Neither may drive the terminal.
		fmt.Fprintf(f.Stderr, "hush: %s\n", outbuf.Sanitize(f.Redact(msg)))
	}
	return code
}

// newApp is the root command on f, with hush's handling of usage errors,
// stray arguments and help on every command.
func newApp(f *app) *cli.App {
	app := newRootCmd(f, nil)
	// urfave/cli adds --help to the root only when it adds its own help
	// command, which helpCommand replaces.
	app.Flags = append(app.Flags, cli.HelpFlag)
	prepareCommands(app.Commands)
	return app
}

// prepareCommands gives every command hush's handling of usage errors,
// stray arguments and help.
func prepareCommands(cmds []*cli.Command) {
	hideLeafHelpCommands(cmds)
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if c.OnUsageError == nil {
				c.OnUsageError = usageError
			}
			refuseStrayArgs(c)
			walk(c.Subcommands)
		}
	}
	walk(cmds)
}

// refuseStrayArgs makes a word hush does not know an error, not something
// quietly ignored: `hush vault frob` said "No help topic for 'frob'" (exit
// 1), and `hush audit frob` ran the whole audit. A command with
// subcommands calls an unknown one by name; a leaf without ArgsUsage
// takes no arguments at all.
func refuseStrayArgs(c *cli.Command) {
	if c.Hidden || c.Name == "help" {
		return
	}
	orig := c.Action
	switch {
	case len(c.Subcommands) > 0:
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return &exitError{exitUsage, fmt.Errorf("unknown command %q (see %s --help)", ctx.Command.HelpName+" "+ctx.Args().First(), ctx.Command.HelpName)}
			}
			if orig == nil {
				return cli.ShowSubcommandHelp(ctx)
			}
			return orig(ctx)
		}
	case c.ArgsUsage == "" && orig != nil:
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return &exitError{exitUsage, fmt.Errorf("%s takes no arguments (got %q; see %s --help)", ctx.Command.HelpName, ctx.Args().First(), ctx.Command.HelpName)}
			}
			return orig(ctx)
		}
	}
}

// noHelpTopic turns urfave/cli's "No help topic for 'x'" (`hush help x`)
// into hush's one sentence for an unknown command, with the usage exit.
func noHelpTopic(err error) error {
	var ec cli.ExitCoder
	if !errors.As(err, &ec) {
		return err
	}
	topic, ok := strings.CutPrefix(ec.Error(), "No help topic for '")
	if !ok {
		return err
	}
	topic, _, _ = strings.Cut(topic, "'")
	return &exitError{exitUsage, fmt.Errorf("no help for %q: hush has no such command (see hush --help)", topic)}
}

// helpCommand is `hush help [COMMAND [SUBCOMMAND]]`: exactly what `hush
// COMMAND SUBCOMMAND --help` prints. urfave/cli's own printed a command
// with subcommands (hush help vault) without its subcommands or options,
// and read only the first word.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show a command's help: hush help vault set is hush vault set --help",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			if len(words) == 0 {
				return cli.ShowAppHelp(c)
			}
			cmds, path := c.App.Commands, c.App.Name
			for _, w := range words {
				var found *cli.Command
				for _, cmd := range cmds {
					if cmd.HasName(w) {
						found = cmd
					}
				}
				if found == nil {
					return &exitError{exitUsage, fmt.Errorf("no help for %q: %s has no such command (see %s --help)", strings.Join(words, " "), path, path)}
				}
				cmds, path = found.Subcommands, path+" "+found.Name
			}
			return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, words...), "--help"))
		},
	}
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

// usageError reports a bad flag in one line — with the flag meant, when
// one is close (--modle: did you mean --model?) — and then one line of
// usage: not the whole help around the error twice.
func usageError(c *cli.Context, err error, _ bool) error {
	name, args, flags := c.App.HelpName, c.App.ArgsUsage, c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		name, args, flags = c.Command.HelpName, c.Command.ArgsUsage, c.Command.Flags
	}
	usage := strings.TrimSpace(name + " [options] " + args)
	msg := err.Error()
	if flag, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if len(flag) > 1 {
			flag = "-" + flag
		}
		msg = "unknown flag -" + flag
		if near := nearFlag(flags, strings.TrimLeft(flag, "-")); near != "" {
			msg += "; did you mean " + near + "?"
		}
	}
	return &exitError{exitUsage, fmt.Errorf("%s\nusage: %s; %s --help explains each option", msg, usage, name)}
}

// nearFlag is the flag a mistyped name most likely meant: the one within
// one edit (two for names of five letters or more) or, failing that, the
// only one it is the start of; "" when none is that close or the name is
// a single letter.
func nearFlag(flags []cli.Flag, typed string) string {
	if len(typed) < 2 {
		return ""
	}
	best, bestD := "", 3
	var prefixed []string
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) < 2 {
				continue
			}
			d := smetrics.WagnerFischer(typed, n, 1, 1, 1)
			if limit := min(2, len(typed)/3+1); d <= limit && d < bestD {
				best, bestD = n, d
			}
			if len(typed) >= 3 && strings.HasPrefix(n, typed) {
				prefixed = append(prefixed, n)
			}
		}
	}
	switch {
	case best != "":
		return "--" + best
	case len(prefixed) == 1:
		return "--" + prefixed[0]
	}
	return ""
}
