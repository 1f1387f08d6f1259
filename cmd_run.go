package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

func modelFlagList() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "provider", Usage: "model provider: openai (any OpenAI-compatible server), anthropic, or replay"},
		&cli.StringFlag{Name: "base-url", Usage: "provider base URL, e.g. http://127.0.0.1:11434/v1 for a local server (no API key needed)"},
		&cli.StringFlag{Name: "model", Usage: "model name"},
		&cli.StringFlag{Name: "replay", Usage: "replay `FILE` with scripted model turns (with --provider replay; default: the embedded leak check)"},
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "approve tool runs (tool.run:*) that would be asked; never approves reading a secret"},
	}
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

func readModelFlags(c *cli.Context) modelFlags {
	return modelFlags{provider: c.String("provider"), baseURL: c.String("base-url"), model: c.String("model"),
		replay: c.String("replay"), yes: c.Bool("yes"), json: c.Bool("json")}
}

func (a *app) runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one agent turn non-interactively and exit",
		ArgsUsage: "PROMPT (or - to read it from stdin)",
		Description: "Runs one turn: the model answers and calls tools until it is done. Nothing is asked:\n" +
			"a gate request no rule in config.toml decides is denied, with the rule to add.\n" +
			"With --json it prints the event stream documented in docs/events.schema.json.\n\n" +
			"Exit status: 0 done, 1 model or internal failure, 2 usage error,\n" +
			"3 the turn ended with a denied tool run or secret, 130 interrupted.",
		Flags: append(modelFlagList(), &cli.BoolFlag{Name: "json", Usage: "print the event stream as JSON lines (version 1, docs/events.schema.json)"},
			&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "add this turn to the latest session of this project"}),
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &exitError{exitUsage, fmt.Errorf("%w (see hush run --help)", err)}
		},
		Action: func(c *cli.Context) error {
			err := a.runAction(c)
			var ee *exitError
			if c.Bool("json") && errors.As(err, &ee) && ee.code == 2 {
				events.New(a.stdout).Error(events.KindUsage, err.Error())
			}
			return err
		},
	}
}

func (a *app) runAction(c *cli.Context) error {
	// urfave/cli stops reading flags at the prompt, so a flag typed
	// after it would silently become part of the prompt.
	for i, arg := range c.Args().Slice() {
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if i > 0 && strings.HasPrefix(arg, "-") && hasFlag(c.Command.Flags, name) {
			return &exitError{exitUsage, fmt.Errorf("flag %s comes after the prompt; put flags first: hush run %s \"...\"", arg, arg)}
		}
	}
	prompt := strings.Join(c.Args().Slice(), " ")
	if prompt == "-" {
		b, err := io.ReadAll(io.LimitReader(a.stdin, 1<<20))
		if err != nil {
			return err
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return &exitError{exitUsage, errors.New("run needs a prompt: hush run \"what does this project do?\"")}
	}
	return a.runOnce(readModelFlags(c), prompt, resumeRequest{cont: c.Bool("continue")})
}

func (a *app) runOnce(f modelFlags, prompt string, rr resumeRequest) error {
	var sink executor.Events
	var stream *events.Writer
	if f.json {
		stream = events.New(a.stdout)
		sink = stream
	} else {
		term := newTermEvents(a.stdout)
		// A one-shot run is read afterwards (often in CI logs): show more.
		term.previewLines = 60
		sink = term
	}
	var resumed *transcript.Session
	if rr.any() {
		s, err := a.findSession(rr, false)
		if err != nil {
			return runFailed(stream, events.KindConfig, err)
		}
		resumed = s
	}
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, events: sink, resume: resumed})
	if err != nil {
		return runFailed(stream, events.KindConfig, err)
	}
	defer closeFn()
	var conv transcript.Conversation
	if resumed != nil {
		conv = resumed.Conversation
		if stream == nil {
			fmt.Fprintln(a.stderr, "hush: "+resumeNote(resumed))
		}
	}
	if stream != nil {
		info := a.sessionInfo(agent, f)
		if resumed != nil {
			info.Resumed, info.Turns = true, resumed.Completed
		}
		stream.SessionStarted(info)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if agent.NeedsCompaction(&conv, 0) {
		c, err := agent.Compact(ctx, &conv, 0)
		if err != nil {
			return runFailed(stream, events.KindModel, err)
		}
		if stream != nil {
			stream.Compacted(c.Through, c.Summarized, c.Kept, c.Summary)
		} else {
			fmt.Fprintln(a.stderr, "hush: "+compactNote(c))
		}
	}
	res, err := agent.RunTurn(ctx, conv.Messages(), strings.TrimSpace(prompt))
	if !f.json {
		fmt.Fprintln(a.stdout)
	}
	switch {
	case ctx.Err() != nil:
		return runFailed(stream, events.KindInterrupted, &exitError{exitInterrupted, errors.New("interrupted; the running tool was stopped")})
	case errors.Is(err, executor.ErrModel):
		return runFailed(stream, events.KindModel, err)
	case errors.Is(err, executor.ErrMaxSteps):
		return runFailed(stream, events.KindMaxSteps, err)
	case err != nil:
		return runFailed(stream, events.KindInternal, err)
	case len(res.Denied) > 0:
		return runFailed(stream, events.KindDenied, &exitError{exitDenied, fmt.Errorf("the turn ended with %d denied request(s) (%s); "+
			"the tool result says which rule in config.toml would allow each", len(res.Denied), strings.Join(res.Denied, ", "))})
	}
	return nil
}

