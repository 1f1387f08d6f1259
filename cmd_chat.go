package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/files"
	"github.com/hushcli/hush/ui"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
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

// chatOptions is `hush chat`, and hush with no command.
type chatOptions struct {
	Out io.Writer
	// Model is the model flags, --plain among them.
	Model  modelFlags
	Resume resumeRequest
	// Interactive says stdin is a terminal: a person to ask.
	Interactive bool
	// UI is the terminal the chat UI draws on (stdin and stdout both
	// terminals, TERM not dumb, no --plain); nil chats line by line.
	UI *os.File
	// Config is the factory's configuration; Setup asks the setup
	// questions (a first run: no model configured, a person to ask).
	Config func() (loaded, error)
	Setup  func() error
	// Find resolves the session to resume, asking when interactive.
	Find func(rr resumeRequest, interactive bool) (*transcript.Session, error)
	// Chat is the chat with model m, continuing resumed if set.
	Chat func(m session.Model, resumed *transcript.Session, rr resumeRequest) (chatLoop, error)
	// Exit ends hush at once with code: the line-by-line chat told to
	// stop while it waits for a line.
	Exit func(code int)
}

func newChatCmd(f *app, runF func(*chatOptions) error) *cli.Command {
	if runF == nil {
		runF = runChat
	}
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
		Action:    func(c *cli.Context) error { return chatAction(c, f, runF, false) },
	}
}

// chatAction reads chat's command line into its options; it is also the
// root command's (root), where a word that is not a command is one
// mistyped. The model flags work as `hush --model x` as well as `hush chat
// --model x`.
func chatAction(c *cli.Context, f *app, runF func(*chatOptions) error, root bool) error {
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
	m := readModelFlags(c)
	m.plain = c.Bool("plain")
	return runF(chatOpts(f, m, rr))
}

// chatOpts are chat's options on f.
func chatOpts(f *app, m modelFlags, rr resumeRequest) *chatOptions {
	return &chatOptions{Out: f.Stdout, Model: m, Resume: rr, Interactive: f.Terminal() != nil, UI: chatTerminal(f, m.plain),
		Config: f.loadConfig,
		Setup:  func() error { return runSetup(setupOpts(f, context.Background(), false)) },
		Find:   f.FindSession,
		Chat:   f.Chat,
		Exit:   exitNow,
	}
}

// chatTerminal is the terminal the chat UI draws on: stdin and stdout both
// terminals, TERM not dumb, --plain not given.
func chatTerminal(f *app, plain bool) *os.File {
	in := f.Terminal()
	out, ok := f.Stdout.(*os.File)
	if plain || in == nil || !ok || !term.IsTerminal(int(out.Fd())) || f.Ambient["TERM"] == "dumb" {
		return nil
	}
	return in
}

// runChat runs the chat: setup first on a first run, then the chat UI on
// opts.UI (chatLoop.Terminal), or line by line (chatLoop.Plain).
func runChat(opts *chatOptions) error {
	if err := firstRun(opts); err != nil {
		return err
	}
	var resumed *transcript.Session
	if opts.Resume.Any() {
		s, err := opts.Find(opts.Resume, opts.Interactive)
		if err != nil {
			return err
		}
		resumed = s
	}
	c, err := opts.Chat(sessionModel(opts.Model), resumed, opts.Resume)
	if err != nil {
		return err
	}
	if opts.UI != nil {
		stoppedBy, err := c.Terminal(opts.UI)
		if stoppedBy != nil {
			return signalExit(stoppedBy) // 129 or 143
		}
		return err
	}
	// The terminal closed, or hush was told to stop: exit 129 / 143.
	return c.Plain(opts.Interactive, func(s os.Signal) { opts.Exit(signalExit(s).code) })
}

// firstRun runs setup when `hush chat` starts at a terminal with no model
// configured (no --provider, no [model] provider in config.toml). What
// setup chose reaches the session through the factory's config, in memory.
func firstRun(opts *chatOptions) error {
	if opts.Model.provider != "" {
		return nil
	}
	l, err := opts.Config()
	if err != nil {
		return err
	}
	if l.Config.Model.Provider != "" || !opts.Interactive {
		return nil // without a terminal, newProvider's error says to run `hush setup`
	}
	fmt.Fprintln(opts.Out, "hush is not set up yet: a few questions first (run `hush setup` any time to change an answer).")
	return opts.Setup()
}

// unknownCommand is the error for `hush frobnicate`.
func unknownCommand(name string) error {
	return &exitError{exitUsage, fmt.Errorf("unknown command %q (see hush --help)", name)}
}

