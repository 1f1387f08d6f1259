package main

import (
	"errors"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/urfave/cli/v2"
)

func (a *app) trustCommand() *cli.Command {
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
			return a.trustProject(c.Bool("revoke"))
		},
	}
}

func (a *app) trustProject(revoke bool) error {
	if err := a.init(); err != nil {
		return err
	}
	dir, err := a.projectDir()
	if err != nil {
		return err
	}
	t := config.Trust{Store: config.NewTrustStore(a.dirs.Config), Dir: dir, Out: a.stdout, IsLiteralCredential: isLiteralCredential,
		Confirm: func(question string) (bool, error) {
			tty, err := controllingTerminal()
			if err != nil {
				return false, &exitError{exitFailure, config.ErrTrustNeedsTerminal}
			}
			defer tty.Close()
			return askTTY(tty, question), nil
		}}
	if revoke {
		return t.Revoke()
	}
	return t.Grant()
}

// isLiteralCredential: a credential-named variable or a credential-looking value.
func isLiteralCredential(name, value string) bool {
	return tools.IsCredentialName(name) || tools.IsCredentialValue(value)
}

// describeProject lists what a project config would add (config.DescribeProject).
func describeProject(c config.Config) []string { return config.DescribeProject(c, isLiteralCredential) }
