package main

import (
	"errors"
	"io"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

// trustOptions is `hush trust`.
type trustOptions struct {
	Out     io.Writer
	Config  func() (loaded, error)
	Project func() (string, error)
	// Confirm asks the person at the controlling terminal; it fails with
	// config.ErrTrustNeedsTerminal without one.
	Confirm func(question string) (bool, error)
	Revoke  bool
}

func newTrustCmd(f *app, runF func(*trustOptions) error) *cli.Command {
	if runF == nil {
		runF = runTrust
	}
	return &cli.Command{
		Name:  "trust",
		Usage: "apply this project's .hush/config.toml in full, after you review it",
		Description: "A project's .hush/config.toml can add rules, MCP servers and tool settings. Until you\n" +
			"trust it, only its deny and ask rules apply. `hush trust` shows what the file would\n" +
			"add and, after you confirm at your terminal, records the project and the file's\n" +
			"SHA-256 in trusted-projects.json in the config dir. Changing the file untrusts it.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "revoke", Usage: "stop trusting this project"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{exitUsage, errors.New("usage: hush trust [--revoke] (uses the project directory: --dir or the current one)")}
			}
			return runF(&trustOptions{Out: f.Stdout, Config: f.loadConfig, Project: f.ProjectDir, Confirm: confirmOnTerminal, Revoke: c.Bool("revoke")})
		},
	}
}

// confirmOnTerminal asks question on the controlling terminal, not stdin:
// a tool, which runs without one, cannot answer it.
func confirmOnTerminal(question string) (bool, error) {
	tty, err := wizard.ControllingTerminal()
	if err != nil {
		return false, config.ErrTrustNeedsTerminal
	}
	defer tty.Close()
	return wizard.AskTTY(tty, question), nil
}

// isLiteralCredential says an env entry is a credential written literally:
// a credential-named variable or a credential-looking value.
func isLiteralCredential(name, value string) bool {
	return tools.IsCredentialName(name) || tools.IsCredentialValue(value)
}

// runTrust shows what the project's .hush/config.toml would add and
// records trust once Confirm says yes (config.Trust); Revoke forgets it.
func runTrust(opts *trustOptions) error {
	l, err := opts.Config()
	if err != nil {
		return err
	}
	dir, err := opts.Project()
	if err != nil {
		return err
	}
	t := config.Trust{Store: config.NewTrustStore(l.Dirs.Config), Dir: dir, Out: opts.Out, IsLiteralCredential: isLiteralCredential, Confirm: opts.Confirm}
	if opts.Revoke {
		return t.Revoke()
	}
	return t.Grant()
}
