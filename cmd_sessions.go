package main

import (
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

// resumeRequest is --continue / --resume [ID].
type resumeRequest = session.Resume
