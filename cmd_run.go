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
			"Exit status: 0 done, 1 error, 130 interrupted.",
		Flags: append(modelFlagList(), &cli.BoolFlag{Name: "json", Usage: "print events as JSON lines"}),
		Action: func(c *cli.Context) error {
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
		},
	}
}

func (a *app) runOnce(f modelFlags, prompt string) error {
	term := newTermEvents(a.stdout)
	// A one-shot run is read afterwards (often in CI logs): show more.
	term.previewLines = 60
	var events executor.Events = term
	if f.json {
		events = newJSONEvents(a.stdout)
	}
	agent, closeFn, err := a.newAgent(sessionOptions{model: f, events: events})
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = runTurn(ctx, agent, nil, prompt)
	if !f.json {
		fmt.Fprintln(a.stdout)
	}
	if ctx.Err() != nil {
		return &exitError{130, errors.New("interrupted; the running tool was stopped")}
	}
	if err != nil {
		if f.json {
			newJSONEvents(a.stdout).emit(map[string]any{"type": "error", "message": err.Error()})
		}
		return err
	}
	if f.json {
		newJSONEvents(a.stdout).emit(map[string]any{"type": "done"})
	}
	return nil
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
