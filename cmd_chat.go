package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/ui"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// chatFlags are chat's own flags beside the model flags; the root command
// takes them too.
func chatFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "plain", Usage: "line-by-line chat without the editor, colours or status line (scripts, screen readers)"},
		&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "resume the latest session of this project"},
		&cli.BoolFlag{Name: "resume", Aliases: []string{"r"}, Usage: "resume the session `ID` given after the flags, or pick one"},
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
	rr := resumeRequest{Continue: c.Bool("continue"), Resume: c.Bool("resume"), ID: c.Args().First()}
	if c.Args().Len() > 1 || (c.Args().Len() == 1 && !rr.Resume) {
		if root { // hush frobnicate
			return unknownCommand(c.Args().First())
		}
		return &exitError{exitUsage, fmt.Errorf("chat takes no arguments but a session id after --resume (got %q); to run one prompt use hush run", strings.Join(c.Args().Slice(), " "))}
	}
	if rr.Continue && rr.Resume {
		return &exitError{exitUsage, errors.New("--continue and --resume both pick a session: use one")}
	}
	f := readModelFlags(c)
	f.plain = c.Bool("plain")
	return a.chat(f, rr)
}

// chatTerminal is the terminal the chat UI draws on: stdin and stdout both
// terminals, TERM not dumb, --plain not given.
func (a *app) chatTerminal(f modelFlags) *os.File {
	in := a.stdinTerminal()
	out, ok := a.stdout.(*os.File)
	if f.plain || in == nil || !ok || !term.IsTerminal(int(out.Fd())) || a.ambient["TERM"] == "dumb" {
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
		s, err := a.findSession(rr, a.stdinTerminal() != nil)
		if err != nil {
			return err
		}
		resumed = s
	}
	if tty := a.chatTerminal(f); tty != nil {
		return a.terminalChat(f, tty, resumed)
	}
	return a.plainChat(f, resumed)
}

// terminalChat runs the chat UI (package ui) on tty.
func (a *app) terminalChat(f modelFlags, tty *os.File, resumed *transcript.Session) error {
	if err := a.init(); err != nil {
		return err
	}
	dir, err := a.projectDir()
	if err != nil {
		return err
	}
	hist := &ui.History{Path: filepath.Join(a.dirs.Data, "history.jsonl"), Redact: a.redact}
	if err := hist.Load(); err != nil {
		fmt.Fprintf(a.stderr, "hush: warning: %v\n", err)
	}
	var (
		agent *executor.Agent
		chat  *ui.Chat
		conv  transcript.Conversation
	)
	if resumed != nil {
		conv = resumed.Conversation
	}
	// /resume and /compact: the session's commands, shared with --plain.
	sessionCommand := func(name string) func(ctx context.Context, arg string, out io.Writer) error {
		return func(ctx context.Context, arg string, out io.Writer) error {
			run := func() { a.chatSessionCommand(ctx, out, agent, &conv, name, arg, arg == "") }
			if name == "/resume" && arg == "" {
				// The picker is a form: it gets the terminal.
				return chat.Suspend(run)
			}
			run()
			return nil
		}
	}
	chat = ui.New(ui.Config{
		In: tty, Out: a.stdout,
		Color:    a.ambient["NO_COLOR"] == "",
		Model:    firstNonEmpty(f.model, a.cfg.Model.Name),
		Provider: firstNonEmpty(f.provider, a.cfg.Model.Provider),
		Dir:      dir,
		Home:     a.ambient["HOME"],
		Sandbox:  a.sandboxStatus(),
		History:  hist,
		Turn: func(ctx context.Context, prompt string) error {
			res, err := agent.RunTurn(ctx, conv.Messages(), strings.TrimSpace(prompt))
			conv.Add(res.Turn, session.CloseDanglingCalls(res.Messages))
			if err == nil && ctx.Err() == nil && agent.NeedsCompaction(&conv, res.Context) {
				out := chat.Printer()
				fmt.Fprintln(out, "The conversation is near the model's context window ([compaction] in config.toml); compacting…")
				a.chatSessionCommand(ctx, out, agent, &conv, "/compact", "", false)
				out.Close()
			}
			return err
		},
		Clear: func() { conv = transcript.Conversation{} },
		Commands: []ui.Command{
			{Name: "/compact", Args: "[N]", Help: "replace older turns by a summary the model writes (keep the last N verbatim)", Run: sessionCommand("/compact")},
			{Name: "/resume", Args: "[ID]", Help: "switch to an earlier session of this project (a picker without ID)", Run: sessionCommand("/resume")},
		},
		SetModel: func(name string) error {
			mf := f
			mf.model = name
			sm := sessionModel(mf)
			sm.Notice = chat.Notice
			lv, err := a.openVault()
			if err != nil {
				return err
			}
			p, err := session.NewProvider(a.cfg.Model, sm, lv, a.httpClient())
			if err != nil {
				return err
			}
			agent.Provider = p
			return nil
		},
		Tools:        func() []ui.ToolInfo { return a.toolInfo(agent) },
		Instructions: func() string { return a.instructions },
	})
	prompter := chat.Host(&wizard.Prompter{In: tty, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""})
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, prompter: prompter, events: chat, resume: resumed})
	if err != nil {
		return err
	}
	defer closeFn()
	intro := []string{}
	if a.instructions != "" {
		intro = append(intro, a.instructions)
	}
	if resumed != nil {
		intro = append(intro, session.ResumeNote(resumed))
	}
	intro = append(intro, fmt.Sprintf("Session %s (/resume picks another, /compact summarizes older turns).", agent.Session))
	chat.SetIntro(strings.Join(intro, "\n"))
	// The permission form's colours suit the terminal's background.
	a.resolveBackground()

	stoppedBy, err := chat.RunStoppable(session.StopSignals, 5*time.Second) // the running tool is stopped first
	switch {
	case stoppedBy != nil:
		return signalExit(stoppedBy) // 129 or 143; closeFn stops what is left
	case errors.Is(err, ui.ErrInterrupted):
		return nil
	}
	return err
}

