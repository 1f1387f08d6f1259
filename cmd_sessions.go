package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

func (a *app) sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list the sessions hush kept (transcripts in the data dir)",
		Subcommands: []*cli.Command{{
			Name:  "list",
			Usage: "show each session's id, project, start, turns and first prompt, most recent first",
			Description: "Resume one with `hush chat --resume ID` (in its project), or the latest of the\n" +
				"current project with `hush chat --continue` / `hush run --continue PROMPT`.",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "here", Usage: "only sessions of the current project"}},
			Action: func(c *cli.Context) error {
				return a.listSessions(c.Bool("here"))
			},
		}},
		Action: func(c *cli.Context) error { return a.listSessions(false) },
	}
}

func (a *app) listSessions(here bool) error {
	if err := a.init(); err != nil {
		return err
	}
	dir, err := a.projectDir()
	if err != nil {
		return err
	}
	all, skipped, err := transcript.List(a.dirs.Data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROJECT\tSTARTED\tTURNS\tFIRST PROMPT")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, outbuf.Sanitize(project), s.Started.Local().Format("2006-01-02 15:04"),
			s.Completed, oneLine(s.FirstPrompt, 60))
		shown++
	}
	if shown == 0 {
		fmt.Fprintln(a.stdout, "No sessions yet: each `hush chat` and `hush run` keeps one.")
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range skipped {
		fmt.Fprintf(a.stderr, "hush: skipped %s\n", e)
	}
	return nil
}

// oneLine shortens s to one sanitized line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(outbuf.Sanitize(s)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// resumeRequest is --continue / --resume [ID].
type resumeRequest struct {
	cont   bool
	resume bool
	id     string
}

func (r resumeRequest) any() bool { return r.cont || r.resume }

// findSession resolves a resume request in the project dir: --continue is
// the latest session of this project; --resume ID one of this project's;
// --resume without an id asks, when there is a terminal to ask on.
func (a *app) findSession(r resumeRequest, interactive bool) (*transcript.Session, error) {
	if err := a.init(); err != nil {
		return nil, err
	}
	dir, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	if r.cont {
		s, err := transcript.Latest(a.dirs.Data, dir)
		if err != nil {
			return nil, &exitError{exitFailure, fmt.Errorf("nothing to continue: %w", err)}
		}
		return s, nil
	}
	id := r.id
	if id == "" {
		if !interactive {
			return nil, &exitError{exitUsage, errors.New("--resume needs a session id when there is no terminal to pick one: hush chat --resume ID (hush sessions list shows them)")}
		}
		all, _, err := transcript.List(a.dirs.Data)
		if err != nil {
			return nil, err
		}
		var opts []wizard.SessionOption
		for _, s := range all {
			if s.Project == dir && s.Completed > 0 {
				opts = append(opts, wizard.SessionOption{ID: s.ID, Label: fmt.Sprintf("%s  %s  %d turn(s)  %s",
					s.ID, s.Last.Local().Format("2006-01-02 15:04"), s.Completed, oneLine(s.FirstPrompt, 60))})
			}
		}
		if len(opts) == 0 {
			return nil, &exitError{exitFailure, fmt.Errorf("no session to resume in %s (hush sessions list shows every project's)", dir)}
		}
		id, err = wizard.PickSession(context.Background(), a.stdin, a.stdout, a.ambient["ACCESSIBLE"] != "", opts)
		if err != nil {
			return nil, err
		}
	}
	s, err := transcript.Find(a.dirs.Data, id)
	if err != nil {
		return nil, &exitError{exitFailure, err}
	}
	if s.Project != "" && s.Project != dir {
		return nil, &exitError{exitFailure, fmt.Errorf("session %s belongs to the project %s, not %s: resume it there (hush --dir %s chat --resume %s)",
			s.ID, outbuf.Sanitize(s.Project), dir, outbuf.Sanitize(s.Project), s.ID)}
	}
	return s, nil
}

// resumeNote says what resuming restored.
func resumeNote(s *transcript.Session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Resumed session %s (started %s): %d turn(s) and %d tool call(s) restored as stored, secrets redacted.",
		s.ID, s.Started.Local().Format(time.DateTime), s.Completed, s.ToolCalls())
	if s.Summary != "" {
		r := turnRange(s.SummaryThrough)
		fmt.Fprintf(&b, " %s a summary the model made when the session was compacted.", strings.ToUpper(r[:1])+r[1:])
	}
	if s.Incomplete > 0 {
		fmt.Fprintf(&b, " %d turn(s) that did not finish are left out.", s.Incomplete)
	}
	return b.String()
}
