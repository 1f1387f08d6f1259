package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/provider"
	"github.com/urfave/cli/v2"
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
		Flags: append(modelFlagList(), &cli.BoolFlag{Name: "json", Usage: "print the event stream as JSON lines (version 1, docs/events.schema.json)"}),
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &exitError{2, fmt.Errorf("%w (see hush run --help)", err)}
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
			return &exitError{2, fmt.Errorf("flag %s comes after the prompt; put flags first: hush run %s \"...\"", arg, arg)}
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
		return &exitError{2, errors.New("run needs a prompt: hush run \"what does this project do?\"")}
	}
	return a.runOnce(readModelFlags(c), prompt)
}

func (a *app) runOnce(f modelFlags, prompt string) error {
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
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, events: sink})
	if err != nil {
		return runFailed(stream, events.KindConfig, err)
	}
	defer closeFn()
	if stream != nil {
		stream.SessionStarted(a.sessionInfo(agent, f))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := agent.RunTurn(ctx, nil, strings.TrimSpace(prompt))
	if !f.json {
		fmt.Fprintln(a.stdout)
	}
	switch {
	case ctx.Err() != nil:
		return runFailed(stream, events.KindInterrupted, &exitError{130, errors.New("interrupted; the running tool was stopped")})
	case errors.Is(err, executor.ErrModel):
		return runFailed(stream, events.KindModel, err)
	case errors.Is(err, executor.ErrMaxSteps):
		return runFailed(stream, events.KindMaxSteps, err)
	case err != nil:
		return runFailed(stream, events.KindInternal, err)
	case len(res.Denied) > 0:
		return runFailed(stream, events.KindDenied, &exitError{3, fmt.Errorf("the turn ended with %d denied request(s) (%s); "+
			"the tool result says which rule in config.toml would allow each", len(res.Denied), strings.Join(res.Denied, ", "))})
	}
	return nil
}

// runFailed reports err as the stream's last event (if there is a stream)
// and returns it with the exit code its kind has (docs/events.schema.json).
func runFailed(stream *events.Writer, kind string, err error) error {
	var ee *exitError
	if !errors.As(err, &ee) {
		ee = &exitError{1, err}
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
	model := firstNonEmpty(f.model, a.cfg.Model.Name)
	if agent.Provider.Name() == "replay" {
		model = firstNonEmpty(f.replay, a.cfg.Model.Replay, "embedded leak check")
	}
	return events.Session{
		ID:         agent.Session,
		Model:      events.Model{Provider: agent.Provider.Name(), Name: model},
		Directory:  agent.Dir,
		Sandbox:    events.Sandbox{State: "off", Detail: "host tools run in their own session and process group, without namespaces"},
		Tools:      names,
		Transcript: a.transcriptPath(agent.Session),
	}
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
