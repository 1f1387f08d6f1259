package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hushcli/hush/executor/transcript"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// chatFlags are chat's own flags beside the model flags; the root command
// takes them too.
func chatFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "plain", Usage: "line-by-line chat without the editor, colours or status line (scripts, screen readers)"},
		&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "resume the latest session of this project", DisableDefaultText: true},
		&cli.BoolFlag{Name: "resume", Aliases: []string{"r"}, Usage: "resume the session `ID` given after the flags, or pick one", DisableDefaultText: true},
		forkFlag(), waitFlag(),
	}
}

func (a *app) chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "chat with the agent in the terminal (the default command)",
		Description: "Type a request and press Enter (Alt-Enter adds a line). The model's text streams in as\n" +
			"Markdown; each tool call is shown with its arguments and a preview of its output. When a\n" +
			"tool wants to run or read a secret and no rule in config.toml decides, you are asked.\n" +
			"Slash commands (/help, /clear, /model, /tools, /usage, /compact, /resume, /exit) are\n" +
			"answered by hush.\n" +
			"Ctrl-C stops the running turn (and kills the tool's processes); pressed twice at an\n" +
			"empty prompt, or Ctrl-D, exits. With --plain, or input that is not a terminal, chat\n" +
			"reads plain lines and prints plain text.",
		ArgsUsage: "[--continue | --resume [ID]]",
		Flags:     append(modelFlagList(), chatFlags()...),
		Action:    a.chatAction,
	}
}

// chatAction is chat's action, also the root command's: the model flags
// work as `hush --model x` as well as `hush chat --model x`.
func (a *app) chatAction(c *cli.Context) error { return a.chatActionAt(c, false) }

// rootAction is the root command's action: chat, where a word that is not
// a command is one mistyped.
func (a *app) rootAction(c *cli.Context) error { return a.chatActionAt(c, true) }

func (a *app) chatActionAt(c *cli.Context, root bool) error {
	rr := resumeRequest{Continue: c.Bool("continue"), Resume: c.Bool("resume"), ID: c.Args().First(), Fork: c.Bool("fork"), Wait: c.Bool("wait")}
	if c.Args().Len() > 1 || (c.Args().Len() == 1 && !rr.Resume) {
		if root { // hush frobnicate
			return unknownCommand(c.Args().First())
		}
		return &exitError{exitUsage, fmt.Errorf("chat takes no arguments but a session id after --resume (got %q); to run one prompt use hush run", strings.Join(c.Args().Slice(), " "))}
	}
	if rr.Continue && rr.Resume {
		return &exitError{exitUsage, errors.New("--continue and --resume both pick a session: use one")}
	}
	if err := checkForkWait(rr); err != nil {
		return err
	}
	f := readModelFlags(c)
	f.plain = c.Bool("plain")
	return a.chat(f, rr)
}

// chatTerminal is the terminal the chat UI draws on: stdin and stdout both
// terminals, TERM not dumb, --plain not given.
func (a *app) chatTerminal(f modelFlags) *os.File {
	in := a.Terminal()
	out, ok := a.Stdout.(*os.File)
	if f.plain || in == nil || !ok || !term.IsTerminal(int(out.Fd())) || a.Ambient["TERM"] == "dumb" {
		return nil
	}
	return in
}

func (a *app) chat(f modelFlags, rr resumeRequest) error {
	// First run: nothing configured and a person at the terminal.
	if err := a.firstRun(f); err != nil {
		return err
	}
	var resumed *transcript.Session
	if rr.Any() {
		s, err := a.FindSession(rr, a.Terminal() != nil)
		if err != nil {
			return err
		}
		resumed = s
	}
	if tty := a.chatTerminal(f); tty != nil {
		return a.terminalChat(f, tty, resumed, rr)
	}
	return a.plainChat(f, resumed, rr)
}

// terminalChat runs the chat UI (session.Chat.Terminal) on tty.
func (a *app) terminalChat(f modelFlags, tty *os.File, resumed *transcript.Session, rr resumeRequest) error {
	c, err := a.Chat(sessionModel(f), resumed, rr)
	if err != nil {
		return err
	}
	stoppedBy, err := c.Terminal(tty)
	if stoppedBy != nil {
		return signalExit(stoppedBy) // 129 or 143
	}
	return err
}

// plainChat is the line-by-line chat (session.Chat.Plain).
func (a *app) plainChat(f modelFlags, resumed *transcript.Session, rr resumeRequest) error {
	interactive := a.Terminal() != nil
	c, err := a.Chat(sessionModel(f), resumed, rr)
	if err != nil {
		return err
	}
	// The terminal closed, or hush was told to stop: exit 129 / 143.
	return c.Plain(interactive, func(s os.Signal) { exitNow(signalExit(s).code) })
}

// unknownCommand is the error for `hush frobnicate`.
func unknownCommand(name string) error {
	return &exitError{exitUsage, fmt.Errorf("unknown command %q (see hush --help)", name)}
}
