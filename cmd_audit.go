package main

import (
	"fmt"
	"path/filepath"

	"github.com/hushcli/hush/executor/auditlog"
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
		Action: func(c *cli.Context) error { return a.auditLog(c.Bool("json"), c.Int("last")) },
	}
}

func (a *app) auditLog(asJSON bool, last int) error {
	if err := a.init(); err != nil {
		return err
	}
	path := filepath.Join(a.dirs.Data, auditlog.FileName)
	entries, damage, err := auditlog.Read(path)
	if err != nil {
		return err
	}
	if msg := damage.Describe(path); msg != "" {
		fmt.Fprintf(a.stderr, "hush: warning: %s\n", msg)
	}
	entries = auditlog.Last(entries, last)
	if asJSON {
		return auditlog.WriteJSON(a.stdout, entries)
	}
	return auditlog.WriteTable(a.stdout, entries, path)
}
