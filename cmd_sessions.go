package main

import (
	"context"
	"errors"

	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
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
	return session.List(a.stdout, a.stderr, a.dirs.Data, dir, here)
}

// resumeRequest is --continue / --resume [ID].
type resumeRequest = session.Resume

// findSession resolves a resume request in the project dir (session.Find);
// --resume without an id asks, when there is a terminal to ask on.
func (a *app) findSession(r resumeRequest, interactive bool) (*transcript.Session, error) {
	if err := a.init(); err != nil {
		return nil, err
	}
	dir, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	var pick func([]session.Choice) (string, error)
	if interactive {
		pick = func(cs []session.Choice) (string, error) {
			var opts []wizard.SessionOption
			for _, c := range cs {
				opts = append(opts, wizard.SessionOption{ID: c.ID, Label: c.Label})
			}
			return wizard.PickSession(context.Background(), a.stdin, a.stdout, a.ambient["ACCESSIBLE"] != "", opts)
		}
	}
	s, err := session.Find(r, a.dirs.Data, dir, pick)
	switch {
	case errors.Is(err, session.ErrNeedsID):
		return nil, &exitError{exitUsage, err}
	case err != nil:
		return nil, &exitError{exitFailure, err}
	}
	return s, nil
}
