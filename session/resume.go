package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools/sandbox"
)

// Sessions kept in the data dir: `hush sessions list`, --continue,
// --resume, and chat's /resume and /compact.

// List prints the sessions kept in dataDir (only those of the project dir
// when here), the most recently active first, to w, each first prompt
// passed through redact; unreadable transcripts (and entries that are not
// regular files) are named on errW, one line each.
func List(w, errW io.Writer, dataDir, dir string, here bool, redact func(string) string) error {
	all, skipped, err := transcript.List(dataDir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROJECT\tSTARTED\tLAST ACTIVE\tTURNS\tFIRST PROMPT")
	shown := 0
	for _, s := range all {
		if s.Completed == 0 && s.Incomplete == 0 {
			continue // a session that never got a prompt
		}
		if here && s.Project != dir {
			continue
		}
		project := s.Project
		if project == "" {
			project = "?"
		}
		const minute = "2006-01-02 15:04"
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.ID, outbuf.Sanitize(project), s.Started.Local().Format(minute),
			s.Last.Local().Format(minute), s.Completed, OneLine(redact(s.FirstPrompt), 60))
		shown++
	}
	for _, e := range skipped {
		fmt.Fprintf(errW, "hush: skipped %s\n", e)
	}
	if shown == 0 {
		fmt.Fprintln(w, "No sessions yet: each `hush chat` and `hush run` keeps one.")
		return nil
	}
	return tw.Flush()
}

// OneLine shortens s to one sanitized line of at most n runes.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(outbuf.Sanitize(s)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Resume is --continue / --resume [ID], with --fork or --wait for a
// session another hush has open.
type Resume struct {
	Continue bool
	Resume   bool
	ID       string
	// Fork continues a copy of the session as a new one; Wait waits until
	// the other hush closes it.
	Fork, Wait bool
	// NoSave keeps no transcript (hush run --no-save): nothing of the
	// session is written to the data dir's transcripts, so it is in no
	// list or picker; a resumed session is read and left as it was.
	NoSave bool
}

// Any reports whether a session is to be resumed.
func (r Resume) Any() bool { return r.Continue || r.Resume }

// ErrNeedsID is Find's answer to --resume without an id and no picker.
var ErrNeedsID = errors.New("--resume needs a session id when there is no terminal to pick one: hush chat --resume ID (hush sessions list shows them)")

// Choice is a session a picker offers.
type Choice struct{ ID, Label string }

// Find resolves r in the project dir: --continue is the latest session of
// this project; --resume ID one of this project's; --resume without an id
// asks pick (nil: ErrNeedsID), whose labels' prompts pass redact.
func Find(r Resume, dataDir, dir string, pick func([]Choice) (string, error), redact func(string) string) (*transcript.Session, error) {
	if r.Continue {
		s, err := transcript.Latest(dataDir, dir)
		if err != nil {
			return nil, fmt.Errorf("nothing to continue: %w", err)
		}
		return s, nil
	}
	id := r.ID
	if id == "" {
		if pick == nil {
			return nil, ErrNeedsID
		}
		all, _, err := transcript.List(dataDir)
		if err != nil {
			return nil, err
		}
		var opts []Choice
		for _, s := range all {
			if s.Project == dir && s.Completed+s.Incomplete > 0 {
				opts = append(opts, Choice{ID: s.ID, Label: fmt.Sprintf("%s  %s  %d turn(s)  %s",
					s.ID, s.Last.Local().Format("2006-01-02 15:04"), s.Completed, OneLine(redact(s.FirstPrompt), 60))})
			}
		}
		if len(opts) == 0 {
			return nil, fmt.Errorf("no session to resume in %s (hush sessions list shows every project's)", dir)
		}
		if id, err = pick(opts); err != nil {
			return nil, err
		}
	}
	s, err := transcript.Find(dataDir, id)
	if err != nil {
		return nil, err
	}
	if s.Project != "" && s.Project != dir {
		return nil, fmt.Errorf("session %s belongs to the project %s, not %s: resume it there (hush --dir %s chat --resume %s)",
			s.ID, outbuf.Sanitize(s.Project), dir, outbuf.Sanitize(s.Project), s.ID)
	}
	return s, nil
}

// ResumeNote says what resuming s restored.
func ResumeNote(s *transcript.Session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Resumed session %s (started %s): %d turn(s) and %d tool call(s) restored as stored, secrets redacted.",
		s.ID, s.Started.Local().Format(time.DateTime), s.Completed, s.ToolCalls())
	if s.Summary != "" {
		r := turnRange(s.SummaryThrough)
		fmt.Fprintf(&b, " %s a summary the model made when the session was compacted.", strings.ToUpper(r[:1])+r[1:])
	}
	if s.Incomplete > 0 {
		fmt.Fprintf(&b, " %d turn(s) that did not finish are restored as far as they were saved.", s.Incomplete)
	}
	return b.String()
}