// Chat is what `hush chat` needs to run a chat session, in the terminal
// UI (Terminal) or line by line (Plain). The command that starts it
// (package main) supplies the streams, the loaded config and how to open
// the agent.
type chatLoop struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Ambient map[string]string
	Config  config.Config
	Dirs    config.Dirs
	// Dir is the project directory.
	Dir   string
	Model session.Model
	// Resumed, if set, is the session to continue.
	Resumed *transcript.Session
	// Redact scrubs secrets from text before it is shown or kept.
	Redact func(string) string
	// Start opens the agent with the prompter (nil: non-interactive) and
	// the event sink; the returned func closes it.
	Start func(prompter executor.Prompter, events executor.Events) (*executor.Agent, func(), error)
	// Instructions is the loaded-instructions line, once Start returned.
	Instructions func() string
	// Find resolves /resume's session id ("" picks, when interactive).
	Find func(id string, interactive bool) (*transcript.Session, error)
	// Vault is the opened vault /model's provider reads its key from.
	Vault func() (*vault.Layered, error)
	// ResolveBackground asks the terminal for its background colour before
	// a form is drawn.
	ResolveBackground func()
}

// command runs /resume [ID] and /compact [N] (Command).
func (c chatLoop) command(ctx context.Context, out io.Writer, agent *executor.Agent, conv *transcript.Conversation, cmd, arg string, interactive bool) {
	session.Command(ctx, out, agent, conv, cmd, arg, func(id string) (*transcript.Session, error) { return c.Find(id, interactive) })
}

func (c chatLoop) instructions() string {
	if c.Instructions == nil {
		return ""
	}
	return c.Instructions()
}

// toolInfo lists the offered tools for /tools (Tools).
func (c chatLoop) toolInfo(agent *executor.Agent) []ui.ToolInfo {
	var out []ui.ToolInfo
	for _, t := range session.Tools(c.Config, c.Dirs.Config, agent) {
		out = append(out, ui.ToolInfo{Name: t.Name, Description: t.Description, Sandbox: t.Sandbox, Secrets: t.Secrets})
	}
	return out
}

