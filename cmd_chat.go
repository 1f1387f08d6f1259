package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/dockerbash"
	"github.com/hushcli/hush/ui"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

func plainFlag() cli.Flag {
	return &cli.BoolFlag{Name: "plain", Usage: "line-by-line chat without the editor, colours or status line (scripts, screen readers)"}
}

func (a *app) chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "chat with the agent in the terminal (the default command)",
		Description: "Type a request and press Enter (Alt-Enter adds a line). The model's text streams in as\n" +
			"Markdown; each tool call is shown with its arguments and a preview of its output. When a\n" +
			"tool wants to run or read a secret and no rule in config.toml decides, you are asked.\n" +
			"Slash commands (/help, /clear, /model, /tools, /usage, /exit) are answered by hush.\n" +
			"Ctrl-C stops the running turn (and kills the tool's processes); pressed twice at an\n" +
			"empty prompt, or Ctrl-D, exits. With --plain, or input that is not a terminal, chat\n" +
			"reads plain lines and prints plain text.",
		Flags:  append(modelFlagList(), plainFlag()),
		Action: a.chatAction,
	}
}

// chatAction is chat's action, also the root command's: the model flags
// work as `hush --model x` as well as `hush chat --model x`.
func (a *app) chatAction(c *cli.Context) error {
	if c.Args().Present() {
		return unknownCommand(c.Args().First())
	}
	f := readModelFlags(c)
	f.plain = c.Bool("plain")
	return a.chat(f)
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

func (a *app) chat(f modelFlags) error {
	// First run: nothing configured and a person at the terminal.
	if err := a.firstRun(f); err != nil {
		return err
	}
	if tty := a.chatTerminal(f); tty != nil {
		return a.terminalChat(f, tty)
	}
	return a.plainChat(f)
}

// terminalChat runs the chat UI (package ui) on tty.
func (a *app) terminalChat(f modelFlags, tty *os.File) error {
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
		agent   *executor.Agent
		chat    *ui.Chat
		history []provider.Message
	)
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
			added, err := runTurn(ctx, agent, history, prompt)
			history = append(history, added...)
			if ctx.Err() != nil || err != nil {
				history = closeDanglingCalls(history)
			}
			return err
		},
		Clear: func() { history = nil },
		SetModel: func(name string) error {
			mf := f
			mf.model = name
			p, err := a.newProvider(mf, chat.Notice)
			if err != nil {
				return err
			}
			agent.Provider = p
			return nil
		},
		Tools: func() []ui.ToolInfo { return a.toolInfo(agent) },
	})
	prompter := chat.Host(&wizard.Prompter{In: tty, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""})
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, prompter: prompter, events: chat})
	if err != nil {
		return err
	}
	defer closeFn()
	chat.SetIntro(a.instructions)
	// The permission form's colours suit the terminal's background.
	a.resolveBackground()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var terminated sync.Once
	termed := false
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				terminated.Do(func() { termed = true })
				chat.Stop()
				return
			}
			chat.Interrupt()
		}
	}()
	err = chat.Run()
	terminated.Do(func() {})
	switch {
	case termed:
		return &exitError{143, errors.New("terminated; the running tool was stopped")}
	case errors.Is(err, ui.ErrInterrupted):
		return nil
	}
	return err
}

// sandboxStatus is what the status line says about how host tools run:
// "on" when the kernel gave the sandbox its namespaces, else "off".
func (a *app) sandboxStatus() string {
	if tools.SandboxStatus().Namespaces {
		return "on"
	}
	return "off"
}

// toolInfo lists the offered tools for /tools.
func (a *app) toolInfo(agent *executor.Agent) []ui.ToolInfo {
	var out []ui.ToolInfo
	for _, t := range agent.Tools.List() {
		name := t.Name()
		info := ui.ToolInfo{Name: name, Description: t.Description(), Sandbox: "runs on this machine, sandbox " + a.sandboxStatus()}
		subject := name
		if server, _, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__"); ok && strings.HasPrefix(name, "mcp__") {
			subject = "mcp:" + server
		}
		if name == dockerbash.Name {
			info.Sandbox = "runs in a container"
		}
		if p, env, err := a.policyFor(subject); err == nil {
			info.Secrets = append(info.Secrets, p.Secrets...)
			for k, v := range env {
				if strings.Contains(v, "${") {
					info.Secrets = append(info.Secrets, k)
				}
			}
		}
		out = append(out, info)
	}
	return out
}

// plainChat is the line-by-line chat: for scripts, screen readers and
// terminals that cannot draw the UI.
func (a *app) plainChat(f modelFlags) error {
	var prompter executor.Prompter
	interactive := false
	if tty := a.stdinTerminal(); tty != nil {
		interactive = true
		a.resolveBackground()
		prompter = &wizard.Prompter{In: a.stdin, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""}
	}
	events := newTermEvents(a.stdout)
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, prompter: prompter, events: events})
	if err != nil {
		return err
	}
	defer closeFn()
	fmt.Fprintf(a.stdout, "hush chat — %s. Tools get no secret unless you allow it. Ctrl-C stops a turn, Ctrl-D exits.\n", agent.Provider.Name())
	if a.instructions != "" {
		fmt.Fprintln(a.stdout, a.instructions)
	}
	if !interactive {
		fmt.Fprintln(a.stdout, "(input is not a terminal: requests that would be asked are denied)")
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				return
			case s := <-sigs:
				mu.Lock()
				c := cancelTurn
				mu.Unlock()
				if c != nil {
					c()
					continue
				}
				if s == syscall.SIGTERM {
					// Stop background processes and MCP servers first:
					// the kernel's parent-death signal reaches only
					// direct children.
					closeFn()
					os.Exit(143)
				}
				fmt.Fprint(a.stdout, "\n(Ctrl-D to exit)\n› ")
			}
		}
	}()
	defer close(quit)

	in := bufio.NewReader(a.stdin)
	var history []provider.Message
	for {
		fmt.Fprint(a.stdout, "› ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(a.stdout)
			return nil // Ctrl-D or end of input
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line == "/exit" || line == "/quit" {
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		cancelTurn = cancel
		mu.Unlock()
		added, err := runTurn(ctx, agent, history, line)
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		history = append(history, added...)
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(a.stdout, "\n(turn cancelled; the tool's processes were stopped)")
			history = closeDanglingCalls(history)
		case err != nil:
			fmt.Fprintf(a.stdout, "\nhush: %s\n", err)
			history = closeDanglingCalls(history)
		default:
			fmt.Fprintln(a.stdout)
		}
		cancel()
	}
}

// unknownCommand is the error for `hush frobnicate`.
func unknownCommand(name string) error {
	return &exitError{2, fmt.Errorf("unknown command %q (see hush --help)", name)}
}
