package main

import (
	"errors"

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
			return a.Trust(c.Bool("revoke"))
		},
	}
}
