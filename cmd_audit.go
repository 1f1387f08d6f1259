package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func (a *app) auditLogCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "print the permission decisions: which tool asked for which secret, and what was decided",
		Description: "Reads audit.jsonl in the data dir. Every gate decision is there — tool runs and\n" +
			"secret reads, allowed or denied, and what decided (a rule, a prompt, the session).\n" +
			"No secret value is ever written to it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the entries as JSON lines"},
			&cli.IntFlag{Name: "last", Usage: "only the last `N` entries"},
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("last") && c.Int("last") < 1 {
				return &exitError{exitUsage, fmt.Errorf("--last %d: give a number of entries, 1 or more", c.Int("last"))}
			}
			return a.AuditLog(c.Bool("json"), c.Int("last"))
		},
	}
}