// CompactNote says what a compaction did.
func CompactNote(c executor.Compacted) string {
	return fmt.Sprintf("Compacted: %s now a summary made by the model (stored in the transcript); the last %d turn(s) stay verbatim.", turnRange(c.Through), c.Kept)
}

// turnRange names turns 1..n.
func turnRange(n int) string {
	if n == 1 {
		return "turn 1 is"
	}
	return fmt.Sprintf("turns 1–%d are", n)
}

// Command runs chat's /compact [N] and /resume [ID] on agent and conv,
// printing to out; find resolves a /resume (Find with the chat's picker).
func Command(ctx context.Context, out io.Writer, agent *executor.Agent, conv *transcript.Conversation, cmd, arg string, find func(id string) (*transcript.Session, error)) {
	switch cmd {
	case "/compact":
		keep := 0
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 {
				fmt.Fprintf(out, "hush: /compact takes the number of latest turns to keep verbatim, e.g. /compact 2 (got %q)\n", arg)
				return
			}
			keep = n
		}
		c, err := agent.Compact(ctx, conv, keep)
		if err != nil {
			fmt.Fprintf(out, "hush: %s\n", err)
			return
		}
		fmt.Fprintln(out, CompactNote(c))
		fmt.Fprintln(out, "  │ "+strings.ReplaceAll(outbuf.Sanitize(c.Summary), "\n", "\n  │ "))
	case "/resume":
		s, err := find(arg)
		if err != nil {
			fmt.Fprintf(out, "hush: %s\n", err)
			return
		}
		if s.ID == agent.Session {
			fmt.Fprintf(out, "hush: session %s is the one this chat is in\n", s.ID)
			return
		}
		f, err := transcript.Reopen(ctx, s, transcript.NoWait)
		if err != nil {
			fmt.Fprintf(out, "hush: %s\n", err)
			return
		}
		old := agent.SwitchSession(s.ID, f, s.LastTurn)
		if c, ok := old.(io.Closer); ok {
			_ = c.Close()
		}
		*conv = s.Conversation
		fmt.Fprintln(out, ResumeNote(s))
	}
}

// Info is `hush run --json`'s session.started for agent: model is the
// model's name, transcript the transcript's path.
func Info(agent *executor.Agent, model, transcript string) events.Session {
	var names []string
	for _, t := range agent.Tools.List() {
		names = append(names, t.Name())
	}
	sb := events.Sandbox{State: "off", Detail: "host tools run in their own session and process group, without namespaces"}
	if st := sandbox.Status(); st.Namespaces {
		sb = events.Sandbox{State: "namespaces", Detail: fmt.Sprintf("own user, PID and mount namespaces per host tool; Landlock ABI %d", st.LandlockABI)}
	} else if st.Reason != "" {
		sb.Detail = st.Reason
	}
	return events.Session{
		ID:         agent.Session,
		Model:      events.Model{Provider: agent.Provider.Name(), Name: model},
		Directory:  agent.Dir,
		Sandbox:    sb,
		Tools:      names,
		Transcript: transcript,
	}
}

// OneTurn is `hush run`'s turn on agent: compact conv first when it is
// near the context window, run prompt, and classify how it ended as an
// events kind ("" when it succeeded). With stream nil, the compaction note
// goes to notes and a newline ends the turn's text on out. An interrupted
// turn is events.KindInterrupted with a nil error (the caller knows the
// signal).
func OneTurn(ctx context.Context, agent *executor.Agent, conv *transcript.Conversation, prompt string, stream *events.Writer, out, notes io.Writer) (string, error) {
	if agent.NeedsCompaction(conv, 0) {
		c, err := agent.Compact(ctx, conv, 0)
		if err != nil {
			return events.KindModel, err
		}
		if stream != nil {
			stream.Compacted(c.Through, c.Summarized, c.Kept, c.Summary)
		} else {
			fmt.Fprintln(notes, "hush: "+CompactNote(c))
		}
	}
	res, err := agent.RunTurn(ctx, conv.Messages(), strings.TrimSpace(prompt))
	if stream == nil {
		fmt.Fprintln(out)
	}
	switch {
	case ctx.Err() != nil:
		return events.KindInterrupted, nil
	case errors.Is(err, executor.ErrModel):
		return events.KindModel, err
	case errors.Is(err, executor.ErrMaxSteps):
		return events.KindMaxSteps, err
	case err != nil:
		return events.KindInternal, err
	case len(res.Denied) > 0:
		return events.KindDenied, fmt.Errorf("the turn ended with %d denied request(s) (%s); "+
			"the tool result says which rule in config.toml would allow each", len(res.Denied), strings.Join(res.Denied, ", "))
	case len(agent.StartDenied) > 0:
		return events.KindDenied, fmt.Errorf("the session started without %d of its MCP servers: %s", len(agent.StartDenied), strings.Join(agent.StartDenied, "; "))
	}
	if f, ok := agent.Transcript.(interface{ Failed() error }); ok && f.Failed() != nil {
		return events.KindStorage, f.Failed()
	}
	return "", nil
}
