package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/ui"
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

// modelFlags are the flags that pick the model, shared by chat and run.
type modelFlags struct {
	provider, baseURL, model, replay string
	yes, json, plain                 bool
	allow                            []string
}

func sessionModel(f modelFlags) session.Model {
	return session.Model{Provider: f.provider, BaseURL: f.baseURL, Name: f.model, Replay: f.replay, Yes: f.yes, Allow: f.allow}
}

func readModelFlags(c *cli.Context) modelFlags {
	return modelFlags{provider: c.String("provider"), baseURL: c.String("base-url"), model: c.String("model"),
		replay: c.String("replay"), yes: c.Bool("yes"), json: c.Bool("json"), allow: c.StringSlice("allow")}
}

// runOptions is `hush run PROMPT`.
type runOptions struct {
	// In is read for the prompt "-".
	In io.Reader
	// Model is the model flags, --json and --allow among them.
	Model  modelFlags
	Prompt string
	Resume resumeRequest
	// Turn is the one turn with model m: JSON streams events, rr says
	// which session it continues (the factory's Run).
	Turn func(m session.Model, json bool, rr resumeRequest) runTurn
}

func newRunCmd(f *app, runF func(*runOptions) error) *cli.Command {
	if runF == nil {
		runF = runRun
	}
	return &cli.Command{
		Name:      "run",
		Usage:     "run one agent turn non-interactively and exit",
		ArgsUsage: "[--] PROMPT (or - to read it from stdin)",
		Description: "Runs one turn: the model answers and calls tools until it is done. Nothing is asked:\n" +
			"a gate request no rule in config.toml decides is denied, with the rule to add.\n" +
			"In CI, --allow 'bash(npm test:*)' (repeatable) allows those commands for this run.\n" +
			"With --json it prints the event stream documented in docs/events.schema.json.\n" +
			"Flags come before the prompt; a word after it written as a flag is an error. A prompt\n" +
			"that starts with - or holds such words goes after --: hush run -- \"-v prints nothing\".\n\n" +
			"Exit status: 0 done, 1 model or internal failure, 2 usage error,\n" +
			"3 the turn ended with a denied tool run or secret, 130 interrupted (Ctrl-C),\n" +
			"129 the terminal closed (SIGHUP), 143 terminated (SIGTERM): the running tool is stopped first.",
		Flags: append(modelFlagList(), &cli.BoolFlag{Name: "json", Usage: "print the event stream as JSON lines (version 1, docs/events.schema.json)"},
			&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "add this turn to the latest session of this project"}, forkFlag(), waitFlag(),
			&cli.BoolFlag{Name: "no-save", Usage: "keep no transcript of this run: it is in no session list or picker (with --continue, the session is read and left as it was)"},
			&cli.StringSliceFlag{Name: "allow", Usage: "allow a tool's calls for this run, repeatable: `TOOL(PATTERN)` such as 'bash(npm test:*)' (commands starting with those words; every part of a pipeline or && chain must match one), 'bash(make lint)' (that exact command) or a tool name ('http')"}),
		OnUsageError: func(c *cli.Context, err error, sub bool) error {
			// One line and the usage, as every command says it; with
			// --json also as the stream's error event, like every other
			// usage error of run.
			uerr := usageError(c, err, sub)
			if jsonAsked(c) {
				first, _, _ := strings.Cut(uerr.Error(), "\n")
				events.New(f.Stdout).Error(events.KindUsage, first)
			}
			return uerr
		},
		Action: func(c *cli.Context) error {
			err := runAction(c, f, runF)
			var ee *exitError
			if c.Bool("json") && errors.As(err, &ee) && ee.code == 2 {
				first, _, _ := strings.Cut(err.Error(), "\n")
				events.New(f.Stdout).Error(events.KindUsage, first)
			}
			return err
		},
	}
}

// runAction reads run's command line into its options.
func runAction(c *cli.Context, f *app, runF func(*runOptions) error) error {
	if err := promptFlagError(c); err != nil {
		return err
	}
	return runF(&runOptions{In: f.Stdin, Model: readModelFlags(c), Prompt: strings.Join(c.Args().Slice(), " "),
		Resume: resumeRequest{Continue: c.Bool("continue"), Fork: c.Bool("fork"), Wait: c.Bool("wait"), NoSave: c.Bool("no-save")},
		Turn:   f.Run})
}