// runFailed reports err as the stream's last event (if there is a stream)
// and returns it with the exit code its kind has (docs/events.schema.json).
func runFailed(stream *events.Writer, kind string, err error) error {
	var ee *exitError
	if !errors.As(err, &ee) {
		ee = &exitError{exitFailure, err}
	}
	if ee.code == 130 {
		kind = events.KindInterrupted
	}
	if stream != nil {
		stream.Error(kind, err.Error())
	}
	return ee
}

// sessionInfo is the stream's session.started.
func (a *app) sessionInfo(agent *executor.Agent, f modelFlags) events.Session {
	var names []string
	for _, t := range agent.Tools.List() {
		names = append(names, t.Name())
	}
	sandbox := events.Sandbox{State: "off", Detail: "host tools run in their own session and process group, without namespaces"}
	if st := tools.SandboxStatus(); st.Namespaces {
		sandbox = events.Sandbox{State: "namespaces", Detail: fmt.Sprintf("own user, PID and mount namespaces per host tool; Landlock ABI %d", st.LandlockABI)}
	} else if st.Reason != "" {
		sandbox.Detail = st.Reason
	}
	return events.Session{
		ID:         agent.Session,
		Model:      events.Model{Provider: agent.Provider.Name(), Name: a.modelName(f)},
		Directory:  agent.Dir,
		Sandbox:    sandbox,
		Tools:      names,
		Transcript: a.transcriptPath(agent.Session),
	}
}

func (a *app) chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "chat with the agent in the terminal (the default command)",
		Description: "Type a request and press Enter. The model's text streams in; each tool call is shown\n" +
			"with its arguments and a preview of its output. When a tool wants to run or read a\n" +
			"secret and no rule in config.toml decides, you are asked.\n" +
			"Ctrl-C stops the running turn (and kills the tool's processes); Ctrl-D exits.",
		ArgsUsage: "[--continue | --resume [ID]]",
		Flags: append(modelFlagList(),
			&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "resume the latest session of this project"},
			&cli.BoolFlag{Name: "resume", Aliases: []string{"r"}, Usage: "resume the session `ID` given after the flags, or pick one"}),
		Action: func(c *cli.Context) error {
			rr := resumeRequest{cont: c.Bool("continue"), resume: c.Bool("resume"), id: c.Args().First()}
			if c.Args().Len() > 1 || (c.Args().Len() == 1 && !rr.resume) {
				return &exitError{2, fmt.Errorf("chat takes no arguments but a session id after --resume (got %q); to run one prompt use hush run", strings.Join(c.Args().Slice(), " "))}
			}
			if rr.cont && rr.resume {
				return &exitError{2, errors.New("--continue and --resume both pick a session: use one")}
			}
			return a.chat(readModelFlags(c), rr)
		},
	}
}

