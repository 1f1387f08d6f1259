package main

import (
	"errors"
	"io"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/vault"
	"github.com/urfave/cli/v2"
)

// sessionsListOptions is `hush sessions list`.
type sessionsListOptions struct {
	Out, Err io.Writer
	Config   func() (loaded, error)
	Project  func() (string, error)
	// Redact scrubs first prompts (a transcript written before hush
	// redacted prompts may hold a secret) with the vault's values once
	// Vault opened it, else the start-up environment's credentials.
	Vault  func() (*vault.Layered, error)
	Redact func(string) string
	// Here lists only the current project's sessions.
	Here bool
}

func newSessionsCmd(a *app) *cli.Command {
	list := newSessionsListCmd(a, nil)
	return &cli.Command{
		Name:        "sessions",
		Usage:       "list the sessions hush kept (transcripts in the data dir)",
		Subcommands: []*cli.Command{list},
		Action:      func(c *cli.Context) error { return runSessionsList(sessionsListOpts(a, false)) },
	}
}

func sessionsListOpts(f *app, here bool) *sessionsListOptions {
	return &sessionsListOptions{Out: f.Stdout, Err: f.Stderr, Config: f.loadConfig, Project: f.ProjectDir, Vault: f.Vault, Redact: f.Redact, Here: here}
}

func newSessionsListCmd(f *app, runF func(*sessionsListOptions) error) *cli.Command {
	if runF == nil {
		runF = runSessionsList
	}
	return &cli.Command{
		Name:  "list",
		Usage: "show each session's id, project, start, last activity, turns and first prompt, most recently active first",
		Description: "Resume one with `hush chat --resume ID` (in its project), or the latest of the\n" +
			"current project with `hush chat --continue` / `hush run --continue PROMPT`.",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "here", Usage: "only sessions of the current project"}},
		Action: func(c *cli.Context) error { return runF(sessionsListOpts(f, c.Bool("here"))) },
	}
}

// runSessionsList prints the sessions of the data dir (session.List).
func runSessionsList(opts *sessionsListOptions) error {
	l, err := opts.Config()
	if err != nil {
		return err
	}
	dir, err := opts.Project()
	if err != nil {
		return err
	}
	// A vault that does not open leaves the start-up environment's
	// credentials to redact with.
	_, _ = opts.Vault()
	return session.List(opts.Out, opts.Err, l.Dirs.Data, dir, opts.Here, opts.Redact)
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