// runRun runs opts.Prompt ("-": read from opts.In) as one turn
// (runTurn.Once) and ends with the exit code of how the turn ended.
func runRun(opts *runOptions) error {
	prompt := opts.Prompt
	if prompt == "-" {
		b, err := io.ReadAll(io.LimitReader(opts.In, 1<<20))
		if err != nil {
			return err
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return &exitError{exitUsage, errors.New("run needs a prompt: hush run \"what does this project do?\"")}
	}
	rr := opts.Resume
	if err := checkForkWait(rr); err != nil {
		return err
	}
	if rr.NoSave && (rr.Fork || rr.Wait) {
		return &exitError{exitUsage, errors.New("--no-save writes no session, so --fork and --wait do not go with it")}
	}
	if _, err := session.AllowRules(opts.Model.allow); err != nil {
		return &exitError{exitUsage, err}
	}
	res := opts.Turn(sessionModel(opts.Model), opts.Model.json, rr).Once(prompt)
	switch res.Kind {
	case "":
		return nil
	case events.KindInterrupted:
		return runFailed(res.Stream, res.Kind, signalExit(res.Signal))
	case events.KindDenied:
		return runFailed(res.Stream, res.Kind, &exitError{exitDenied, res.Err})
	}
	return runFailed(res.Stream, res.Kind, res.Err)
}

// runFailed reports err as the stream's last event (if there is a stream)
// and returns it with the exit code its kind has (docs/events.schema.json).
func runFailed(stream *events.Writer, kind string, err error) error {
	ee := asExit(err)
	if ee.code == exitInterrupted || ee.code == exitTerminated || ee.code == exitHangup {
		kind = events.KindInterrupted
	}
	if stream != nil {
		stream.Error(kind, err.Error())
	}
	return ee
}

// jsonAsked reports whether run's command line has --json where a flag
// that failed to parse leaves no flag set to ask: the parent context still
// holds the words.
func jsonAsked(c *cli.Context) bool {
	lineage := c.Lineage()
	if len(lineage) < 2 {
		return false
	}
	for _, arg := range lineage[1].Args().Slice() {
		switch arg {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// Run is what `hush run` needs to run one turn: where it reports, which
// session it continues and how to open the agent.
type runTurn struct {
	Stdout, Stderr io.Writer
	// JSON streams events (docs/events.schema.json) to Stdout instead of
	// the terminal view.
	JSON bool
	// Resume, if set, is the session to continue; Find resolves it.
	Resume session.Resume
	Find   func(session.Resume) (*transcript.Session, error)
	// Start opens the agent with the event sink, continuing resumed if set;
	// the returned func closes it.
	Start func(events executor.Events, resumed *transcript.Session) (*executor.Agent, func(), error)
	// ModelName and TranscriptPath name the model and the transcript file
	// in session.started; they are asked once Start returned.
	ModelName      func() string
	TranscriptPath func(id string) string
	// Redact scrubs the vault's values from the prompt: a run sends the
	// redacted form, and says so on Stderr.
	Redact func(string) string
}

// runResult is how a run ended.
type runResult struct {
	// Kind is "" when the turn succeeded, else the event kind of the
	// failure: events.KindConfig when no session started.
	Kind string
	Err  error
	// Signal is the stop signal that interrupted the turn, if one did.
	Signal os.Signal
	// Stream is the event stream (nil without JSON): the caller reports
	// the failure as its last event.
	Stream *events.Writer
}

// Once runs prompt as one turn; a stop signal ends it as Ctrl-C does.
func (r runTurn) Once(prompt string) runResult {
	var sink executor.Events
	var stream *events.Writer
	if r.JSON {
		stream = events.New(r.Stdout)
		sink = stream
	} else {
		term := ui.NewRunView(r.Stdout)
		// A one-shot run is read afterwards (often in CI logs): show more.
		term.PreviewLines = 60
		sink = term
	}
	var resumed *transcript.Session
	if r.Resume.Any() {
		s, err := r.Find(r.Resume)
		if err != nil {
			return runResult{Kind: events.KindConfig, Err: err, Stream: stream}
		}
		resumed = s
	}
	agent, closeFn, err := r.Start(sink, resumed)
	if err != nil {
		return runResult{Kind: events.KindConfig, Err: err, Stream: stream}
	}
	defer closeFn()
	var conv transcript.Conversation
	if resumed != nil {
		conv = resumed.Conversation
		if stream == nil {
			fmt.Fprintln(r.Stderr, "hush: "+session.ResumeNote(resumed))
		}
	}
	if stream != nil {
		info := session.Info(agent, r.ModelName(), r.TranscriptPath(agent.Session))
		if resumed != nil {
			info.Resumed, info.Turns = true, resumed.Completed
		}
		stream.SessionStarted(info)
	}
	if r.Redact != nil {
		red := r.Redact(prompt)
		if names := redact.Names(prompt, red); len(names) > 0 {
			fmt.Fprintf(r.Stderr, "hush: the prompt contains the value of %s; it was sent as %s instead\n",
				strings.Join(names, ", "), redact.Placeholders(names))
			prompt = red
		}
	}
	ctx, stopSig, stop := session.NotifyStop(context.Background())
	defer stop()
	kind, err := session.OneTurn(ctx, agent, &conv, prompt, stream, r.Stdout, r.Stderr)
	return runResult{Kind: kind, Err: err, Signal: stopSig.Get(), Stream: stream}
}
