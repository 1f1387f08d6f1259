package main

import (
	"errors"

	"github.com/hushcli/hush/session"
	"github.com/urfave/cli/v2"
)

func (a *app) sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list the sessions hush kept (transcripts in the data dir)",
		Subcommands: []*cli.Command{{
			Name:  "list",
			Usage: "show each session's id, project, start, last activity, turns and first prompt, most recently active first",
			Description: "Resume one with `hush chat --resume ID` (in its project), or the latest of the\n" +
				"current project with `hush chat --continue` / `hush run --continue PROMPT`.",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "here", Usage: "only sessions of the current project"}},
			Action: func(c *cli.Context) error {
				return a.ListSessions(c.Bool("here"))
			},
		}},
		Action: func(c *cli.Context) error { return a.ListSessions(false) },
	}
}

// resumeRequest is --continue / --resume [ID], --fork, --wait.
type resumeRequest = session.Resume

// forkFlag and waitFlag say what to do when the session to resume is open
// in another hush; chat and run take both.
func forkFlag() cli.Flag {
	return &cli.BoolFlag{Name: "fork", Usage: "with --continue or --resume: continue a copy of the session as a new one (its original stays as it is)", DisableDefaultText: true}
}

func waitFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wait", Usage: "with --continue or --resume: wait until another hush that has the session open closes it", DisableDefaultText: true}
}

// checkForkWait refuses --fork and --wait where they mean nothing.
func checkForkWait(rr resumeRequest) error {
	switch {
	case rr.Fork && rr.Wait:
		return &exitError{exitUsage, errors.New("--fork and --wait are two answers to a session open elsewhere: use one")}
	case (rr.Fork || rr.Wait) && !rr.Any():
		return &exitError{exitUsage, errors.New("--fork and --wait go with --continue or --resume")}
	}
	return nil
}