func (a *app) chat(f modelFlags, rr resumeRequest) error {
	var prompter executor.Prompter
	interactive := false
	if file, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		interactive = true
		a.resolveBackground()
		prompter = &wizard.Prompter{In: a.stdin, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""}
	}
	// First run: nothing configured and a person at the terminal.
	if err := a.firstRun(f); err != nil {
		return err
	}
	var resumed *transcript.Session
	if rr.any() {
		s, err := a.findSession(rr, interactive)
		if err != nil {
			return err
		}
		resumed = s
	}
	events := newTermEvents(a.stdout)
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
		fmt.Fprintln(a.stdout, resumeNote(resumed))
	}
	fmt.Fprintf(a.stdout, "Session %s (/resume picks another, /compact summarizes older turns).\n", agent.Session)

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
					exitNow(exitTerminated)
				}
				fmt.Fprint(a.stdout, "\n(Ctrl-D to exit)\n› ")
			}
		}
	}()
	defer close(quit)

	in := bufio.NewReader(a.stdin)
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
		if cmd, arg, _ := strings.Cut(line, " "); cmd == "/resume" || cmd == "/compact" {
			a.chatSessionCommand(ctx, agent, &conv, cmd, strings.TrimSpace(arg), interactive)
			mu.Lock()
			cancelTurn = nil
			mu.Unlock()
			cancel()
			continue
		}
		res, err := agent.RunTurn(ctx, conv.Messages(), strings.TrimSpace(line))
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		conv.Add(res.Turn, closeDanglingCalls(res.Messages))
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(a.stdout, "\n(turn cancelled; the tool's processes were stopped)")
		case err != nil:
			fmt.Fprintf(a.stdout, "\nhush: %s\n", outbuf.Sanitize(a.redact(err.Error())))
		default:
			fmt.Fprintln(a.stdout)
			if agent.NeedsCompaction(&conv, res.Context) {
				fmt.Fprintln(a.stdout, "The conversation is near the model's context window ([compaction] in config.toml); compacting…")
				a.chatSessionCommand(ctx, agent, &conv, "/compact", "", interactive)
			}
		}
		cancel()
	}
}

// chatSessionCommand runs /resume [ID] and /compact [N] in chat.
func (a *app) chatSessionCommand(ctx context.Context, agent *executor.Agent, conv *transcript.Conversation, cmd, arg string, interactive bool) {
	switch cmd {
	case "/compact":
		keep := 0
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 {
				fmt.Fprintf(a.stdout, "hush: /compact takes the number of latest turns to keep verbatim, e.g. /compact 2 (got %q)\n", arg)
				return
			}
			keep = n
		}
		c, err := agent.Compact(ctx, conv, keep)
		if err != nil {
			fmt.Fprintf(a.stdout, "hush: %s\n", err)
			return
		}
		fmt.Fprintln(a.stdout, compactNote(c))
		fmt.Fprintln(a.stdout, "  │ "+strings.ReplaceAll(outbuf.Sanitize(c.Summary), "\n", "\n  │ "))
	case "/resume":
		s, err := a.findSession(resumeRequest{resume: true, id: arg}, interactive)
		if err != nil {
			fmt.Fprintf(a.stdout, "hush: %s\n", err)
			return
		}
		f, err := transcript.Reopen(s)
		if err != nil {
			fmt.Fprintf(a.stdout, "hush: %s\n", err)
			return
		}
		old := agent.SwitchSession(s.ID, f, s.LastTurn)
		if c, ok := old.(io.Closer); ok {
			_ = c.Close()
		}
		*conv = s.Conversation
		fmt.Fprintln(a.stdout, resumeNote(s))
	}
}

// compactNote says what a compaction did.
func compactNote(c executor.Compacted) string {
	return fmt.Sprintf("Compacted: %s now a summary made by the model (stored in the transcript); the last %d turn(s) stay verbatim.", turnRange(c.Through), c.Kept)
}

// turnRange names turns 1..n.
func turnRange(n int) string {
	if n == 1 {
		return "turn 1 is"
	}
	return fmt.Sprintf("turns 1–%d are", n)
}

// closeDanglingCalls answers tool calls a cancelled turn left open, so the
// next request to the model is well-formed.
func closeDanglingCalls(h []provider.Message) []provider.Message {
	answered := map[string]bool{}
	for _, m := range h {
		if m.Role == provider.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var out []provider.Message
	for _, m := range h {
		out = append(out, m)
		if m.Role == provider.RoleAssistant {
			for _, c := range m.ToolCalls {
				if !answered[c.ID] {
					out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, Text: "cancelled by the user", IsError: true})
				}
			}
		}
	}
	return out
}