// sandboxStatus is what the status line says about host tools (session.SandboxWord).
func (a *app) sandboxStatus() string { return session.SandboxWord() }

// toolInfo lists the offered tools for /tools (session.Tools).
func (a *app) toolInfo(agent *executor.Agent) []ui.ToolInfo {
	var out []ui.ToolInfo
	for _, t := range session.Tools(a.cfg, a.dirs.Config, agent) {
		out = append(out, ui.ToolInfo{Name: t.Name, Description: t.Description, Sandbox: t.Sandbox, Secrets: t.Secrets})
	}
	return out
}

// plainChat is the line-by-line chat: for scripts, screen readers and
// terminals that cannot draw the UI.
func (a *app) plainChat(f modelFlags, resumed *transcript.Session) error {
	var prompter executor.Prompter
	interactive := false
	if tty := a.stdinTerminal(); tty != nil {
		interactive = true
		a.resolveBackground()
		prompter = &wizard.Prompter{In: a.stdin, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""}
	}
	events := ui.NewRunView(a.stdout)
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, prompter: prompter, events: events, resume: resumed})
	if err != nil {
		return err
	}
	defer closeFn()
	var conv transcript.Conversation
	if resumed != nil {
		conv = resumed.Conversation
	}
	fmt.Fprintf(a.stdout, "hush chat — %s. Tools get no secret unless you allow it. Ctrl-C stops a turn, Ctrl-D exits.\n", agent.Provider.Name())
	if a.instructions != "" {
		fmt.Fprintln(a.stdout, a.instructions)
	}
	if !interactive {
		fmt.Fprintln(a.stdout, "(input is not a terminal: requests that would be asked are denied)")
	}
	if resumed != nil {
		fmt.Fprintln(a.stdout, session.ResumeNote(resumed))
	}
	fmt.Fprintf(a.stdout, "Session %s (/resume picks another, /compact summarizes older turns).\n", agent.Session)

	return ui.Plain{In: a.stdin, Out: a.stdout, Agent: agent, Conv: &conv, Redact: a.redact, Repair: session.CloseDanglingCalls,
		Command: func(ctx context.Context, out io.Writer, cmd, arg string) {
			a.chatSessionCommand(ctx, out, agent, &conv, cmd, arg, interactive)
		},
		Signals: session.StopSignals,
		// The terminal closed, or hush was told to stop: the turn has
		// ended as Ctrl-C ends it; stop background processes and MCP
		// servers, then exit 129 / 143.
		Stop: func(s os.Signal) { closeFn(); exitNow(signalExit(s).code) },
	}.Run()
}

// unknownCommand is the error for `hush frobnicate`.
func unknownCommand(name string) error {
	return &exitError{exitUsage, fmt.Errorf("unknown command %q (see hush --help)", name)}
}
