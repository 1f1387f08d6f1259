package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/ui"
)

// Run is what `hush run` needs to run one turn: where it reports, which
// session it continues and how to open the agent.
type Run struct {
	Stdout, Stderr io.Writer
	// JSON streams events (docs/events.schema.json) to Stdout instead of
	// the terminal view.
	JSON bool
	// Resume, if set, is the session to continue; Find resolves it.
	Resume Resume
	Find   func(Resume) (*transcript.Session, error)
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

// RunResult is how a run ended.
type RunResult struct {
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
func (r Run) Once(prompt string) RunResult {
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
			return RunResult{Kind: events.KindConfig, Err: err, Stream: stream}
		}
		resumed = s
	}
	agent, closeFn, err := r.Start(sink, resumed)
	if err != nil {
		return RunResult{Kind: events.KindConfig, Err: err, Stream: stream}
	}
	defer closeFn()
	var conv transcript.Conversation
	if resumed != nil {
		conv = resumed.Conversation
		if stream == nil {
			fmt.Fprintln(r.Stderr, "hush: "+ResumeNote(resumed))
		}
	}
	if stream != nil {
		info := Info(agent, r.ModelName(), r.TranscriptPath(agent.Session))
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
	ctx, stopSig, stop := NotifyStop(context.Background())
	defer stop()
	kind, err := OneTurn(ctx, agent, &conv, prompt, stream, r.Stdout, r.Stderr)
	return RunResult{Kind: kind, Err: err, Signal: stopSig.Get(), Stream: stream}
}