// Terminal runs the chat UI (package ui) on tty. A stop signal other than
// Ctrl-C ends it: that signal is returned, with the running tool stopped.
func (c chatLoop) Terminal(tty *os.File) (os.Signal, error) {
	hist := &ui.History{Path: filepath.Join(c.Dirs.Data, "history.jsonl"), Redact: c.Redact}
	if err := hist.Load(); err != nil {
		fmt.Fprintf(c.Stderr, "hush: warning: %v\n", err)
	}
	var (
		agent *executor.Agent
		chat  *ui.Chat
		conv  transcript.Conversation
	)
	if c.Resumed != nil {
		conv = c.Resumed.Conversation
	}
	// @path reads follow the file tools' mask list, built once when first
	// needed.
	masks := sync.OnceValues(func() (*sandbox.MaskSet, error) { return session.MaskSet(c.Config, c.Dirs, c.Ambient, c.Dir) })
	// /resume and /compact: the session's commands, shared with Plain.
	sessionCommand := func(name string) func(ctx context.Context, arg string, out io.Writer) error {
		return func(ctx context.Context, arg string, out io.Writer) error {
			run := func() { c.command(ctx, out, agent, &conv, name, arg, arg == "") }
			before := agent.Session
			var err error
			if name == "/resume" && arg == "" {
				// The picker is a form: it gets the terminal.
				err = chat.Suspend(run)
			} else {
				run()
			}
			if name == "/resume" && agent.Session != before {
				chat.Replay(conv.Messages()) // the resumed conversation, then the prompt
			}
			return err
		}
	}
	chat = ui.New(ui.Config{
		In: tty, Out: c.Stdout,
		Color:    c.Ambient["NO_COLOR"] == "",
		Model:    session.ModelName(c.Config, c.Model),
		Provider: cmp.Or(c.Model.Provider, c.Config.Model.Provider),
		Dir:      c.Dir,
		Home:     c.Ambient["HOME"],
		Sandbox:  session.SandboxWord(),
		History:  hist,
		Turn: func(ctx context.Context, prompt string) error {
			res, err := agent.RunTurn(ctx, conv.Messages(), strings.TrimSpace(prompt))
			conv.Add(res.Turn, res.Messages)
			if err == nil && ctx.Err() == nil && agent.NeedsCompaction(&conv, res.Context) {
				out := chat.Printer()
				fmt.Fprintln(out, "The conversation is near the model's context window ([compaction] in config.toml); compacting…")
				c.command(ctx, out, agent, &conv, "/compact", "", false)
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
			sm := c.Model
			sm.Name = name
			sm.Notice = chat.Notice
			lv, err := c.Vault()
			if err != nil {
				return err
			}
			p, err := session.NewProvider(c.Config.Model, sm, lv, session.HTTPClient(c.Ambient))
			if err != nil {
				return err
			}
			agent.Provider = p
			return nil
		},
		ListModels: func(ctx context.Context) ([]string, error) {
			l, ok := agent.Provider.(provider.Lister)
			if !ok {
				return nil, fmt.Errorf("the %s provider lists no models: /model NAME switches", agent.Provider.Name())
			}
			return l.Models(ctx)
		},
		PickModel: func(ctx context.Context, models []string, current string) (string, error) {
			opts := make([]wizard.SessionOption, 0, len(models))
			for _, m := range models {
				opts = append(opts, wizard.SessionOption{ID: m, Label: m})
			}
			return wizard.Pick(ctx, tty, c.Stdout, c.Ambient["ACCESSIBLE"] != "", "Use which model? (type to filter, Esc keeps "+current+")", opts, current)
		},
		Files: func(ctx context.Context) ([]string, error) {
			ms, err := masks()
			if err != nil {
				return nil, err
			}
			return files.ProjectFiles(ctx, ms.MaskedResolved, c.Dir, 50000)
		},
		Attach: func(p string) (string, error) {
			ms, err := masks()
			if err != nil {
				return "", err
			}
			text, err := files.Attach(ms.Masked, c.Dir, p)
			if err != nil {
				return "", err
			}
			return c.Redact(text), nil
		},
		Editor: func(file string) (*exec.Cmd, error) {
			return c.editor(tty, file)
		},
		Tools:        func() []ui.ToolInfo { return c.toolInfo(agent) },
		Instructions: c.instructions,
		Redact:       c.Redact,
		LineForms:    c.Ambient["ACCESSIBLE"] != "",
	})
	prompter := chat.Host(&wizard.Prompter{In: tty, Out: c.Stdout, Accessible: c.Ambient["ACCESSIBLE"] != "", NoColor: c.Ambient["NO_COLOR"] != ""})
	agent, closeFn, err := c.Start(prompter, chat)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	intro := []string{}
	if ins := c.instructions(); ins != "" {
		intro = append(intro, ins)
	}
	if c.Resumed != nil {
		intro = append(intro, session.ResumeNote(c.Resumed))
		chat.SetConversation(conv.Messages())
	}
	intro = append(intro, fmt.Sprintf("Session %s (/resume picks another, /compact summarizes older turns).", agent.Session))
	chat.SetIntro(strings.Join(intro, "\n"))
	// The permission form's colours suit the terminal's background.
	c.ResolveBackground()

	stoppedBy, err := chat.RunStoppable(session.StopSignals, 5*time.Second) // the running tool is stopped first
	switch {
	case stoppedBy != nil:
		return stoppedBy, nil // closeFn stops what is left
	case errors.Is(err, ui.ErrInterrupted):
		return nil, nil
	}
	return nil, err
}

// Plain is the line-by-line chat: for scripts, screen readers and
// terminals that cannot draw the UI. interactive says stdin is a terminal
// to ask permission questions on. On SIGHUP or SIGTERM the running turn
// ends as Ctrl-C ends it, background processes and MCP servers are
// stopped, then exit is called with the signal (it ends hush).
func (c chatLoop) Plain(interactive bool, exit func(os.Signal)) error {
	var prompter executor.Prompter
	if interactive {
		c.ResolveBackground()
		prompter = &wizard.Prompter{In: c.Stdin, Out: c.Stdout, Accessible: c.Ambient["ACCESSIBLE"] != "", NoColor: true}
	}
	events := ui.NewRunView(c.Stdout)
	agent, closeFn, err := c.Start(prompter, events)
	if err != nil {
		return err
	}
	defer closeFn()
	var conv transcript.Conversation
	if c.Resumed != nil {
		conv = c.Resumed.Conversation
	}
	fmt.Fprintf(c.Stdout, "hush chat — %s. Tools get no secret unless you allow it. Ctrl-C stops a turn, Ctrl-D exits.\n", agent.Provider.Name())
	if ins := c.instructions(); ins != "" {
		fmt.Fprintln(c.Stdout, ins)
	}
	if !interactive {
		fmt.Fprintln(c.Stdout, "(input is not a terminal: requests that would be asked are denied)")
	}
	if c.Resumed != nil {
		fmt.Fprintln(c.Stdout, session.ResumeNote(c.Resumed))
	}
	fmt.Fprintf(c.Stdout, "Session %s (/resume picks another, /compact summarizes older turns).\n", agent.Session)

	return ui.Plain{In: c.Stdin, Out: c.Stdout, Agent: agent, Conv: &conv, Redact: c.Redact, Ask: interactive,
		Command: func(ctx context.Context, out io.Writer, cmd, arg string) {
			c.command(ctx, out, agent, &conv, cmd, arg, interactive)
		},
		Signals: session.StopSignals,
		Stop:    func(s os.Signal) { closeFn(); exit(s) },
	}.Run()
}

// editor is Ctrl-G's editor on file: $VISUAL, else $EDITOR, from hush's
// start-up snapshot, in the project dir, with the core allowlist's
// environment and no secret — the user's own action, so it gets the
// terminal, but nothing a tool would not get.
func (c chatLoop) editor(tty *os.File, file string) (*exec.Cmd, error) {
	prog := cmp.Or(c.Ambient["VISUAL"], c.Ambient["EDITOR"])
	var secrets *tools.SecretSet
	if lv, err := c.Vault(); err == nil {
		if all, err := lv.All(); err == nil {
			secrets = tools.NewSecretSet(all)
		}
	}
	env, _, err := tools.BuildEnv(tools.EnvRequest{Ambient: c.Ambient, Policy: tools.Policy{Scope: []string{}}, Secrets: secrets})
	if err != nil {
		return nil, err
	}
	return tools.EditorCommand(tools.EditorSpec{Command: prog, File: file, Dir: c.Dir, Env: env, TTY: tty})
}
